import { sql, type Transaction } from 'kysely';
import { defineJob } from '../db/jobs.ts';
import type { Database, MessageStatus } from '../db/tables.ts';
import { eventsDb } from '../events/tables.ts';

/**
 * The deleting steps of the retention job (src/retention/retention.ts),
 * each a small transaction over one batch, so that neither database is held
 * for long and the accept, claims and receipts go on between them. Each
 * step is idempotent: rows deleted by another process already are simply
 * not found.
 */

/**
 * Statuses a message never leaves (docs/operations.md): the carrier's
 * final receipt (`DELIVERED`, `UNDELIVERED`, `EXPIRED`), refused or failed
 * for good (`FAILED`), cancelled before sending, or blocked at accept.
 * `SCHEDULED`, `QUEUED` and `SENDING` are waiting or in flight, and `SENT`
 * still waits for its receipt: those are never deleted.
 */
export const FINAL_STATUSES: readonly MessageStatus[] = ['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED', 'CANCELLED', 'BLOCKED'];
const FINAL = new Set<string>(FINAL_STATUSES);

/** Where a walk over an account's old messages stopped: (created_at, id) of the last row read. */
export type MessageCursor = [number, string];

export interface MessagesBatch {
  accountId: number;
  /** Messages created and finished before this time (ms) go. */
  cutoff: number;
  after: MessageCursor | null;
  limit: number;
}

export interface MessagesBatchResult {
  messages: number;
  statusLog: number;
  requests: number;
  /** Where the next batch starts; null when the account's old messages have all been read. */
  next: MessageCursor | null;
}

/**
 * One batch of an account's messages created before the cutoff, oldest
 * first (index messages_account_idx): those in a final status since before
 * the cutoff are deleted with their status history, and so are the
 * requests left without messages. A message whose status changes have not
 * been fanned out to webhooks yet stays until they have been.
 */
async function deleteMessages(tx: Transaction<Database>, batch: MessagesBatch): Promise<MessagesBatchResult> {
  const { accountId, cutoff, after, limit } = batch;
  const rows = await tx
    .selectFrom('messages')
    .select(['id', 'request_id', 'status', 'status_at', 'created_at'])
    .where('account_id', '=', accountId)
    .where('created_at', '<', cutoff)
    .$if(after !== null, (q) =>
      q.where((eb) => {
        const [createdAt, id] = after as MessageCursor;
        return eb.or([eb('created_at', '>', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '>', id)])]);
      }),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  const last = rows.at(-1);
  const next: MessageCursor | null = rows.length === limit && last ? [Number(last.created_at), last.id] : null;
  const finished = rows.filter((r) => FINAL.has(r.status) && Number(r.status_at) < cutoff).map((r) => r.id);
  if (finished.length === 0) return { messages: 0, statusLog: 0, requests: 0, next };

  const pending = await eventsDb(tx)
    .selectFrom('status_log')
    .select('message_id')
    .where('message_id', 'in', finished)
    .where('fanned_out', '=', sql.lit(0))
    .execute();
  const waiting = new Set(pending.map((r) => r.message_id));
  const ids = finished.filter((id) => !waiting.has(id));
  if (ids.length === 0) return { messages: 0, statusLog: 0, requests: 0, next };

  const statusLog = await tx.deleteFrom('status_log').where('message_id', 'in', ids).executeTakeFirst();
  // The status is checked again: only a final one is ever deleted.
  const messages = await tx.deleteFrom('messages').where('id', 'in', ids).where('status', 'in', FINAL_STATUSES).executeTakeFirst();
  const gone = new Set(ids);
  const requestIds = [...new Set(rows.filter((r) => gone.has(r.id)).map((r) => r.request_id))];
  const requests = await tx
    .deleteFrom('requests')
    .where('id', 'in', requestIds)
    .where('account_id', '=', accountId)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('messages').select('messages.id').whereRef('messages.request_id', '=', 'requests.id'))))
    .executeTakeFirst();
  return {
    messages: Number(messages.numDeletedRows),
    statusLog: Number(statusLog.numDeletedRows),
    requests: Number(requests.numDeletedRows),
    next,
  };
}

