import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import type { Executor } from '../db/executor.ts';
import { isUniqueViolation } from '../db/unique.ts';
import { createAccount } from '../accounts/accounts.ts';
import { issueApiKey } from '../accounts/api-keys.ts';
import { addLedgerEntry, lockBalances } from '../billing/ledger.ts';
import { fromMicros } from '../billing/money.ts';
import { DomainError, notFound, validation } from '../common/errors.ts';
import { hashPassword, hashingFor } from './password.ts';
import { checkChildUser, emailKey, type ChildUserInput, type NewChildUser } from './validate.ts';
import type { ChildUserRow, ChildUserTables } from './tables.ts';
import { transferCredits, TransferError } from '../billing/transfer.ts';

/** A child user as the gateway answers it (`/child-users`); `id` is the child's account id. */
export interface PublicChildUser {
  id: number;
  fullName: string;
  email: string;
  phoneNumber: string;
  document: string;
  role: 'CUSTOMER' | 'RESELLER';
  parentUserId: number;
}

/** The reseller that owns the child users: the caller of every operation here. */
export interface Reseller {
  accountId: number;
  timezone: string;
}

type ChildDb = Kysely<Database & ChildUserTables>;
const childDb = (db: Executor): ChildDb => (db as Kysely<Database>).withTables<ChildUserTables>();

const EMAIL_TAKEN = 'email: is already used by another child user';

const publicChildUser = (row: ChildUserRow, role: 'CUSTOMER' | 'RESELLER'): PublicChildUser => ({
  id: Number(row.account_id),
  fullName: row.full_name,
  email: row.email,
  phoneNumber: row.phone,
  document: row.document,
  role,
  parentUserId: Number(row.parent_id),
});

/**
 * E-mails are unique across all child users, whoever their reseller (it is
 * what the child's panel login is found by). The one lookup here that is
 * not scoped to an account: it answers only yes or no.
 */
export async function emailTaken(db: Executor, email: string): Promise<boolean> {
  const row = await childDb(db).selectFrom('child_users').select('account_id').where('email_key', '=', emailKey(email)).executeTakeFirst();
  return row !== undefined;
}

/**
 * Every problem of a create request in one answer: the edge's type errors
 * (`earlier`), each field's own check, and a taken e-mail.
 */
export async function checkNewChildUser(db: Executor, input: ChildUserInput, earlier: string[]): Promise<NewChildUser> {
  const { problems, value } = checkChildUser(input);
  const all = [...earlier, ...problems];
  const email = input.email;
  if (email !== undefined && !problems.some((p) => p.startsWith('email:')) && (await emailTaken(db, email))) all.push(EMAIL_TAKEN);
  if (all.length || !value) throw validation(all.length ? all : ['body: invalid child user']);
  return value;
}

const insufficient = (field: string, who: string, balance: number, amount: number) => {
  const text = `${field}: ${who} balance (${fromMicros(balance)}) does not cover ${fromMicros(amount)}`;
  return new DomainError('INSUFFICIENT_BALANCE', text, [text]);
};

/**
 * Creates a child user (`POST /child-users`): a CUSTOMER account under the reseller,
 * with the reseller's time zone and routes, its owner credential (password
 * hashed), and `limit` moved from the reseller's balance with a ledger entry
 * on both sides, all in one transaction.
 */
