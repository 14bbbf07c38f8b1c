import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import type { MessageStatus } from '../db/tables.ts';
import { countOf } from './reports.ts';
import { reportedContent } from '../tokens/mask.ts';

/**
 * Read models of the legacy reports. They read the same tables as the
 * gateway's reports (src/messaging/reports.ts) with the filters and
 * aggregates the legacy operations take. One-time codes are masked
 * (src/tokens/mask.ts).
 */
export interface Page {
  from: number;
  to: number;
  skip: number;
  limit: number;
}

/** Every record matching the filters, whatever the page. */
/** /detailedreporting: one row per message, newest first. `delivered`: true = DELIVERED only, false = every other status. */
export async function detailedReport(
  db: Executor,
  accountId: number,
  q: Page & { delivered: boolean | null; receiver?: string | undefined; requestId?: string | undefined },
) {
  const base = db
    .selectFrom('messages as m')
    .where('m.account_id', '=', accountId)
    .where('m.created_at', '>=', q.from)
    .where('m.created_at', '<=', q.to)
    .$if(q.delivered === true, (b) => b.where('m.status', '=', 'DELIVERED'))
    .$if(q.delivered === false, (b) => b.where('m.status', '!=', 'DELIVERED'))
    .$if(q.receiver !== undefined, (b) => b.where('m.receiver', '=', q.receiver ?? ''))
    .$if(q.requestId !== undefined, (b) => b.where('m.request_id', '=', q.requestId ?? ''));
  const total = await countOf(base);
  const rows = await base
    .select([
      'm.id',
      'm.request_id',
      'm.sender',
      'm.receiver',
      reportedContent('m').as('content'),
      'm.status',
      'm.status_details',
      'm.segments',
      'm.cost',
      'm.created_at',
      'm.schedule_at',
      'm.sent_at',
      'm.status_at',
    ])
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(q.limit)
    .offset(q.skip)
    .execute();
  return { total, rows };
}

/** /replyreporting: replies matched to the account's messages, with the text they answer. */
export async function replyReport(db: Executor, accountId: number, q: Page & { phone?: string | undefined; requestId?: string | undefined }) {
  const base = db
    .selectFrom('replies as r')
    .leftJoin('messages as m', 'm.id', 'r.message_id')
    .where('r.account_id', '=', accountId)
    .where('r.received_at', '>=', q.from)
    .where('r.received_at', '<=', q.to)
    .$if(q.phone !== undefined, (b) => b.where('r.sender', '=', q.phone ?? ''))
    .$if(q.requestId !== undefined, (b) => b.where('m.request_id', '=', q.requestId ?? ''));
  const total = await countOf(base);
  const rows = await base
    .select([
      'r.id',
      'r.sender as phone',
      'r.content',
      'r.received_at',
      'm.id as message_id',
      'm.request_id',
      reportedContent('m').$castTo<string | null>().as('sent_content'),
      'm.sender',
    ])
    .orderBy('r.received_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(q.limit)
    .offset(q.skip)
    .execute();
  return { total, rows };
}

/** Time slices of the consolidated report: every real time zone offset is a multiple of 15 minutes. */
export const SLICE_MS = 15 * 60_000;

export interface SliceCounts {
  slice: number;
  status: MessageStatus;
  messages: number;
  /** Segments and micro-units charged: without what was refunded or never charged (see `charged`). */
  segments: number;
  cost: number;
}

/**
 * Whether a message's cost stays charged: not when it was cancelled,
 * blocked, or rejected by the carrier at submit (FAILED without ever having
 * been sent). A failure reported by a receipt, after the carrier took the
 * message, stays charged (docs/statuses.md).
 */
const charged = sql<boolean>`not (status in ('CANCELLED', 'BLOCKED') or (status = 'FAILED' and sent_at is null))`;

/**
 * /consolidatedreporting: counts per 15-minute slice and status (and
 * replies per slice); the caller folds slices into the account's local
 * days or months, so the database does no time zone arithmetic.
 */
export async function consolidatedSlices(db: Executor, accountId: number, from: number, to: number) {
  const slice = sql<number | string>`created_at / ${sql.lit(SLICE_MS)}`;
  const messages = await db
    .selectFrom('messages')
    .select([
      slice.as('slice'),
      'status',
      sql<number | string>`count(*)`.as('n'),
      sql<number | string>`sum(case when ${charged} then segments else 0 end)`.as('segments'),
      sql<number | string>`sum(case when ${charged} then cost else 0 end)`.as('cost'),
    ])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', from)
    .where('created_at', '<=', to)
    .groupBy([slice, 'status'])
    .execute();
  const replySlice = sql<number | string>`received_at / ${sql.lit(SLICE_MS)}`;
  const replies = await db
    .selectFrom('replies')
    .select([replySlice.as('slice'), sql<number | string>`count(*)`.as('n')])
    .where('account_id', '=', accountId)
    .where('received_at', '>=', from)
    .where('received_at', '<=', to)
    .groupBy(replySlice)
    .execute();
  return {
    messages: messages.map(
      (r): SliceCounts => ({ slice: Number(r.slice), status: r.status, messages: Number(r.n), segments: Number(r.segments), cost: Number(r.cost) }),
    ),
    replies: replies.map((r) => ({ slice: Number(r.slice), replies: Number(r.n) })),
  };
}
