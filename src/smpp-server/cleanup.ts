import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';

/**
 * What the SMPP server keeps beside a message (smpp_submits) goes with the
 * message: once the retention (RETENTION_MESSAGES_DAYS, src/retention) has
 * deleted a message, its SMPP record is deleted too. Only records older than
 * the retention period are looked at, a thousand at a time.
 */
export async function dropOrphanSubmits(db: Kysely<Database>, olderThanMs: number, now: number = Date.now()): Promise<number> {
  const old = await db
    .selectFrom('smpp_submits as s')
    .leftJoin('messages as m', 'm.id', 's.message_id')
    .select('s.message_id')
    .where('s.created_at', '<', now - olderThanMs)
    .where('m.id', 'is', null)
    .limit(1000)
    .execute();
  if (old.length === 0) return 0;
  await db
    .deleteFrom('smpp_submits')
    .where(
      'message_id',
      'in',
      old.map((o) => o.message_id),
    )
    .execute();
  return old.length;
}
