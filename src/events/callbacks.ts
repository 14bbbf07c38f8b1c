import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import { checkedUrl, publicDelivery, type UrlCheck } from './webhooks.ts';
import { eventsDb } from './tables.ts';

/**
 * Legacy v2 callbacks (docs/webhooks.md): the URLs the legacy panel
 * let a customer set, one for replies and one for status changes. The
 * operator sets them per account; they are delivered by the same outbox
 * and retry schedule as webhooks, in the legacy payload shape, unsigned.
 */
export interface Callbacks {
  replyUrl: string | null;
  statusUrl: string | null;
}

/** Replaces the account's callback URLs; an absent, null or empty URL turns that callback off. */
export async function setCallbacks(
  db: Executor,
  check: UrlCheck,
  accountId: number,
  input: { replyUrl?: string | null | undefined; statusUrl?: string | null | undefined },
): Promise<Callbacks> {
  const replyUrl = input.replyUrl ? checkedUrl(check, 'replyUrl', input.replyUrl) : null;
  const statusUrl = input.statusUrl ? checkedUrl(check, 'statusUrl', input.statusUrl) : null;
  const edb = eventsDb(db);
  const now = Date.now();
  if (replyUrl === null && statusUrl === null) {
    await edb.deleteFrom('account_callbacks').where('account_id', '=', accountId).execute();
  } else {
    await edb
      .insertInto('account_callbacks')
      .values({ account_id: accountId, reply_url: replyUrl, status_url: statusUrl, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ reply_url: replyUrl, status_url: statusUrl, updated_at: now }))
      .execute();
  }
  return { replyUrl, statusUrl };
}

export async function getCallbacks(db: Executor, accountId: number): Promise<Callbacks> {
  const row = await eventsDb(db).selectFrom('account_callbacks').select(['reply_url', 'status_url']).where('account_id', '=', accountId).executeTakeFirst();
  return { replyUrl: row?.reply_url ?? null, statusUrl: row?.status_url ?? null };
}

/** The legacy callbacks' delivery log of the account, newest first. */
export async function listCallbackDeliveries(db: Executor, accountId: number, page: { skip: number; limit: number }) {
  const base = eventsDb(db).selectFrom('webhook_deliveries').where('account_id', '=', accountId).where('format', '=', 'legacy');
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.skip).limit(page.limit).execute(),
    base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { records: rows.map((r) => ({ ...publicDelivery(r), url: r.url })), total: Number(total?.n ?? 0) };
}
