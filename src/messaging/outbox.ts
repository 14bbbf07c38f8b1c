import { sql, type Kysely } from 'kysely';
import type { Database, MessageStatus } from '../db/tables.ts';

/** Statuses of the messages waiting in the outbox, as the gauge reports them. */
export const WAITING = ['QUEUED', 'SCHEDULED', 'SENDING'] as const satisfies readonly MessageStatus[];

/**
 * Messages waiting in the outbox per connector and status, in every gateway
 * process sharing the database (no account filter: an operator figure).
 * One query over the unfinished messages only: the status list is spelled
 * literally, as in the partial index messages_claim_idx
 * (src/db/migrations/005_claim_index.ts), so that both databases count from
 * that index and the cost follows the outbox, not the message history.
 * Grouped by connector alone (the index's first column) with a sum per
 * status: grouping by status too made SQLite build a temporary B-tree of
 * every waiting message, 64 MB more memory for a million of them.
 */
export async function waitingMessages(db: Kysely<Database>): Promise<{ connector: string; status: MessageStatus; n: number }[]> {
  const count = (status: MessageStatus) => sql<number | string | null>`sum(case when status = ${sql.lit(status)} then 1 else 0 end)`.as(status);
  const rows = await db
    .selectFrom('messages')
    .select(['connector', count('QUEUED'), count('SCHEDULED'), count('SENDING')])
    .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
    .groupBy('connector')
    .execute();
  return rows.flatMap((r) => WAITING.map((status) => ({ connector: r.connector, status, n: Number(r[status] ?? 0) })).filter((w) => w.n > 0));
}

/** Carrier ids of a connection's messages it accepted and has not reported final yet (a carrier asks after a restart). */
export async function unfinishedCarrierIds(db: Kysely<Database>, connector: string): Promise<string[]> {
  const rows = await db
    .selectFrom('carrier_ids')
    .innerJoin('messages', 'messages.id', 'carrier_ids.message_id')
    .select('carrier_ids.carrier_id')
    .where('carrier_ids.connector', '=', connector)
    .where('messages.status', '=', 'SENT')
    .execute();
  return rows.map((r) => r.carrier_id);
}
