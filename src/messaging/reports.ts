import { sql, type SelectQueryBuilder } from 'kysely';
import type { Executor } from '../db/executor.ts';
import type { MessageStatus } from '../db/tables.ts';
import { validation } from '../common/errors.ts';
import { parseReportDate } from './schedule.ts';
import { reportedContent } from '../tokens/mask.ts';

export const STATUSES: MessageStatus[] = ['SCHEDULED', 'QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'UNDELIVERED', 'FAILED', 'EXPIRED', 'CANCELLED', 'BLOCKED'];
const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const TWO_DAYS = 2 * 24 * 3600 * 1000;

export interface ReportQuery {
  startDate?: string | undefined;
  endDate?: string | undefined;
  skip?: number | undefined;
  limit?: number | undefined;
  content?: string | undefined;
  custom?: string | undefined;
  tag?: string | undefined;
  requestId?: string | undefined;
  receiver?: string | undefined;
  sender?: string | undefined;
  statuses?: string | string[] | undefined;
}

interface Window {
  from: number;
  to: number;
  skip: number;
  limit: number;
}

/** Date range and page: startDate defaults to 2 days ago (UTC), no end by default, limit 100. */
function window(q: ReportQuery): Window {
  const problems: string[] = [];
  const now = Date.now();
  let from = now - TWO_DAYS;
  let to = Number.MAX_SAFE_INTEGER;
  if (q.startDate) {
    const v = parseReportDate(q.startDate, false);
    if (v === null) problems.push(`startDate: "${q.startDate}" is not a date (YYYY-MM-DD)`);
    else from = v;
  }
  if (q.endDate) {
    const v = parseReportDate(q.endDate, true);
    if (v === null) problems.push(`endDate: "${q.endDate}" is not a date (YYYY-MM-DD)`);
    else to = v;
  }
  if (problems.length === 0 && from > to) problems.push('endDate: must not be before startDate');
  if (problems.length) throw validation(problems);
  return { from, to, skip: q.skip ?? 0, limit: q.limit ?? DEFAULT_LIMIT };
}

const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function statusesOf(q: ReportQuery): MessageStatus[] | null {
  if (q.statuses === undefined) return null;
  const list = (Array.isArray(q.statuses) ? q.statuses : [q.statuses])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const bad = list.filter((s) => !STATUSES.includes(s as MessageStatus));
  if (bad.length) throw validation([`statuses: unknown status ${bad.join(', ')}; use ${STATUSES.join(', ')}`]);
  // `statuses=` (nothing chosen) is no filter; an empty IN () is a syntax error on PostgreSQL.
  return list.length ? (list as MessageStatus[]) : null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** totalRecords: every record matching the filters, whatever the page. */
export async function countOf<DB, TB extends keyof DB, O>(base: SelectQueryBuilder<DB, TB, O>): Promise<number> {
  const row = await base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst();
  return Number((row as { n?: number | string } | undefined)?.n ?? 0);
}

/** The sent report's rows before paging: the account's messages the filters match (also the panel's CSV export, src/panel/export.ts). */
export function sentMessages(db: Executor, accountId: number, q: ReportQuery) {
  const w = window(q);
  const statuses = statusesOf(q);
  const base = db
    .selectFrom('messages as m')
    .innerJoin('routes as r', 'r.id', 'm.route_id')
    .where('m.account_id', '=', accountId)
    .where('m.created_at', '>=', w.from)
    .where('m.created_at', '<=', w.to)
    .$if(q.receiver !== undefined, (b) => b.where('m.receiver', '=', (q.receiver ?? '').replace(/^\+/, '')))
    .$if(q.content !== undefined, (b) => b.where(sql`lower(${reportedContent('m')})`, 'like', sql`${likePattern(q.content ?? '')} escape '\\'`))
    .$if(q.custom !== undefined, (b) => b.where('m.custom', '=', q.custom ?? ''))
    .$if(q.tag !== undefined, (b) => b.where('m.tag', '=', q.tag ?? ''))
    .$if(q.requestId !== undefined, (b) => b.where('m.request_id', '=', (q.requestId ?? '').toLowerCase()))
    .$if(statuses !== null, (b) => b.where('m.status', 'in', statuses ?? []));
  return { base, window: w };
}

/** Sent report: the account's messages, newest first; one-time codes of spent tokens masked (src/tokens/mask.ts), in the text and its filter. */
export async function sentReport(db: Executor, accountId: number, q: ReportQuery) {
  const { base, window: w } = sentMessages(db, accountId, q);
  const total = await countOf(base);
  const rows = await base
    .select([
      'm.id',
      'm.receiver',
      reportedContent('m').as('content'),
      'm.created_at',
      'm.sent_at',
      'm.request_id',
      'm.schedule_at',
      'm.custom',
      'm.tag',
      'm.status',
      'm.status_details',
      'r.product_name',
      'r.display_name',
    ])
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(w.limit)
    .offset(w.skip)
    .execute();
  return {
    total,
    records: rows.map((m) => ({
      id: m.id,
      receiver: m.receiver,
      content: m.content,
      createdAt: iso(m.created_at),
      sentAt: iso(m.sent_at),
      requestId: m.request_id,
      schedule: iso(m.schedule_at),
      custom: m.custom,
      tag: m.tag,
      status: m.status,
      statusDetails: m.status_details,
      product: m.product_name,
      route: m.display_name,
    })),
  };
}

/** The received report's rows before paging: the account's replies the filters match (also the panel's CSV export). */
export function receivedReplies(db: Executor, accountId: number, q: ReportQuery) {
  const w = window(q);
  const base = db
    .selectFrom('replies')
    .where('account_id', '=', accountId)
    .where('received_at', '>=', w.from)
    .where('received_at', '<=', w.to)
    .$if(q.sender !== undefined, (b) => b.where('sender', '=', (q.sender ?? '').replace(/^\+/, '')))
    .$if(q.content !== undefined, (b) => b.where(sql`lower(content)`, 'like', sql`${likePattern(q.content ?? '')} escape '\\'`));
  return { base, window: w };
}

/** Received report: replies matched to the account's messages, newest first. */
export async function receivedReport(db: Executor, accountId: number, q: ReportQuery) {
  const { base, window: w } = receivedReplies(db, accountId, q);
  const total = await countOf(base);
  const rows = await base
    .select(['sender', 'content', 'received_at', 'message_id'])
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(w.limit)
    .offset(w.skip)
    .execute();
  return { total, records: rows.map((r) => ({ sender: r.sender, content: r.content, receivedAt: iso(r.received_at), messageId: r.message_id })) };
}

/** Requests report: one row per request, schedule then createdAt descending (a token request's text was stored masked). */
export async function requestsReport(db: Executor, accountId: number, q: ReportQuery) {
  const w = window(q);
  const base = db
    .selectFrom('requests as q')
    .innerJoin('routes as r', 'r.id', 'q.route_id')
    .where('q.account_id', '=', accountId)
    .where('q.created_at', '>=', w.from)
    .where('q.created_at', '<=', w.to)
    .$if(q.content !== undefined, (b) => b.where(sql`lower(q.content)`, 'like', sql`${likePattern(q.content ?? '')} escape '\\'`))
    .$if(q.custom !== undefined, (b) => b.where('q.custom', '=', q.custom ?? ''))
    .$if(q.tag !== undefined, (b) => b.where('q.tag', '=', q.tag ?? ''))
    .$if(q.requestId !== undefined, (b) => b.where('q.id', '=', (q.requestId ?? '').toLowerCase()));
  const total = await countOf(base);
  const rows = await base
    .select((eb) => [
      'q.id',
      'q.account_id',
      'q.content',
      'q.created_at',
      'q.schedule_at',
      'q.custom',
      'q.tag',
      'q.message_count',
      'r.product_id',
      'r.product_name',
      'q.route_id',
      'r.display_name',
      eb.selectFrom('messages').select(sql<number | null>`min(sent_at)`.as('s')).whereRef('messages.request_id', '=', 'q.id').as('sent_at'),
    ])
    .orderBy('q.schedule_at', 'desc')
    .orderBy('q.created_at', 'desc')
    .orderBy('q.id', 'desc')
    .limit(w.limit)
    .offset(w.skip)
    .execute();
  return {
    total,
    records: rows.map((r) => ({
      userId: Number(r.account_id),
      content: r.content,
      createdAt: iso(r.created_at),
      sentAt: iso(r.sent_at === null ? null : Number(r.sent_at)),
      requestCount: r.message_count,
      requestId: r.id,
      schedule: iso(r.schedule_at),
      custom: r.custom,
      tag: r.tag,
      productId: r.product_id,
      product: r.product_name,
      routeId: Number(r.route_id),
      route: r.display_name,
    })),
  };
}
