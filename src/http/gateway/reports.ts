import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { MAX_LIMIT, STATUSES, receivedReport, requestsReport, sentReport } from '../../messaging/reports.ts';
import { cancelRequest } from '../../messaging/cancel.ts';
import { ApiKeyHeader, Nullable } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { BODY_ERRORS, gatewayDoc } from './docs.ts';

const Page = {
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC day) or ISO 8601; default 2 days ago' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (whole UTC day, inclusive) or ISO 8601; default no end' })),
  skip: Skip(),
  limit: Limit(MAX_LIMIT),
};

const SentQuery = Type.Object({
  ...Page,
  receiver: Type.Optional(Type.String()),
  content: Type.Optional(Type.String({ description: 'substring, case-insensitive' })),
  custom: Type.Optional(Type.String()),
  tag: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
  // Repeated at most 100 times (there are far fewer statuses): a bounded array keeps validation cheap.
  statuses: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 100 })], {
      description: `comma-separated or repeated (at most 100 times): ${STATUSES.join(', ')}`,
    }),
  ),
});

const ReceivedQuery = Type.Object({ ...Page, sender: Type.Optional(Type.String()), content: Type.Optional(Type.String()) });

const RequestsQuery = Type.Object({
  ...Page,
  content: Type.Optional(Type.String()),
  custom: Type.Optional(Type.String()),
  tag: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
});

const S = Nullable(Type.String());

/** A sent message in the sent report. */
const SentRecord = Type.Object({
  id: Type.String(),
  receiver: Type.String(),
  content: Type.String(),
  createdAt: S,
  sentAt: S,
  requestId: Type.String(),
  schedule: S,
  custom: S,
  tag: S,
  status: Type.String(),
  statusDetails: S,
  product: Type.String(),
  route: Type.String(),
});

/** A received message (a reply) in the received report. */
const ReceivedRecord = Type.Object({ sender: Type.String(), content: Type.String(), receivedAt: S, messageId: S });

/** A send request in the requests report. */
const RequestRecord = Type.Object({
  userId: Type.Integer(),
  content: Type.String(),
  createdAt: S,
  sentAt: S,
  requestCount: Type.Integer(),
  requestId: Type.String(),
  schedule: S,
  custom: S,
  tag: S,
  productId: Type.Integer(),
  product: Type.String(),
  routeId: Type.Integer(),
  route: Type.String(),
});

const CancelBody = Type.Object({ requestId: Type.String({ format: 'uuid' }) }, { required: ['requestId'] });

