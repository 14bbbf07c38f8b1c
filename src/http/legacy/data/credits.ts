import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/tables.ts';
import type { Executor } from '../../../db/executor.ts';
import { DomainError } from '../../../shared/errors.ts';

/**
 * Balance queries of the legacy /credits and /balancehistory that
 * src/billing and src/accounts do not have yet: sub-accounts of a reseller,
 * credit transfers between them, and the ledger with running balances.
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

export type TransferRefusal = 'RESELLER_BALANCE' | 'CHILD_BALANCE';

export class TransferError extends DomainError {
  constructor(readonly refusal: TransferRefusal) {
    super(
      'INSUFFICIENT_BALANCE',
      refusal === 'RESELLER_BALANCE' ? 'The reseller lacks the balance for this transfer.' : 'The sub-account lacks the balance to return.',
    );
  }
}

/**
 * Moves `amount` micro-units from the reseller to its sub-account (negative:
 * back to the reseller) in one transaction, with a ledger entry on each
 * side. The debit is conditional on the balance, so two transfers at once
 * cannot overdraw. Returns the sub-account's new balance.
 */
export async function transferCredits(db: Kysely<Database>, resellerId: number, childId: number, amount: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const from = amount > 0 ? resellerId : childId;
    const to = amount > 0 ? childId : resellerId;
    const value = Math.abs(amount);
    const debited = await tx
      .updateTable('accounts')
      .set({ balance: sql`balance - ${value}` })
      .where('id', '=', from)
      .where('balance', '>=', value)
      .$if(from === childId, (q) => q.where('parent_id', '=', resellerId))
      .executeTakeFirst();
    if (Number(debited.numUpdatedRows) === 0) throw new TransferError(amount > 0 ? 'RESELLER_BALANCE' : 'CHILD_BALANCE');
    await tx
      .updateTable('accounts')
      .set({ balance: sql`balance + ${value}` })
      .where('id', '=', to)
      .execute();
    const now = Date.now();
    await tx
      .insertInto('ledger')
      .values([
        { account_id: from, amount: -value, reason: `transfer to account ${to}`, request_id: null, created_at: now },
        { account_id: to, amount: value, reason: `transfer from account ${from}`, request_id: null, created_at: now },
      ])
      .execute();
    const child = await tx.selectFrom('accounts').select('balance').where('id', '=', childId).executeTakeFirstOrThrow();
    return child.balance;
  });
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
