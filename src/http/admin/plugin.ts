import { Type, type Static } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { DomainError } from '../../common/errors.ts';
import { describeValidation, ERROR_TEXT } from '../validation.ts';
import { clientErrorText, STATUS } from '../gateway/envelope.ts';
import { operator } from '../../operator.ts';
import { listingRoutes } from './listing.ts';
import { smppRoutes } from './smpp.ts';
import { OPERATOR_DOCS as DOCS } from './docs.ts';
import { operatorTokenCheck, type AdminToken } from '../operator-token.ts';
import { STORAGE_RETRY_AFTER_S, storageFault } from '../../db/faults.ts';
import type { PanelSessions } from '../panel/sessions.ts';
import { panelUserAdminRoutes } from '../panel/admin-routes.ts';

const Money = Type.Union([Type.Number(), Type.String({ pattern: '^-?\\d+(\\.\\d+)?$' })]);
// Ids beyond the safe range would overflow PostgreSQL bigint (a 500); they match nothing, so they are refused.
const IdValue = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Id = Type.Object({ id: IdValue });
/** An RCS route's SMS fallback route (src/rcs/fallback.ts); null = none. */
const FallbackId = Type.Union([IdValue, Type.Null()], { [ERROR_TEXT]: 'must be a route id (a positive integer) or null' });

const AccountBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.Optional(Type.Union([Type.Literal('CUSTOMER'), Type.Literal('RESELLER')])),
    timezone: Type.Optional(Type.String()),
    balance: Type.Optional(Money),
  },
  { required: ['name'] },
);
const KeyBody = Type.Object({ allowedIps: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) });
const CreditsBody = Type.Object({ amount: Money, reason: Type.Optional(Type.String({ maxLength: 200 })) }, { required: ['amount'] });
const RouteBody = Type.Object(
  {
    displayName: Type.String({ minLength: 1, maxLength: 200 }),
    productName: Type.String({ minLength: 1, maxLength: 200 }),
    productId: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    farePrice: Money,
    replyFarePrice: Money,
    channel: Type.Union([Type.Literal('SMS'), Type.Literal('RCS')]),
    connector: Type.String({ minLength: 1 }),
    fallbackRouteId: Type.Optional(FallbackId),
  },
  { required: ['displayName', 'productName', 'productId', 'farePrice', 'replyFarePrice', 'channel', 'connector'] },
);
const FallbackBody = Type.Object({ fallbackRouteId: FallbackId }, { required: ['fallbackRouteId'], additionalProperties: false });
const LegBody = Type.Object(
  {
    connector: Type.String({ minLength: 1, maxLength: 200 }),
    prefixes: Type.Optional(Type.Array(Type.String({ pattern: '^\\d{1,15}$', [ERROR_TEXT]: 'must be 1 to 15 digits' }), { maxItems: 500 })),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { required: ['connector'], additionalProperties: false },
);
const LegsBody = Type.Object({ legs: Type.Array(LegBody, { maxItems: 50 }) }, { required: ['legs'], additionalProperties: false });
const MessageId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const GrantBody = Type.Object({ routeId: IdValue }, { required: ['routeId'] });
const GroupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    numbers: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 100_000 }),
  },
  { required: ['name', 'numbers'] },
);
const InboundBody = Type.Object(
  { from: Type.String({ pattern: '^\\+?\\d{8,15}$' }), to: Type.Optional(Type.String()), text: Type.String({ maxLength: 2000 }) },
  { required: ['from', 'text'] },
);

/**
 * The operator API (docs/decisions.md): Bearer token, plain JSON answers, errors
 * as `{ error }`. A thin edge over the same operator use cases as the CLI.
 */