export async function createChildUser(db: Kysely<Database>, dialect: Dialect, reseller: Reseller, input: NewChildUser): Promise<PublicChildUser> {
  // The slow hash runs before the transaction, so no lock waits for it.
  const passwordHash = await hashingFor(`account:${reseller.accountId}`, () => hashPassword(input.password));
  try {
    return await db.transaction().execute(async (tx) => {
      const balance = (await lockBalances(tx, dialect, [reseller.accountId])).get(reseller.accountId);
      if (balance === undefined) throw notFound(`Account ${reseller.accountId}`);
      if (balance < input.limit) throw insufficient('limit', 'the reseller', balance, input.limit);
      if (await emailTaken(tx, input.email)) throw validation([EMAIL_TAKEN]);

      const account = await createAccount(tx, {
        name: input.fullName,
        role: 'CUSTOMER',
        timezone: reseller.timezone,
        balance: 0,
        parentId: reseller.accountId,
      });
      const childId = Number(account.id);
      const routes = await tx.selectFrom('account_routes').select('route_id').where('account_id', '=', reseller.accountId).execute();
      if (routes.length)
        await tx
          .insertInto('account_routes')
          .values(routes.map((r) => ({ account_id: childId, route_id: r.route_id })))
          .execute();

      const row = await childDb(tx)
        .insertInto('child_users')
        .values({
          account_id: childId,
          parent_id: reseller.accountId,
          full_name: input.fullName,
          email: input.email,
          email_key: emailKey(input.email),
          phone: input.phoneNumber,
          document: input.document,
          owner_full_name: input.ownerCredentialFullName,
          owner_email: input.ownerCredentialEmail,
          owner_phone: input.ownerCredentialPhoneNumber,
          password_hash: passwordHash,
          created_at: Date.now(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();

      if (input.limit > 0) {
        await addLedgerEntry(tx, reseller.accountId, -input.limit, `allotment to child user ${childId}`, null);
        await addLedgerEntry(tx, childId, input.limit, `allotment from reseller ${reseller.accountId}`, null);
      }
      return publicChildUser(row, account.role);
    });
  } catch (err) {
    // Two concurrent creates with one e-mail: the unique index decides.
    if (isUniqueViolation(err)) throw validation([EMAIL_TAKEN]);
    throw err;
  }
}

/** The reseller's child users, oldest first. */
export async function listChildUsers(
  db: Executor,
  resellerId: number,
  page: { skip: number; limit: number },
): Promise<{ records: PublicChildUser[]; total: number }> {
  const base = childDb(db)
    .selectFrom('child_users')
    .innerJoin('accounts', 'accounts.id', 'child_users.account_id')
    .where('child_users.parent_id', '=', resellerId);
  const rows = await base.selectAll('child_users').select('accounts.role').orderBy('child_users.account_id').offset(page.skip).limit(page.limit).execute();
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
  return { records: rows.map((r) => publicChildUser(r, r.role)), total: Number(count?.n ?? 0) };
}

/** One child user of the reseller; another reseller's child (or any other account) is NOT_FOUND. */
export async function getChildUser(db: Executor, resellerId: number, childId: number): Promise<PublicChildUser> {
  const row = await childDb(db)
    .selectFrom('child_users')
    .innerJoin('accounts', 'accounts.id', 'child_users.account_id')
    .selectAll('child_users')
    .select('accounts.role')
    .where('child_users.parent_id', '=', resellerId)
    .where('child_users.account_id', '=', childId)
    .executeTakeFirst();
  if (!row) throw notFound(`Child user ${childId}`);
  return publicChildUser(row, row.role);
}

/** Issues an API key for a child user of the reseller; the key is shown only in this answer. */
export async function issueChildApiKey(db: Kysely<Database>, resellerId: number, childId: number, allowedIps: string[] | undefined) {
  return db.transaction().execute(async (tx) => {
    await getChildUser(tx, resellerId, childId);
    return issueApiKey(tx, childId, allowedIps);
  });
}

export interface CreditMove {
  childUserId: number;
  /** Signed amount moved to the child (negative: back to the reseller). */
  amount: number;
  /** The child's balance after the move. */
  balance: number;
  resellerBalance: number;
}

/**
 * Moves credits between the reseller and its child in one transaction:
 * a positive amount goes reseller -> child, a negative one child ->
 * reseller. Neither balance may go below zero; both sides get a ledger entry.
 */
export async function moveChildCredits(db: Kysely<Database>, dialect: Dialect, resellerId: number, childId: number, amount: number): Promise<CreditMove> {
  if (amount === 0) throw validation(['amount: must not be zero']);
  await getChildUser(db, resellerId, childId);
  try {
    const after = await transferCredits(db, dialect, resellerId, childId, amount);
    return { childUserId: childId, amount: fromMicros(amount), balance: fromMicros(after.child), resellerBalance: fromMicros(after.reseller) };
  } catch (err) {
    if (err instanceof TransferError)
      throw insufficient('amount', err.shortfall === 'RESELLER_BALANCE' ? 'the reseller' : 'the child user', err.available, err.needed);
    throw err;
  }
}