export const deleteMessagesJob = defineJob(import.meta.url, 'deleteMessagesJob', async (tx, _dialect, batches: MessagesBatch[]) => {
  const results: MessagesBatchResult[] = [];
  for (const batch of batches) results.push(await deleteMessages(tx, batch));
  return results;
});

export interface RepliesBatch {
  cutoff: number;
  afterId: number;
  limit: number;
}

/**
 * One batch of received texts in id order: those received before the
 * cutoff and already fanned out to webhooks are deleted (every account's,
 * and unmatched texts). Ids follow arrival, so the walk stops at a batch
 * received entirely after the cutoff.
 */
export interface RepliesBatchResult {
  replies: number;
  next: number | null;
}

async function deleteReplies(tx: Transaction<Database>, batch: RepliesBatch): Promise<RepliesBatchResult> {
  const rows = await eventsDb(tx)
    .selectFrom('replies')
    .select(['id', 'received_at', 'fanned_out'])
    .where('id', '>', batch.afterId)
    .orderBy('id')
    .limit(batch.limit)
    .execute();
  const old = rows.filter((r) => Number(r.received_at) < batch.cutoff);
  const ids = old.filter((r) => Number(r.fanned_out) === 1).map((r) => Number(r.id));
  const deleted = ids.length ? Number((await tx.deleteFrom('replies').where('id', 'in', ids).executeTakeFirst()).numDeletedRows) : 0;
  const last = rows.at(-1);
  return { replies: deleted, next: rows.length === batch.limit && old.length > 0 && last ? Number(last.id) : null };
}

export const deleteRepliesJob = defineJob(import.meta.url, 'deleteRepliesJob', async (tx, _dialect, batches: RepliesBatch[]) => {
  const results: RepliesBatchResult[] = [];
  for (const batch of batches) results.push(await deleteReplies(tx, batch));
  return results;
});

/** Where a walk over carrier_ids stopped: its primary key (connector, carrier_id). */
export type CarrierIdCursor = [string, string];

export interface CarrierIdsBatch {
  after: CarrierIdCursor | null;
  limit: number;
}

/**
 * One batch of carrier ids in key order: those whose message is gone are
 * deleted. (A message of several parts has an id per part, and carrier_ids
 * has no index by message, which would cost every send a write: so the
 * table is walked, in batches, after messages were deleted.)
 */
export interface CarrierIdsBatchResult {
  carrierIds: number;
  next: CarrierIdCursor | null;
}

async function deleteCarrierIds(tx: Transaction<Database>, batch: CarrierIdsBatch): Promise<CarrierIdsBatchResult> {
  const { after, limit } = batch;
  const rows = await tx
    .selectFrom('carrier_ids as c')
    .leftJoin('messages as m', 'm.id', 'c.message_id')
    .select(['c.connector', 'c.carrier_id', 'm.id as message'])
    .$if(after !== null, (q) =>
      q.where((eb) => {
        const [connector, carrierId] = after as CarrierIdCursor;
        return eb.or([eb('c.connector', '>', connector), eb.and([eb('c.connector', '=', connector), eb('c.carrier_id', '>', carrierId)])]);
      }),
    )
    .orderBy('c.connector')
    .orderBy('c.carrier_id')
    .limit(limit)
    .execute();
  const orphans = new Map<string, string[]>();
  for (const r of rows) if (r.message === null) orphans.set(r.connector, [...(orphans.get(r.connector) ?? []), r.carrier_id]);
  let deleted = 0;
  for (const [connector, ids] of orphans) {
    const res = await tx
      .deleteFrom('carrier_ids')
      .where('connector', '=', connector)
      .where('carrier_id', 'in', ids)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('messages').select('messages.id').whereRef('messages.id', '=', 'carrier_ids.message_id'))))
      .executeTakeFirst();
    deleted += Number(res.numDeletedRows);
  }
  const last = rows.at(-1);
  return { carrierIds: deleted, next: rows.length === limit && last ? [last.connector, last.carrier_id] : null };
}

export const deleteCarrierIdsJob = defineJob(import.meta.url, 'deleteCarrierIdsJob', async (tx, _dialect, batches: CarrierIdsBatch[]) => {
  const results: CarrierIdsBatchResult[] = [];
  for (const batch of batches) results.push(await deleteCarrierIds(tx, batch));
  return results;
});
