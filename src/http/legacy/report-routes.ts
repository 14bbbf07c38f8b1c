import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { fromMicros } from '../../billing/money.ts';
import type { MessageStatus } from '../../db/tables.ts';
import { contextReport } from '../../contextrules/conversations.ts';
import { Envelope, FailureEnvelope, badRequest, errorResponses, failure, ok } from './envelope.ts';
import { AuthKeyHeader, DateRange, Nullable, security, tags } from './schemas.ts';
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

/**
 * The legacy reports. Each is served on GET (query) and POST (body), and
 * may be called once per 30 seconds per API key and report; inside the
 * window the answer is 202 with Success false and the seconds left.
 */
export async function reportRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;

  function report<Q extends TObject>(
    path: string,
    summary: string,
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
    const common = { tags, security, headers: AuthKeyHeader, summary, response };
    app.get(path, { schema: { ...common, querystring: schema } }, handler);
    app.post(path, { schema: { ...common, body: Type.Union([schema, Type.Null()]) } }, handler);
  }

  report('/detailedreporting', 'Messages sent, one row per receiver, newest first', DetailedQuery, Type.Array(Detailed), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await detailedReport(ctx.db, request.principal.accountId, {
      ...range,
      skip: q?.Skip ?? 0,
      limit: q?.Limit ?? 10_000,
      delivered: flag('Delivered', q?.Delivered, true),
      receiver: phoneFilter(q?.Receiver),
      requestId: textFilter(q?.RequestUniqueId),
    });
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

  report('/replyreporting', 'Replies received, newest first', ReplyQuery, Type.Array(Reply), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await replyReport(ctx.db, request.principal.accountId, {
      ...range,
      skip: q?.Skip ?? 0,
      limit: q?.Limit ?? 10_000,
      phone: phoneFilter(q?.PhoneNumber),
      requestId: textFilter(q?.RequestUniqueId),
    });
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

  report('/contextreporting', 'Context sends and their answers, newest first', ContextQuery, Type.Array(Context), async (request, q) => {
    const tz = request.principal.timezone;
    const range = reportRange(q ?? {}, tz, 7, 366);
    const r = await contextReport(ctx.db, request.principal.accountId, {
      ...range,
      skip: q?.Skip ?? 0,
      limit: q?.Limit ?? 10_000,
      ruleName: textFilter(q?.ContextRuleName),
      receiver: phoneFilter(q?.Receiver),
      requestId: textFilter(q?.RequestUniqueId),
    });
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

  report(
    '/consolidatedreporting',
    'Totals per day (Group=false) or per month (Group=true)',
    ConsolidatedQuery,
    Type.Array(Consolidated),
    async (request, q) => {
      const tz = request.principal.timezone;
      const monthly = flag('Group', q?.Group, false) === true;
      const range = reportRange(q ?? {}, tz, monthly ? 365 : 30, 366);
      const slices = await consolidatedSlices(ctx.db, request.principal.accountId, range.from, range.to);
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
    },
  );
}
