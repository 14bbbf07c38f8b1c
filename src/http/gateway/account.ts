import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { listContactGroups } from '../../contacts/groups.ts';
import { listAccountRoutes, publicRoute } from '../../routing/routes.ts';
import { getBalance } from '../../billing/ledger.ts';
import { fromMicros } from '../../billing/money.ts';
import { ApiKeyHeader } from './schemas.ts';
import { Envelope, ErrorEnvelope, ok } from './envelope.ts';

/** Spec 2.4. */
const ContactGroup = Type.Object({ id: Type.Integer(), name: Type.String(), createdAt: Type.String(), validContacts: Type.Integer() });

/** Spec 2.3. */
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
        tags: ['Contacts'],
        summary: 'Contact groups of the account',
        headers: ApiKeyHeader,
        response: { 200: Envelope(Type.Array(ContactGroup)), 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const groups = await listContactGroups(db, request.principal.accountId);
      return ok(groups, null, groups.length);
    },
  );

  app.get(
    '/routes',
    {
      schema: {
        tags: ['Routes'],
        summary: 'Routes available to the account',
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
    { schema: { tags: ['Balance'], summary: 'Current balance of the account', headers: ApiKeyHeader, response: { 200: BalanceEnvelope, 401: ErrorEnvelope } } },
    async (request) => {
      const balance = await getBalance(db, request.principal.accountId);
      return { ...ok({ balance: fromMicros(balance) }), o: null };
    },
  );
}
