import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { listContactGroups } from '../../contacts/groups.ts';
import { listAccountRoutes, publicRoute } from '../../routing/routes.ts';
import { getBalance } from '../../billing/ledger.ts';
import { fromMicros } from '../../billing/money.ts';
import { ApiKeyHeader } from './schemas.ts';
import { Envelope, ErrorEnvelope, ok } from './envelope.ts';
import { gatewayDoc } from './docs.ts';

/** A contact group with its count of valid contacts. */
const ContactGroup = Type.Object({ id: Type.Integer(), name: Type.String(), createdAt: Type.String(), validContacts: Type.Integer() });

/** A route the account may send through, with its prices. */
const Route = Type.Object({
  id: Type.Integer(),
  displayName: Type.String(),
  farePrice: Type.Number(),
  productName: Type.String(),
  productId: Type.Integer(),
  replyFarePrice: Type.Number(),
});

const BalanceEnvelope = Type.Intersect([Envelope(Type.Object({ balance: Type.Number() })), Type.Object({ o: Type.Null() })]);

export async function accountRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;

  app.get(
    '/contacts',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listContactGroups',
          tags: ['Contacts'],
          summary: 'Contact groups of the account',
          description: `Every contact group of the account with its count of valid contacts. Send to a group with \`contactGroups: [id]\`
on the send operations. Groups are created by the operator (or through the Legacy v2 \`/api/v2/contactgroup\`).`,
          success: {
            description: 'The groups, oldest first; `totalRecords` is their number.',
            object: [{ id: 3, name: 'Clientes', createdAt: '2026-11-02T13:15:00.000Z', validContacts: 1250 }],
            totalRecords: 1,
          },
          errors: {},
        }),
        headers: ApiKeyHeader,
        response: { 200: Envelope(Type.Array(ContactGroup)), 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const groups = await core.db.report(request.principal.accountId, (reports) => listContactGroups(reports, request.principal.accountId));
      return ok(groups, null, groups.length);
    },
  );

  app.get(
    '/routes',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listRoutes',
          tags: ['Routes'],
          summary: 'Routes available to the account',
          description: `The routes the account may send through, with their price per SMS part or RCS send (\`farePrice\`) and per reply
received (\`replyFarePrice\`), in the unit of the balance. Pass a route's \`id\` as \`route\` on a send; without it the
account's first route of the channel is used.`,
          success: {
            description: 'The routes granted to the account; `totalRecords` is their number.',
            object: [{ id: 1, displayName: 'Claro SMS', farePrice: 0.065, productName: 'SMS', productId: 1, replyFarePrice: 0.01 }],
            totalRecords: 1,
          },
          errors: {},
        }),
        headers: ApiKeyHeader,
        response: { 200: Envelope(Type.Array(Route)), 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const routes = (await listAccountRoutes(db, request.principal.accountId)).map(publicRoute);
      return ok(routes, null, routes.length);
    },
  );

  app.get(
    '/balance',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'getBalance',
          tags: ['Balance'],
          summary: 'Current balance of the account',
          description: `The balance in currency units (at most 6 decimals): sends debit it when accepted, refunds (cancelled, carrier-rejected)
credit it back, replies are charged as they arrive. The answer carries an extra \`o\` field, always null, that the published
integrations expect.`,
          success: { description: 'The balance.', object: { balance: 99.95 }, extra: { o: null } },
          errors: {},
        }),
        headers: ApiKeyHeader,
        response: { 200: BalanceEnvelope, 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const balance = await getBalance(db, request.principal.accountId);
      return { ...ok({ balance: fromMicros(balance) }), o: null };
    },
  );
}
