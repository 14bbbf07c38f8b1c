import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ACCOUNT_ORDERS, ACCOUNT_STATUSES, MAX_PAGE, type Operator } from '../../operator.ts';
import { ERROR_TEXT } from '../validation.ts';
import { Limit, Skip } from '../gateway/paging.ts';
import { LISTING_DOCS } from './docs.ts';
import { Nullable, RouteSchema } from './schemas.ts';

/*
 * The operator's lists (accounts, an account's keys, routes, an account's
 * routes) and account (de)activation: docs/operator.md. Registered inside
 * the operator API plugin, so its token check and `{ error }` answers apply.
 */

const AccountId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Account id' }) });

/** One of `values`, with one line naming them when it is not. */
const OneOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(
    Type.Unsafe<T>({
      anyOf: values.map((v) => Type.Literal(v)),
      [ERROR_TEXT]: `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`,
      description,
    }),
  );

/**
 * A query string of these parameters only: a misspelt one (`?stauts=…`)
 * is a 400 naming it, not a list silently unfiltered.
 */
const Query = <P extends Record<string, TSchema>>(properties: P) => {
  const names = Object.keys(properties).join(', ');
  return Type.Object(properties, {
    additionalProperties: { anyOf: [Type.Never()], [ERROR_TEXT]: `is not a parameter of this list (${names})` } as unknown as TSchema,
  });
};

const PageQuery = Query({ skip: Skip(), limit: Limit(MAX_PAGE) });
const AccountQuery = Query({
  skip: Skip(),
  limit: Limit(MAX_PAGE),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Part of the name, in any case' })),
  status: OneOf(ACCOUNT_STATUSES, 'active: keys accepted; deactivated; all (default)'),
  order: OneOf(ACCOUNT_ORDERS, 'newest: latest created first (default); id: ascending id'),
});

const Account = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  role: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('RESELLER')]),
  timezone: Type.String({ description: 'IANA time zone of the account' }),
  balance: Type.Number({ description: 'In currency units, at most 6 decimals' }),
  active: Type.Boolean({ description: "false: deactivated, its keys (and its child users' keys) are refused" }),
});
const ListedAccount = Type.Object({
  ...Account.properties,
  parentId: Nullable(Type.Integer({ description: "The reseller's account id for a child user; null otherwise" })),
  createdAt: Type.String({ format: 'date-time' }),
  deactivatedAt: Nullable(Type.String({ format: 'date-time', description: 'When it was deactivated; null while active' })),
});
const Key = Type.Object({
  id: Type.Integer(),
  hint: Nullable(Type.String({ description: "The key's last 4 characters; null for keys issued before the gateway kept them" })),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Nullable(Type.String({ format: 'date-time' })),
  allowedIps: Nullable(Type.Array(Type.String(), { description: 'Addresses or CIDR ranges the key may be used from; null: any' })),
});
const Page = <T extends TSchema>(item: T) =>
  Type.Object({ records: Type.Array(item), total: Type.Integer({ description: 'Records matching, over all pages' }) });

const PAGING = `Paged: \`skip\` (default 0), \`limit\` (1 to ${MAX_PAGE}, default 100); \`total\` counts every match. A parameter the list does not take is a 400.`;

export function listingRoutes(app: FastifyInstance, ops: Operator): void {
  const paging = (q: { skip?: number | undefined; limit?: number | undefined }) => ({ skip: q.skip, limit: q.limit });

  app.get<{ Querystring: Static<typeof AccountQuery> }>(
    '/accounts',
    {
      schema: {
        ...LISTING_DOCS.listAccounts,
        summary: 'List accounts',
        description: `Accounts with their balance and whether they are active, newest first (\`order=id\`: by id). \`name\` keeps those whose
name contains it, in any case; \`status\` those \`active\` or \`deactivated\` (default \`all\`). ${PAGING}`,
        querystring: AccountQuery,
        response: { 200: Page(ListedAccount) },
      },
    },
    async (request) => ops.listAccounts({ ...paging(request.query), name: request.query.name, status: request.query.status, order: request.query.order }),
  );
  app.get<{ Params: Static<typeof AccountId>; Querystring: Static<typeof PageQuery> }>(
    '/accounts/:id/keys',
    {
      schema: {
        ...LISTING_DOCS.listKeys,
        summary: "List an account's API keys",
        description: `Every key of the account, revoked ones too, oldest first: its id, its last 4 characters, when it was issued and
revoked, and its IP allow-list. The key itself is never shown (the gateway keeps only its hash). ${PAGING}`,
        params: AccountId,
        querystring: PageQuery,
        response: { 200: Page(Key) },
      },
    },
    async (request) => ops.listKeys(request.params.id, paging(request.query)),
  );
  app.get<{ Querystring: Static<typeof PageQuery> }>(
    '/routes',
    {
      schema: {
        ...LISTING_DOCS.listRoutes,
        summary: 'List routes',
        description: `Every route by id: what accounts see (name, product, prices), its channel, its carrier connection and its SMS fallback. ${PAGING}`,
        querystring: PageQuery,
        response: { 200: Page(RouteSchema) },
      },
    },
    async (request) => ops.listRoutes(paging(request.query)),
  );
  app.get<{ Params: Static<typeof AccountId>; Querystring: Static<typeof PageQuery> }>(
    '/accounts/:id/routes',
    {
      schema: {
        ...LISTING_DOCS.listAccountRoutes,
        summary: 'List the routes granted to an account',
        description: `The routes the account may send through, by id. ${PAGING}`,
        params: AccountId,
        querystring: PageQuery,
        response: { 200: Page(RouteSchema) },
      },
    },
    async (request) => ops.listAccountRoutes(request.params.id, paging(request.query)),
  );
  app.post<{ Params: Static<typeof AccountId> }>(
    '/accounts/:id/deactivate',
    {
      schema: {
        ...LISTING_DOCS.deactivate,
        summary: 'Deactivate an account',
        description: `The account's API keys, and those of its child users when it is a reseller, are refused (401, as a revoked key is)
on the Gateway and Legacy v2 interfaces: at once in this process, within a second in other gateway processes on the database.
What it had already accepted is still sent. The operator API still manages it. Deactivating it again changes nothing.`,
        params: AccountId,
        response: { 200: Account },
      },
    },
    async (request) => ops.setAccountActive(request.params.id, false),
  );
  app.post<{ Params: Static<typeof AccountId> }>(
    '/accounts/:id/activate',
    {
      schema: {
        ...LISTING_DOCS.activate,
        summary: 'Reactivate an account',
        description:
          'Its keys that are not revoked are accepted again (at once here, within a second elsewhere). Activating an active account changes nothing.',
        params: AccountId,
        response: { 200: Account },
      },
    },
    async (request) => ops.setAccountActive(request.params.id, true),
  );
}
