import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { fromMicros } from '../../billing/money.ts';
import type { MessageStatus } from '../../db/tables.ts';
import { contextReport } from '../../contextrules/conversations.ts';
import { Envelope, FailureEnvelope, badRequest, errorResponses, failure, ok } from './envelope.ts';
import { AuthKeyHeader, DateRange, Nullable } from './schemas.ts';
import { alias, legacyDoc, t as pt } from './docs.ts';
import { formatDate, reportRange } from './dates.ts';
import { parsePhone } from './phones.ts';
import { SLICE_MS, consolidatedSlices, detailedReport, replyReport } from '../../messaging/legacy-reports.ts';
import type { LegacyContext } from './context.ts';

const S = Nullable(Type.String());
const Filter = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

const DetailedQuery = Type.Object({
  ...DateRange,
  Delivered: Filter('all (default), true or false'),
  Receiver: Filter('Phone of the receiver'),
  RequestUniqueId: Filter('Id returned by the send'),
});
const ReplyQuery = Type.Object({ ...DateRange, PhoneNumber: Filter('Phone that replied'), RequestUniqueId: Filter('Id of the send replied to') });
const ContextQuery = Type.Object({
  ...DateRange,
  ContextRuleName: Filter('Rule name'),
  Receiver: Filter('Phone of the receiver'),
  RequestUniqueId: Filter('Id of the context send'),
});
const ConsolidatedQuery = Type.Object({
  StartDate: DateRange.StartDate,
  EndDate: DateRange.EndDate,
  Group: Filter('true: one row per month; false (default): one row per day'),
});

const Detailed = Type.Object({
  RequestUniqueId: Type.String(),
  MessageId: Type.String(),
  Sender: S,
  Receiver: Type.String(),
  Content: Type.String(),
  Status: Type.String(),
  StatusDetails: S,
  Delivered: Type.Boolean(),
  Credits: Type.Integer(),
  Cost: Type.Number(),
  CreatedDate: S,
  ScheduleDate: S,
  SentDate: S,
  StatusDate: S,
});
const Reply = Type.Object({
  RequestUniqueId: S,
  MessageId: S,
  PhoneNumber: Type.String(),
  Sender: S,
  SentContent: S,
  ReceivedContent: Type.String(),
  ReceiveDate: S,
});
const Context = Type.Object({
  RequestUniqueId: Type.String(),
  ContextRuleName: Type.String(),
  Receiver: Type.String(),
  Status: Type.String(),
  SentDate: S,
  ReceivedContent: S,
  ReceiveDate: S,
  ResponseContent: S,
  ResponseRequestUniqueId: S,
});
const Consolidated = Type.Object({
  Period: Type.String(),
  Messages: Type.Integer(),
  Delivered: Type.Integer(),
  Undelivered: Type.Integer(),
  Pending: Type.Integer(),
  Failed: Type.Integer(),
  Cancelled: Type.Integer(),
  Blocked: Type.Integer(),
  Credits: Type.Integer(),
  Cost: Type.Number(),
  Replies: Type.Integer(),
});

const flag = (field: string, value: string | undefined, allowAll: boolean): boolean | null => {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || (allowAll && v === 'all')) return allowAll ? null : false;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw badRequest((x) => x.invalidField(field));
};
const phoneFilter = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : parsePhone(v));
const textFilter = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

type Bucket = 'Delivered' | 'Undelivered' | 'Pending' | 'Failed' | 'Cancelled' | 'Blocked';
const BUCKET: Record<MessageStatus, Bucket> = {
  SCHEDULED: 'Pending',
  QUEUED: 'Pending',
  SENDING: 'Pending',
  SENT: 'Pending',
  DELIVERED: 'Delivered',
  UNDELIVERED: 'Undelivered',
  EXPIRED: 'Undelivered',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
  BLOCKED: 'Blocked',
};