export async function adminPlugin(app: FastifyInstance, opts: { core: Core; adminToken: AdminToken; sessions?: PanelSessions }) {
  const { core } = opts;
  const ops = operator(core);
  const isOperator = operatorTokenCheck(opts.adminToken);

  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    if (error instanceof DomainError) return reply.status(STATUS[error.code]).send({ error: error.details.join('; ') });
    const fe = error as FastifyError;
    if (fe.validation)
      return reply
        .status(400)
        .send({ error: describeValidation(fe.validation as Parameters<typeof describeValidation>[0], fe.validationContext ?? 'body').join('; ') });
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return reply.status(fe.statusCode).send({ error: clientErrorText(fe) });
    if (storageFault(error)) {
      request.log.error({ err: error }, 'storage fault; answered 503');
      return reply
        .status(503)
        .header('retry-after', STORAGE_RETRY_AFTER_S)
        .send({ error: 'The database cannot store anything right now (disk full or unavailable); nothing was done. Retry later.' });
    }
    request.log.error({ err: error }, 'unhandled admin error');
    return reply.status(500).send({ error: `Internal error; request id ${request.id}.` });
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: `No operator operation ${request.method} ${request.url.split('?')[0]}.` }));
  app.addHook('onRequest', async (request, reply) => {
    if (isOperator(request.headers.authorization)) return;
    // Without an Authorization header, an operator's panel session (docs/panel.md); CSRF token on state changes.
    if (request.headers.authorization === undefined && opts.sessions) {
      try {
        if (await opts.sessions.isOperator(request)) return;
      } catch (err) {
        if (err instanceof DomainError && err.code === 'FORBIDDEN') return reply.status(403).send({ error: err.message });
        throw err;
      }
    }
    return reply.status(401).send({ error: 'Operator token required: Authorization: Bearer <GATEWAY_ADMIN_TOKEN>.' });
  });

  app.post<{ Body: Static<typeof AccountBody> }>('/accounts', { schema: { ...DOCS.createAccount, body: AccountBody } }, async (request, reply) =>
    reply.status(201).send(await ops.createAccount(request.body)),
  );
  app.get<{ Params: Static<typeof Id> }>('/accounts/:id', { schema: { ...DOCS.getAccount, params: Id } }, async (request) => ops.getAccount(request.params.id));
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof KeyBody> }>(
    '/accounts/:id/api-keys',
    { schema: { ...DOCS.issueKey, params: Id, body: KeyBody } },
    async (request, reply) => reply.status(201).send(await ops.issueKey(request.params.id, request.body.allowedIps)),
  );
  app.delete<{ Params: Static<typeof Id> }>('/api-keys/:id', { schema: { ...DOCS.revokeKey, params: Id } }, async (request, reply) => {
    await ops.revokeKey(request.params.id);
    return reply.status(204).send();
  });
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof CreditsBody> }>(
    '/accounts/:id/credits',
    { schema: { ...DOCS.addCredits, params: Id, body: CreditsBody } },
    async (request) => ops.addCredits(request.params.id, request.body.amount, request.body.reason),
  );
  app.post<{ Body: Static<typeof RouteBody> }>('/routes', { schema: { ...DOCS.createRoute, body: RouteBody } }, async (request, reply) =>
    reply.status(201).send(await ops.createRoute(request.body)),
  );
  app.patch<{ Params: Static<typeof Id>; Body: Static<typeof FallbackBody> }>(
    '/routes/:id',
    { schema: { ...DOCS.setRouteFallback, params: Id, body: FallbackBody } },
    async (request) => ops.setRouteFallback(request.params.id, request.body.fallbackRouteId),
  );
  app.get<{ Params: Static<typeof Id> }>('/routes/:id/legs', { schema: { ...DOCS.getRouteLegs, params: Id } }, async (request) =>
    ops.routeLegs(request.params.id),
  );
  app.put<{ Params: Static<typeof Id>; Body: Static<typeof LegsBody> }>(
    '/routes/:id/legs',
    { schema: { ...DOCS.setRouteLegs, params: Id, body: LegsBody } },
    async (request) => ops.setRouteLegs(request.params.id, request.body.legs),
  );
  app.get<{ Params: Static<typeof MessageId> }>('/messages/:id', { schema: { ...DOCS.getMessage, params: MessageId } }, async (request) =>
    ops.getMessage(request.params.id),
  );
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof GrantBody> }>(
    '/accounts/:id/routes',
    { schema: { ...DOCS.grantRoute, params: Id, body: GrantBody } },
    async (request, reply) => {
      await ops.grantRoute(request.params.id, request.body.routeId);
      return reply.status(204).send();
    },
  );
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof GroupBody> }>(
    '/accounts/:id/contact-groups',
    { bodyLimit: core.config.BODY_LIMIT_BYTES * 10, schema: { ...DOCS.createContactGroup, params: Id, body: GroupBody } },
    async (request, reply) =>
      reply.status(201).send(await ops.createContactGroup(request.params.id, request.body.name, request.body.description ?? null, request.body.numbers)),
  );
  // The submits since start are this process's counters (core.metrics), beside what every process sees in the database.
  app.get('/carriers', { schema: DOCS.carriers }, async () => (await ops.carriers()).map((c) => ({ ...c, submitted: core.metrics.submits(c.name) })));
  app.get('/cluster', { schema: DOCS.cluster }, async () => ops.cluster(core.beacon.id));
  app.post<{ Body: Static<typeof InboundBody> }>('/simulator/inbound', { schema: { ...DOCS.simulatorInbound, body: InboundBody } }, async (request, reply) => {
    await core.simulator.inbound(request.body.from, request.body.to ?? null, request.body.text);
    return reply.status(202).send({ accepted: true });
  });

  // --- events (docs/webhooks.md): Legacy v2 callbacks and opt-out keywords per account ---
  const Url = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
  const CallbacksBody = Type.Object({ replyUrl: Type.Optional(Url), statusUrl: Type.Optional(Url) }, { additionalProperties: false });
  const KeywordsBody = Type.Object({ keywords: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50 }) }, { required: ['keywords'] });
  const Page = Type.Object({
    skip: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  });
  app.put<{ Params: Static<typeof Id>; Body: Static<typeof CallbacksBody> }>(
    '/accounts/:id/callbacks',
    { schema: { ...DOCS.setCallbacks, params: Id, body: CallbacksBody } },
    async (request) => ops.setCallbacks(request.params.id, request.body),
  );
  app.get<{ Params: Static<typeof Id> }>('/accounts/:id/callbacks', { schema: { ...DOCS.getCallbacks, params: Id } }, async (request) =>
    ops.getCallbacks(request.params.id),
  );
  app.get<{ Params: Static<typeof Id>; Querystring: Static<typeof Page> }>(
    '/accounts/:id/callbacks/deliveries',
    { schema: { ...DOCS.callbackDeliveries, params: Id, querystring: Page } },
    async (request) => ops.callbackDeliveries(request.params.id, { skip: request.query.skip ?? 0, limit: request.query.limit ?? 100 }),
  );
  app.put<{ Params: Static<typeof Id>; Body: Static<typeof KeywordsBody> }>(
    '/accounts/:id/opt-out-keywords',
    { schema: { ...DOCS.setOptOutKeywords, params: Id, body: KeywordsBody } },
    async (request) => ops.setOptOutKeywords(request.params.id, request.body.keywords),
  );
  app.get<{ Params: Static<typeof Id> }>('/accounts/:id/opt-out-keywords', { schema: { ...DOCS.getOptOutKeywords, params: Id } }, async (request) =>
    ops.getOptOutKeywords(request.params.id),
  );

  // --- per-account rate limit of the HTTP interfaces (docs/operations.md, "Rate limits") ---
  const RateLimitBody = Type.Object(
    {
      perSecond: Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Literal('off'), Type.Literal('default')], {
        [ERROR_TEXT]: 'must be a whole number from 1 to 1000000, "off" or "default"',
      }),
    },
    { required: ['perSecond'], additionalProperties: false },
  );
  app.put<{ Params: Static<typeof Id>; Body: Static<typeof RateLimitBody> }>(
    '/accounts/:id/rate-limit',
    { schema: { ...DOCS.setRateLimit, params: Id, body: RateLimitBody } },
    async (request) => ops.setRateLimit(request.params.id, request.body.perSecond),
  );
  app.get<{ Params: Static<typeof Id> }>('/accounts/:id/rate-limit', { schema: { ...DOCS.getRateLimit, params: Id } }, async (request) =>
    ops.getRateLimit(request.params.id),
  );

  // --- lists (accounts, keys, routes) and account (de)activation (docs/operator.md) ---
  listingRoutes(app, ops);
  // --- users of the browser panel (docs/panel.md, "Panel users") ---
  await app.register(panelUserAdminRoutes, { core });

  // --- SMPP credentials and the deliveries owed to SMPP customers (docs/smpp-server.md) ---
  smppRoutes(app, core);
}
