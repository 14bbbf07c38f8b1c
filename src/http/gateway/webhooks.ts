import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { TOPICS } from '../../events/tables.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks } from '../../events/webhooks.ts';
import { ApiKeyHeader, Nullable } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';

/** Webhooks (docs/webhooks.md). */

const Topic = Type.Union(
  TOPICS.map((t) => Type.Literal(t)),
  { description: 'message.status: every status change of a message; message.reply: a reply received' },
);

const WebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'http(s) URL on a public address; ports 80, 443, 8080, 8443' }),
    topics: Type.Array(Topic, { minItems: 1, maxItems: TOPICS.length * 2 }),
  },
  { required: ['url', 'topics'] },
);

const WebhookId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

const DeliveriesQuery = Type.Object({
  skip: Skip(),
  limit: Limit(1000),
});

const Webhook = Type.Object({ id: Type.Integer(), url: Type.String(), topics: Type.Array(Type.String()), createdAt: Type.String() });

const NewWebhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  topics: Type.Array(Type.String()),
  secret: Type.String({ description: 'Standard Webhooks signing secret (whsec_...); shown only in this answer' }),
  createdAt: Type.String(),
});

const S = Nullable(Type.String());

const Delivery = Type.Object({
  id: Type.String({ description: 'the webhook-id header of every attempt' }),
  eventType: Type.String(),
  status: Type.String({ description: 'PENDING, DELIVERING, DELIVERED or FAILED' }),
  attempts: Type.Integer(),
  lastHttpStatus: Nullable(Type.Integer()),
  lastError: S,
  createdAt: Type.String(),
  lastAttemptAt: S,
  nextAttemptAt: S,
  deliveredAt: S,
});

export async function webhookRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;
  const tags = ['Webhooks'];
  const check = (url: string) => core.events.fetcher.check(url);

  app.post<{ Body: Static<typeof WebhookBody> }>(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Register a webhook; the answer shows its signing secret once',
        headers: ApiKeyHeader,
        body: WebhookBody,
        response: { 200: Envelope(NewWebhook), ...errorResponses },
      },
    },
    async (request) =>
      ok(await createWebhook(db, check, request.principal.accountId, request.body), 'Webhook registered. Keep the secret: it is not shown again.'),
  );

  app.get(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Webhooks of the account (without secrets)',
        headers: ApiKeyHeader,
        response: { 200: Envelope(Type.Array(Webhook)), ...errorResponses },
      },
    },
    async (request) => {
      const hooks = await listWebhooks(db, request.principal.accountId);
      return ok(hooks, null, hooks.length);
    },
  );

  app.delete<{ Params: Static<typeof WebhookId> }>(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Delete a webhook; its pending deliveries are dropped',
        headers: ApiKeyHeader,
        params: WebhookId,
        response: { 200: Envelope(Webhook), ...errorResponses },
      },
    },
    async (request) => {
      const hook = await db.transaction().execute((tx) => deleteWebhook(tx, request.principal.accountId, request.params.id));
      return ok(hook, `Webhook ${hook.id} deleted.`);
    },
  );

  app.get<{ Params: Static<typeof WebhookId>; Querystring: Static<typeof DeliveriesQuery> }>(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Delivery log of a webhook, newest first',
        headers: ApiKeyHeader,
        params: WebhookId,
        querystring: DeliveriesQuery,
        response: { 200: Envelope(Type.Array(Delivery)), ...errorResponses },
      },
    },
    async (request) => {
      const page = { skip: request.query.skip ?? 0, limit: request.query.limit ?? 100 };
      const r = await listDeliveries(db, request.principal.accountId, request.params.id, page);
      return ok(r.records, null, r.total);
    },
  );
}
