import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import type { Dialect } from '../db/database.ts';

/**
 * Every change of a balance is a ledger entry written in the same
 * transaction as the balance update: the ledger sums to the balance.
 * `amount` is signed micro-units (negative = debit).
 */
export async function addLedgerEntry(db: Executor, accountId: number, amount: number, reason: string, requestId: string | null): Promise<number> {
  const row = await db
    .updateTable('accounts')
    .set({ balance: sql`balance + ${amount}` })
    .where('id', '=', accountId)
    .returning('balance')
    .executeTakeFirstOrThrow();
  await db.insertInto('ledger').values({ account_id: accountId, amount, reason, request_id: requestId, created_at: Date.now() }).execute();
  return row.balance;
}

/** Gives back what messages cost (a carrier's rejection, a cancel), as a ledger entry; nothing when they cost nothing. */
export async function refund(db: Executor, accountId: number, amount: number, requestId: string, reason: string): Promise<void> {
  if (amount > 0) await addLedgerEntry(db, accountId, amount, reason, requestId);
}

export async function getBalance(db: Executor, accountId: number): Promise<number> {
  const row = await db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.balance;
}

/**
 * Locks the accounts rows in id order (PostgreSQL; SQLite runs one
 * transaction at a time), the same order the send path locks them in, so
 * two transactions moving credits never deadlock.
 */
export async function lockBalances(tx: Executor, dialect: Dialect, accountIds: number[]): Promise<Map<number, number>> {
  const rows = await tx
    .selectFrom('accounts')
    .select(['id', 'balance'])
    .where('id', 'in', accountIds)
    .orderBy('id')
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .execute();
  return new Map(rows.map((r) => [Number(r.id), r.balance]));
}
