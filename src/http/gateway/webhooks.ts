import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { TOPICS } from '../../events/tables.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, resendDelivery } from '../../events/webhooks.ts';
import { ApiKeyHeader, Nullable } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { BODY_ERRORS, gatewayDoc } from './docs.ts';

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

const DeliveryParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64, description: 'the delivery id from the delivery log (its `webhook-id` header)' }),
});

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
        ...gatewayDoc({
          operationId: 'createWebhook',
          tags,
          summary: 'Register a webhook; the answer shows its signing secret once',
          description: `The gateway will POST the events of \`topics\` to \`url\`: \`message.status\` (every status change of a message) and
\`message.reply\` (a reply received). Deliveries follow Standard Webhooks: signed with the \`secret\` of this answer (headers
\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`), retried with back-off until your endpoint answers 2xx. The URL must
be http(s) on a public address, port 80, 443, 8080 or 8443 (docs/webhooks.md).`,
          success: {
            description: 'Registered; `object.secret` is shown only here.',
            object: {
              id: 4,
              url: 'https://hooks.example.com/sms',
              topics: ['message.status', 'message.reply'],
              secret: 'whsec_PAaXMJ18kw+u05k/o38OgZyYswZDJPra3rSXarhrHWk=',
              createdAt: '2026-11-22T20:02:47.521Z',
            },
            message: 'Webhook registered. Keep the secret: it is not shown again.',
          },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'The URL is not http(s), not on a public address or port, or a topic is unknown.',
              message: 'url: 127.0.0.1 is a loopback address; only public addresses may be called',
            },
          },
          requestExample: { url: 'https://hooks.example.com/sms', topics: ['message.status', 'message.reply'] },
        }),
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
        ...gatewayDoc({
          operationId: 'listWebhooks',
          tags,
          summary: 'Webhooks of the account (without secrets)',
          description: 'Every webhook of the account with its URL and topics. Secrets are never shown again after registration.',
          success: {
            description: 'The webhooks; `totalRecords` is their number.',
            object: [{ id: 4, url: 'https://hooks.example.com/sms', topics: ['message.status', 'message.reply'], createdAt: '2026-11-22T20:02:47.521Z' }],
            totalRecords: 1,
          },
          errors: {},
        }),
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
        ...gatewayDoc({
          operationId: 'deleteWebhook',
          tags,
          summary: 'Delete a webhook; its pending deliveries are dropped',
          description: 'Stops the webhook at once: deliveries still waiting are dropped. The answer is the webhook as it was.',
          success: {
            description: 'Deleted: the webhook as it was.',
            object: { id: 4, url: 'https://hooks.example.com/sms', topics: ['message.status', 'message.reply'], createdAt: '2026-11-22T20:02:47.521Z' },
            message: 'Webhook 4 deleted.',
          },
          errors: {
            400: { description: 'The id is not a positive integer.', message: 'id: must be >= 1' },
            404: { description: 'No webhook with this id in the account.', message: 'Webhook 4 was not found.' },
          },
        }),
        headers: ApiKeyHeader,
        params: WebhookId,
        response: { 200: Envelope(Webhook), ...errorResponses },
      },
    },
    async (request) => {
      const hook = await db.transaction().execute((tx) => deleteWebhook(tx, core.db.dialect, request.principal.accountId, request.params.id));
      return ok(hook, `Webhook ${hook.id} deleted.`);
    },
  );

  app.get<{ Params: Static<typeof WebhookId>; Querystring: Static<typeof DeliveriesQuery> }>(
    '/webhooks/:id/deliveries',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listWebhookDeliveries',
          tags,
          summary: 'Delivery log of a webhook, newest first',
          description: `Every event sent (or to be sent) to the webhook, newest first: status (\`PENDING\`, \`DELIVERING\`, \`DELIVERED\`,
\`FAILED\`), attempts, the last HTTP status or error, and when the next attempt is due. \`id\` is the \`webhook-id\` header
of every attempt of the event. \`skip\`/\`limit\` page them (at most 1,000).`,
          success: {
            description: 'The page of deliveries; `totalRecords` counts them all.',
            object: [
              {
                id: '01a204da-7a1c-7c3e-9b11-5a0c2f9e7d41',
                eventType: 'message.status',
                status: 'DELIVERED',
                attempts: 1,
                lastHttpStatus: 200,
                lastError: null,
                createdAt: '2026-11-22T20:02:48.102Z',
                lastAttemptAt: '2026-11-22T20:02:48.350Z',
                nextAttemptAt: null,
                deliveredAt: '2026-11-22T20:02:48.350Z',
              },
            ],
            totalRecords: 1,
          },
          errors: {
            400: { description: 'The id or a paging parameter is invalid.', message: 'limit: must be a whole number from 1 to 1000' },
            404: { description: 'No webhook with this id in the account.', message: 'Webhook 4 was not found.' },
          },
        }),
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

  app.post<{ Params: Static<typeof DeliveryParams> }>(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'retryWebhookDelivery',
          tags,
          summary: 'Send a FAILED delivery again',
          description: `Puts a \`FAILED\` delivery of the webhook back in line: it is due at once, with the same \`webhook-id\` and body, and
its retry schedule starts over (5 s, 30 s, 2 min, ... for 24 hours from now); \`attempts\` keeps counting every attempt. A 2xx
answer from your endpoint makes it \`DELIVERED\`. Only a \`FAILED\` delivery can be sent again: one still pending, in flight or
delivered answers 409. No body.`,
          success: {
            description: 'The delivery, now `PENDING` and due at once.',
            object: {
              id: '01a204da-7a1c-7c3e-9b11-5a0c2f9e7d41',
              eventType: 'message.status',
              status: 'PENDING',
              attempts: 9,
              lastHttpStatus: 503,
              lastError: 'HTTP 503: Service Unavailable',
              createdAt: '2026-11-22T20:02:48.102Z',
              lastAttemptAt: '2026-11-23T20:02:51.004Z',
              nextAttemptAt: '2026-11-24T09:15:02.417Z',
              deliveredAt: null,
            },
            message: 'The delivery will be sent again.',
          },
          errors: {
            400: { description: 'The webhook id is not a positive integer.', message: 'id: must be >= 1' },
            404: {
              description: 'No webhook with this id in the account, or no delivery with this id in its log.',
              message: 'Delivery 01a204da-7a1c-7c3e-9b11-5a0c2f9e7d41 of webhook 4 was not found.',
            },
            409: {
              description: 'The delivery is not FAILED (still pending, in flight, or delivered): nothing was changed.',
              message: 'Delivery 01a204da-7a1c-7c3e-9b11-5a0c2f9e7d41 is DELIVERED: only a FAILED delivery can be sent again.',
            },
          },
        }),
        headers: ApiKeyHeader,
        params: DeliveryParams,
        response: { 200: Envelope(Delivery), ...errorResponses },
      },
    },
    async (request) => {
      const { id, deliveryId } = request.params;
      const delivery = await db.transaction().execute((tx) => resendDelivery(tx, request.principal.accountId, id, deliveryId));
      core.events.deliverer.wake();
      return ok(delivery, 'The delivery will be sent again.');
    },
  );
}
