import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';

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

export async function getBalance(db: Executor, accountId: number): Promise<number> {
  const row = await db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.balance;
}