const REQUEST_ID = '01a204da-a674-7c41-8d0e-3f5a6b7c8d9e';
const WINDOW = `Callable once per 30 seconds per API key and report: inside the window the answer is 202 with \`Success\` false and
\`Retry-After\` (a call refused with 400 does not start it). Served on GET (fields in the query) and POST (the same fields in a
JSON body).`;
const PERIOD = (days: number) =>
  `\`StartDate\`/\`EndDate\` are account-local days (\`YYYY-MM-DD\` or \`DD/MM/YYYY\`, \`EndDate\` inclusive) or ISO moments; default the last ${days} days, at most 366.`;
const PAGING = '`Skip`/`Limit` page the rows (default 0 / 10,000, the maximum); `Message` says "N de M registro(s)".';
const BAD_FILTER = {
  description: 'A date is unreadable, the period is over 366 days, a filter is invalid, or `Skip`/`Limit` is out of range.',
  message: pt.wholeNumber('Skip', 0, Number.MAX_SAFE_INTEGER),
};

/** What each report says of itself in the document: operationId, summary, description, an example row. */
interface ReportDoc {
  operationId: string;
  summary: string;
  description: string;
  row: unknown;
}

/**
 * The legacy reports. Each is served on GET (query) and POST (body), and
 * may be called once per 30 seconds per API key and report; inside the
 * window the answer is 202 with Success false and the seconds left.
 */
