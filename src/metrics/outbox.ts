import { sql, type Kysely } from 'kysely';
import type { Database, MessageStatus } from '../db/tables.ts';

/** Statuses of the messages waiting in the outbox, as the gauge reports them. */
export const WAITING = ['QUEUED', 'SCHEDULED', 'SENDING'] as const satisfies readonly MessageStatus[];

/**
 * Messages waiting in the outbox per connector and status, in every gateway
 * process sharing the database (no account filter: an operator figure).
 * One grouped query over the unfinished messages only: the status list is
 * spelled literally, as in the partial index messages_claim_idx
 * (src/db/migrations/005_claim_index.ts), so that both databases count from
 * that index and the cost follows the outbox, not the message history.
 */
export async function waitingMessages(db: Kysely<Database>): Promise<{ connector: string; status: MessageStatus; n: number }[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['connector', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
    .groupBy(['connector', 'status'])
    .execute();
  return rows.map((r) => ({ connector: r.connector, status: r.status, n: Number(r.n) }));
}
