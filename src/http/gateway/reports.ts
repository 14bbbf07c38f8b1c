import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { MAX_LIMIT, STATUSES, receivedReport, requestsReport, sentReport } from '../../messaging/reports.ts';
import { cancelRequest } from '../../messaging/cancel.ts';
import { ApiKeyHeader, Nullable } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';

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

/** Spec 2.5. */
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

/** Spec 2.6. */
const ReceivedRecord = Type.Object({ sender: Type.String(), content: Type.String(), receivedAt: S, messageId: S });

/** Spec 2.7. */
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
        tags: ['Reports'],
        summary: 'Messages sent, newest first',
        headers: ApiKeyHeader,
        querystring: SentQuery,
        response: { 200: Envelope(Type.Array(SentRecord)), ...errorResponses },
      },
    },
    async (request) => {
      const r = await sentReport(db, request.principal.accountId, request.query);
      return ok(r.records, null, r.total);
    },
  );

  app.get<{ Querystring: Static<typeof ReceivedQuery> }>(
    '/reports/messages/received',
    {
      schema: {
        tags: ['Reports'],
        summary: 'Replies received, newest first',
        headers: ApiKeyHeader,
        querystring: ReceivedQuery,
        response: { 200: Envelope(Type.Array(ReceivedRecord)), ...errorResponses },
      },
    },
    async (request) => {
      const r = await receivedReport(db, request.principal.accountId, request.query);
      return ok(r.records, null, r.total);
    },
  );

  // Spec paths start with /api; the published integrations call them without it (docs/decisions.md).
  for (const prefix of ['/api', '']) {
    app.get<{ Querystring: Static<typeof RequestsQuery> }>(
      `${prefix}/reports/messages/requests`,
      {
        schema: {
          tags: ['Reports'],
          summary: 'Message requests, one row per request id',
          headers: ApiKeyHeader,
          querystring: RequestsQuery,
          response: { 200: Envelope(Type.Array(RequestRecord)), ...errorResponses },
        },
      },
      async (request) => {
        const r = await requestsReport(db, request.principal.accountId, request.query);
        return ok(r.records, null, r.total);
      },
    );

    app.post<{ Body: Static<typeof CancelBody> }>(
      `${prefix}/messages/request/cancel`,
      {
        schema: {
          tags: ['Reports'],
          summary: 'Cancel the scheduled and queued messages of a request',
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