export async function reportRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;

  function report<Q extends TObject>(
    path: string,
    doc: ReportDoc,
    schema: Q,
    row: TSchema,
    run: (request: FastifyRequest, q: Static<Q> | null) => Promise<{ object: unknown; message: string }>,
  ) {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = (request.method === 'GET' ? request.query : request.body) as Static<Q> | null;
      const key = `${request.principal.keyId}:${path}`;
      const wait = ctx.reports.reserve(key);
      if (wait > 0)
        return reply
          .status(202)
          .header('Retry-After', String(wait))
          .send(failure(t.reportWait(wait)));
      try {
        const r = await run(request, q);
        return ok(r.object, r.message);
      } catch (err) {
        ctx.reports.release(key);
        throw err;
      }
    };
    const response = { 200: Envelope(row), 202: FailureEnvelope, ...errorResponses };
    const common = { headers: AuthKeyHeader, response };
    const documented = legacyDoc({
      operationId: doc.operationId,
      tags: ['Legacy v2: reports'],
      summary: doc.summary,
      description: `${doc.description}\n\n${WINDOW}`,
      success: { description: 'The rows of the page; `Message` says how many of how many.', object: [doc.row], message: pt.report(1, 1) },
      errors: { 202: true, 400: BAD_FILTER },
    });
    app.get(path, { schema: { ...common, ...documented, querystring: schema } }, handler);
    app.post(path, { schema: { ...common, ...alias(documented, `${doc.operationId}Post`), body: Type.Union([schema, Type.Null()]) } }, handler);
  }

  const detailed: ReportDoc = {
    operationId: 'legacyDetailedReport',
    summary: 'Messages sent, one row per receiver, newest first',
    description: `Every message sent (one row per receiver) with its status, cost and dates. \`Delivered\`: \`all\` (default), \`true\`
(DELIVERED only) or \`false\` (every other status); filters by \`Receiver\` and \`RequestUniqueId\`. ${PERIOD(7)} ${PAGING}`,
    row: {
      RequestUniqueId: REQUEST_ID,
      MessageId: '01a204da-a674-7c41-8d0e-40112a3b4c5d',
      Sender: 'ERP',
      Receiver: '5511999997777',
      Content: 'Consulta confirmada!',
      Status: 'DELIVERED',
      StatusDetails: 'stat:DELIVRD err:000',
      Delivered: true,
      Credits: 1,
      Cost: 0.1,
      CreatedDate: '2026-11-22T17:02:48-03:00',
      ScheduleDate: '2026-11-22T17:02:48-03:00',
      SentDate: '2026-11-22T17:02:49-03:00',
      StatusDate: '2026-11-22T17:02:53-03:00',
    },
  };
  report('/detailedreporting', detailed, DetailedQuery, Type.Array(Detailed), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await ctx.core.db.report(request.principal.accountId, (db) =>
      detailedReport(db, request.principal.accountId, {
        ...range,
        skip: q?.Skip ?? 0,
        limit: q?.Limit ?? 10_000,
        delivered: flag('Delivered', q?.Delivered, true),
        receiver: phoneFilter(q?.Receiver),
        requestId: textFilter(q?.RequestUniqueId),
      }),
    );
    const rows = r.rows.map((m) => ({
      RequestUniqueId: m.request_id,
      MessageId: m.id,
      Sender: m.sender,
      Receiver: m.receiver,
      Content: m.content,
      Status: m.status,
      StatusDetails: m.status_details,
      Delivered: m.status === 'DELIVERED',
      Credits: m.segments,
      Cost: fromMicros(m.cost),
      CreatedDate: formatDate(m.created_at, tz),
      ScheduleDate: formatDate(m.schedule_at, tz),
      SentDate: formatDate(m.sent_at, tz),
      StatusDate: formatDate(m.status_at, tz),
    }));
    return { object: rows, message: t.report(rows.length, r.total) };
  });

  const replies: ReportDoc = {
    operationId: 'legacyReplyReport',
    summary: 'Replies received, newest first',
    description: `Texts phones sent back, each with the message it answers (the latest sent to that phone). Filters by \`PhoneNumber\` and
\`RequestUniqueId\` (of the send answered). ${PERIOD(7)} ${PAGING}`,
    row: {
      RequestUniqueId: REQUEST_ID,
      MessageId: '01a204da-a674-7c41-8d0e-40112a3b4c5d',
      PhoneNumber: '5511999997777',
      Sender: 'ERP',
      SentContent: 'Confirma a consulta de amanhã? Responda SIM ou NÃO',
      ReceivedContent: 'Sim!',
      ReceiveDate: '2026-11-22T17:04:10-03:00',
    },
  };
  report('/replyreporting', replies, ReplyQuery, Type.Array(Reply), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await ctx.core.db.report(request.principal.accountId, (db) =>
      replyReport(db, request.principal.accountId, {
        ...range,
        skip: q?.Skip ?? 0,
        limit: q?.Limit ?? 10_000,
        phone: phoneFilter(q?.PhoneNumber),
        requestId: textFilter(q?.RequestUniqueId),
      }),
    );
    const rows = r.rows.map((x) => ({
      RequestUniqueId: x.request_id,
      MessageId: x.message_id,
      PhoneNumber: x.phone,
      Sender: x.sender,
      SentContent: x.sent_content,
      ReceivedContent: x.content,
      ReceiveDate: formatDate(x.received_at, tz),
    }));
    return { object: rows, message: t.report(rows.length, r.total) };
  });

  const context: ReportDoc = {
    operationId: 'legacyContextReport',
    summary: 'Context sends and their answers, newest first',
    description: `One row per receiver of a context send (/sendcontextmessage) with where its conversation stands: \`WAITING\`,
\`POSITIVE\`, \`NEGATIVE\`, \`DEFAULT\`, \`EXPIRED\` (no answer in 72 hours), \`REPLACED\` (a newer context send) or \`CLOSED\` (a
later plain send), the answer received and the reply sent. Filters by \`ContextRuleName\`, \`Receiver\` and
\`RequestUniqueId\`. ${PERIOD(7)} ${PAGING}`,
    row: {
      RequestUniqueId: '01a204da-a643-7b2e-9c1d-0e1f2a3b4c5d',
      ContextRuleName: 'Confirmação',
      Receiver: '5511999997777',
      Status: 'POSITIVE',
      SentDate: '2026-11-22T17:02:36-03:00',
      ReceivedContent: 'Sim!',
      ReceiveDate: '2026-11-22T17:04:10-03:00',
      ResponseContent: 'Consulta confirmada!',
      ResponseRequestUniqueId: REQUEST_ID,
    },
  };
  report('/contextreporting', context, ContextQuery, Type.Array(Context), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await ctx.core.db.report(request.principal.accountId, (db) =>
      contextReport(db, request.principal.accountId, {
        ...range,
        skip: q?.Skip ?? 0,
        limit: q?.Limit ?? 10_000,
        ruleName: textFilter(q?.ContextRuleName),
        receiver: phoneFilter(q?.Receiver),
        requestId: textFilter(q?.RequestUniqueId),
      }),
    );
    const rows = r.records.map((c) => ({
      RequestUniqueId: c.requestId,
      ContextRuleName: c.ruleName,
      Receiver: c.receiver,
      Status: c.status,
      SentDate: formatDate(c.sentAt, tz),
      ReceivedContent: c.reply,
      ReceiveDate: formatDate(c.repliedAt, tz),
      ResponseContent: c.answer,
      ResponseRequestUniqueId: c.answerRequestId,
    }));
    return { object: rows, message: t.report(rows.length, r.total) };
  });

  const consolidated: ReportDoc = {
    operationId: 'legacyConsolidatedReport',
    summary: 'Totals per day (Group=false) or per month (Group=true)',
    description: `Messages per account-local day (\`Group=false\`, default; default period the last 30 days) or month (\`Group=true\`;
default the last 365 days) by outcome: \`Undelivered\` counts EXPIRED too, \`Pending\` SCHEDULED/QUEUED/SENDING/SENT;
\`Credits\`/\`Cost\` count what stayed charged (cancelled, blocked and carrier-rejected messages were refunded), and
\`Replies\` the replies received. At most 366 days.`,
    row: { Period: '2026-11', Messages: 6, Delivered: 3, Undelivered: 0, Pending: 2, Failed: 0, Cancelled: 1, Blocked: 0, Credits: 5, Cost: 0.5, Replies: 1 },
  };
  report('/consolidatedreporting', consolidated, ConsolidatedQuery, Type.Array(Consolidated), async (request, q) => {
    const tz = request.principal.timezone;
    const monthly = flag('Group', q?.Group, false) === true;
    const range = reportRange(q ?? {}, tz, monthly ? 365 : 30, 366);
    const slices = await ctx.core.db.report(request.principal.accountId, (db) => consolidatedSlices(db, request.principal.accountId, range.from, range.to));
    const periodOf = (slice: number) => DateTime.fromMillis(slice * SLICE_MS, { zone: tz }).toFormat(monthly ? 'yyyy-MM' : 'yyyy-MM-dd');
    const periods = new Map<string, Static<typeof Consolidated>>();
    const at = (period: string) => {
      let p = periods.get(period);
      if (!p) {
        p = { Period: period, Messages: 0, Delivered: 0, Undelivered: 0, Pending: 0, Failed: 0, Cancelled: 0, Blocked: 0, Credits: 0, Cost: 0, Replies: 0 };
        periods.set(period, p);
      }
      return p;
    };
    const cost = new Map<string, number>();
    for (const s of slices.messages) {
      const period = periodOf(s.slice);
      const p = at(period);
      const bucket = BUCKET[s.status];
      p.Messages += s.messages;
      p[bucket] += s.messages;
      // What stayed charged (refunds and messages never charged are left out by the query).
      p.Credits += s.segments;
      cost.set(period, (cost.get(period) ?? 0) + s.cost);
    }
    for (const r of slices.replies) at(periodOf(r.slice)).Replies += r.replies;
    const rows = [...periods.values()].sort((a, b) => a.Period.localeCompare(b.Period)).map((p) => ({ ...p, Cost: fromMicros(cost.get(p.Period) ?? 0) }));
    return { object: rows, message: t.report(rows.length, rows.length) };
  });
}
