import type { Executor } from '../db/executor.ts';
import type { AccountRow } from '../db/tables.ts';
import { fromMicros } from '../billing/money.ts';
import { notFound } from '../common/errors.ts';
import { addLedgerEntry } from '../billing/ledger.ts';

export interface NewAccount {
  name: string;
  role: 'CUSTOMER' | 'RESELLER';
  timezone: string;
  /** Opening balance in micro-units. */
  balance: number;
  parentId?: number | null;
}

export async function createAccount(db: Executor, input: NewAccount): Promise<AccountRow> {
  const now = Date.now();
  const row = await db
    .insertInto('accounts')
    .values({ name: input.name, role: input.role, timezone: input.timezone, balance: 0, parent_id: input.parentId ?? null, active: 1, created_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (input.balance !== 0) await addLedgerEntry(db, Number(row.id), input.balance, 'opening balance', null);
  return getAccount(db, Number(row.id));
}

export async function getAccount(db: Executor, accountId: number): Promise<AccountRow> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
  if (!row) throw notFound(`Account ${accountId}`);
  return row;
}

/** The operator API's view of an account. */
export function publicAccount(row: AccountRow) {
  return { id: Number(row.id), name: row.name, role: row.role, timezone: row.timezone, balance: fromMicros(row.balance), active: row.active === 1 };
}
