import { sql } from 'kysely';
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

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** A listing's view of an account: the operator view plus its parent (a reseller's child user) and dates. */
export function listedAccount(row: AccountRow) {
  return {
    ...publicAccount(row),
    parentId: row.parent_id === null ? null : Number(row.parent_id),
    createdAt: iso(row.created_at) as string,
    deactivatedAt: iso(row.deactivated_at),
  };
}

export interface AccountQuery {
  skip: number;
  limit: number;
  /** Part of the name, any case (ASCII letters; others as written). */
  name?: string | undefined;
  status?: 'active' | 'deactivated' | 'all' | undefined;
  /** newest: latest created first (default); id: ascending id. */
  order?: 'newest' | 'id' | undefined;
}

/** LIKE pattern matching `text` anywhere, with LIKE's own characters taken literally (escape '\'). */
const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** One page of accounts and how many match. */
export async function listAccounts(db: Executor, q: AccountQuery): Promise<{ records: ReturnType<typeof listedAccount>[]; total: number }> {
  const base = db
    .selectFrom('accounts')
    .$if(q.name !== undefined, (b) => b.where(sql`lower(name)`, 'like', sql`${likePattern(q.name ?? '')} escape '\\'`))
    .$if(q.status === 'active', (b) => b.where('active', '=', 1))
    .$if(q.status === 'deactivated', (b) => b.where('active', '=', 0));
  const ordered = q.order === 'id' ? base.orderBy('id', 'asc') : base.orderBy('created_at', 'desc').orderBy('id', 'desc');
  const [rows, total] = await Promise.all([
    ordered.selectAll().offset(q.skip).limit(q.limit).execute(),
    base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { records: rows.map(listedAccount), total: Number(total?.n ?? 0) };
}

/**
 * Deactivates (active = false) or reactivates an account. Doing it again
 * changes nothing (a deactivated account keeps its first deactivation time).
 * The caller clears the key cache (src/accounts/api-keys.ts).
 */
export async function setAccountActive(db: Executor, accountId: number, active: boolean): Promise<AccountRow> {
  await db
    .updateTable('accounts')
    .set(active ? { active: 1, deactivated_at: null } : { active: 0, deactivated_at: Date.now() })
    .where('id', '=', accountId)
    .where('active', '=', active ? 0 : 1)
    .execute();
  return getAccount(db, accountId);
}
