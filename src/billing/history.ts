import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';

/**
 * Balance queries of the legacy /credits and /balancehistory that
 * src/billing and src/accounts do not have yet: sub-accounts of a reseller
 * and the ledger with running balances (transfers: src/billing/transfer.ts).
 */

/** A sub-account (accounts.parent_id) of the account, by id or by exact name. */
export async function findChild(db: Executor, parentId: number, idOrName: string): Promise<{ id: number; balance: number } | null> {
  const clean = idOrName.trim();
  const base = db.selectFrom('accounts').select(['id', 'balance']).where('parent_id', '=', parentId);
  const row =
    (/^\d{1,15}$/.test(clean) ? await base.where('id', '=', Number(clean)).executeTakeFirst() : undefined) ??
    (await base.where('name', '=', clean).orderBy('id').executeTakeFirst());
  return row ? { id: Number(row.id), balance: row.balance } : null;
}

/**
 * The account's ledger between two moments, newest first, each entry with
 * the balance right after it (derived from the current balance and the
 * entries since).
 */
export async function ledgerHistory(db: Executor, accountId: number, q: { from: number; to: number; skip: number; limit: number }) {
  const account = await db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirstOrThrow();
  const after = await db
    .selectFrom('ledger')
    .select(sql<number | string | null>`sum(amount)`.as('s'))
    .where('account_id', '=', accountId)
    .where('created_at', '>', q.to)
    .executeTakeFirst();
  const base = db.selectFrom('ledger').where('account_id', '=', accountId).where('created_at', '>=', q.from).where('created_at', '<=', q.to);
  const count = await base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst();
  const total = Number(count?.n ?? 0);
  // Past the last entry: nothing to read (and skip + limit stays below the number of rows).
  if (q.skip >= total) return { total, entries: [] };
  const all = await base
    .select(['id', 'amount', 'reason', 'request_id', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.skip + q.limit)
    .execute();
  let balance = account.balance - Number(after?.s ?? 0);
  const entries = all.map((e) => {
    const entry = { amount: e.amount, reason: e.reason, requestId: e.request_id, at: e.created_at, balanceAfter: balance };
    balance -= e.amount;
    return entry;
  });
  return { total, entries: entries.slice(q.skip) };
}
