import type { Executor } from '../db/executor.ts';

/**
 * The account's blocklist: numbers it must never message. Accept drops
 * them from every send, on both interfaces, as BLOCKED and not charged
 * (docs/decisions.md). Phones are stored in the
 * international form the messages use (55 + area code + number); callers
 * normalise them first.
 */
export interface BlockedPhone {
  phone: string;
  createdAt: number;
}

/** Adds a phone; returns false when it was already blocked. */
export async function blockPhone(db: Executor, accountId: number, phone: string): Promise<boolean> {
  const res = await db
    .insertInto('blocklist')
    .values({ account_id: accountId, phone, created_at: Date.now() })
    .onConflict((oc) => oc.columns(['account_id', 'phone']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Removes a phone; returns false when it was not blocked. */
export async function unblockPhone(db: Executor, accountId: number, phone: string): Promise<boolean> {
  const res = await db.deleteFrom('blocklist').where('account_id', '=', accountId).where('phone', '=', phone).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The account's blocked phones, newest first; with `phone`, that entry only (empty when not blocked). */
export async function listBlocked(db: Executor, accountId: number, phone?: string): Promise<BlockedPhone[]> {
  const rows = await db
    .selectFrom('blocklist')
    .select(['phone', 'created_at'])
    .where('account_id', '=', accountId)
    .$if(phone !== undefined, (q) => q.where('phone', '=', phone ?? ''))
    .orderBy('created_at', 'desc')
    .orderBy('phone')
    .execute();
  return rows.map((r) => ({ phone: r.phone, createdAt: r.created_at }));
}