export async function reportRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;

  app.get<{ Querystring: Static<typeof SentQuery> }>(
    '/reports/messages/sent',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listSentMessages',
          tags: ['Reports'],
          summary: 'Messages sent, newest first',
          description: `One row per message (per receiver) of the account, newest first, with its status: \`SCHEDULED\`, \`QUEUED\`,
\`SENDING\`, \`SENT\`, \`DELIVERED\`, \`UNDELIVERED\`, \`EXPIRED\`, \`FAILED\` (refunded), \`CANCELLED\` (refunded) or \`BLOCKED\`
(not charged). From \`startDate\` (default: 2 days ago, UTC) to \`endDate\` (inclusive; default: no end); filters by receiver,
request id, tag and custom (equality), text (case-insensitive substring) and statuses. \`totalRecords\` is the count of
every matching row; \`skip\`/\`limit\` (at most 1,000) page them. Times not reached yet are null.`,
          success: {
            description: 'The page of messages; `totalRecords` counts every match.',
            object: [
              {
                id: '01a204da-7993-7576-be8d-fdf9450e1c0f',
                receiver: '5511999998888',
                content: 'Seu pedido saiu para entrega',
                createdAt: '2026-11-22T20:02:47.521Z',
                sentAt: '2026-11-22T20:02:47.690Z',
                requestId: '01a204da-7993-7576-be8d-fdf9450e1c0e',
                schedule: '2026-11-22T20:02:47.521Z',
                custom: 'pedido-4471',
                tag: 'pedidos',
                status: 'DELIVERED',
                statusDetails: 'stat:DELIVRD err:000',
                product: 'SMS',
                route: 'Claro SMS',
              },
            ],
            totalRecords: 1,
          },
          errors: {
            400: {
              description: 'A filter or paging parameter is invalid (the problem is named).',
              message: 'skip: must be a whole number from 0 to 9007199254740991',
            },
          },
        }),
        headers: ApiKeyHeader,
        querystring: SentQuery,
        response: { 200: Envelope(Type.Array(SentRecord)), ...errorResponses },
      },
    },
    async (request) => {
      const r = await core.db.report(request.principal.accountId, (db) => sentReport(db, request.principal.accountId, request.query));
      return ok(r.records, null, r.total);
    },
  );

  app.get<{ Querystring: Static<typeof ReceivedQuery> }>(
    '/reports/messages/received',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listReceivedMessages',
          tags: ['Reports'],
          summary: 'Replies received, newest first',
          description: `Texts phones sent back, newest first: each is matched to the latest message sent to that phone (its id is
\`messageId\`). From \`startDate\` (default: 2 days ago) to \`endDate\`; filters by \`sender\` (the phone) and \`content\`
(substring). \`skip\`/\`limit\` page them (at most 1,000); \`totalRecords\` counts every match.`,
          success: {
            description: 'The page of replies; `totalRecords` counts every match.',
            object: [{ sender: '5511999998888', content: 'SIM', receivedAt: '2026-11-22T20:05:12.004Z', messageId: '01a204da-7993-7576-be8d-fdf9450e1c0f' }],
            totalRecords: 1,
          },
          errors: {
            400: { description: 'A filter or paging parameter is invalid (the problem is named).', message: 'limit: must be a whole number from 1 to 1000' },
          },
        }),
        headers: ApiKeyHeader,
        querystring: ReceivedQuery,
        response: { 200: Envelope(Type.Array(ReceivedRecord)), ...errorResponses },
      },
    },
    async (request) => {
      const r = await core.db.report(request.principal.accountId, (db) => receivedReport(db, request.principal.accountId, request.query));
      return ok(r.records, null, r.total);
    },
  );

  // The interface documents these paths under /api; the published integrations call them without it (docs/decisions.md).
  for (const prefix of ['/api', '']) {
    app.get<{ Querystring: Static<typeof RequestsQuery> }>(
      `${prefix}/reports/messages/requests`,
      {
        schema: {
          ...gatewayDoc({
            operationId: prefix ? 'listRequests' : 'listRequestsWithoutApiPrefix',
            tags: ['Reports'],
            summary: prefix ? 'Message requests, one row per request id' : 'Message requests (same as /api/reports/messages/requests)',
            description: `${prefix ? '' : 'The same operation as GET /api/reports/messages/requests, at the path the published integrations call.\n\n'}One row per request (a send, a batch, a token), newest schedule first, with the
number of messages (\`requestCount\`), the route and product. From \`startDate\` (default: 2 days ago) to \`endDate\`;
filters by request id, tag, custom and text. \`skip\`/\`limit\` page them (at most 1,000).`,
            success: {
              description: 'The page of requests; `totalRecords` counts every match.',
              object: [
                {
                  userId: 12,
                  content: 'Seu pedido saiu para entrega',
                  createdAt: '2026-11-22T20:02:47.521Z',
                  sentAt: '2026-11-22T20:02:47.690Z',
                  requestCount: 2,
                  requestId: '01a204da-7993-7576-be8d-fdf9450e1c0e',
                  schedule: '2026-11-22T20:02:47.521Z',
                  custom: null,
                  tag: 'pedidos',
                  productId: 1,
                  product: 'SMS',
                  routeId: 1,
                  route: 'Claro SMS',
                },
              ],
              totalRecords: 1,
            },
            errors: {
              400: {
                description: 'A filter or paging parameter is invalid (the problem is named).',
                message: 'skip: must be a whole number from 0 to 9007199254740991',
              },
            },
          }),
          headers: ApiKeyHeader,
          querystring: RequestsQuery,
          response: { 200: Envelope(Type.Array(RequestRecord)), ...errorResponses },
        },
      },
      async (request) => {
        const r = await core.db.report(request.principal.accountId, (db) => requestsReport(db, request.principal.accountId, request.query));
        return ok(r.records, null, r.total);
      },
    );

    app.post<{ Body: Static<typeof CancelBody> }>(
      `${prefix}/messages/request/cancel`,
      {
        schema: {
          ...gatewayDoc({
            operationId: prefix ? 'cancelRequest' : 'cancelRequestWithoutApiPrefix',
            tags: ['Reports'],
            summary: prefix ? 'Cancel the scheduled and queued messages of a request' : 'Cancel a request (same as /api/messages/request/cancel)',
            description: `${prefix ? '' : 'The same operation as POST /api/messages/request/cancel, at the path the published integrations call.\n\n'}Cancels, in one transaction, every message of the request that is still \`SCHEDULED\` or \`QUEUED\`,
and refunds their cost. Messages already handed to the carrier are not affected. The request id is the \`X-Request-Id\` of
the send (or \`requestId\` in the reports).`,
            success: {
              description: 'Cancelled: `message` says how many messages were cancelled and refunded.',
              object: null,
              message: 'Cancelled 1 message(s) of request 01a204da-7993-7576-be8d-fdf9450e1c0e; their cost was refunded.',
            },
            errors: {
              ...BODY_ERRORS,
              400: {
                description: '`requestId` is not a UUID, or no message of the request can still be cancelled (all sent or already cancelled).',
                message: 'No message of request 01a204da-7993-7576-be8d-fdf9450e1c0e can be cancelled: they were already sent or cancelled.',
              },
              404: {
                description: "No request with this id in the account (another account's id gets the same answer).",
                message: 'Request 01a204da-7993-7576-be8d-fdf9450e1c0e was not found.',
              },
            },
            requestExample: { requestId: '01a204da-7993-7576-be8d-fdf9450e1c0e' },
          }),
          headers: ApiKeyHeader,
          body: CancelBody,
          response: { 200: Envelope(Type.Null()), ...errorResponses },
        },
      },
      async (request) => {
        // UUIDs are case-insensitive on input (RFC 9562); ours are stored in lower case.
        const requestId = request.body.requestId.toLowerCase();
        const r = await cancelRequest(db, request.principal.accountId, requestId);
        return ok(null, `Cancelled ${r.cancelled} message(s) of request ${requestId}; their cost was refunded.`);
      },
    );
  }
}
