import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Executor } from '../db/executor.ts';
import type { Database } from '../db/tables.ts';
import type { ChildUserTables } from '../childusers/tables.ts';
import type { Principal } from '../accounts/api-keys.ts';

/** A session ends this long after sign-in, however busy. */
export const SESSION_MAX_MS = 12 * 3600_000;
/** ... or after this long without a request. */
export const SESSION_IDLE_MS = 2 * 3600_000;
/** last_seen_at is written at most this often per session (not on every request). */
const TOUCH_EVERY_MS = 60_000;

/** Who a session belongs to. */
export type Subject =
  | { kind: 'user'; userId: number; email: string; accountId: number | null }
  | { kind: 'child'; accountId: number; email: string }
  | { kind: 'operator-token'; tokenSha256: string };

/** The account a session acts for, as the panel shows it. */
export interface SessionAccount {
  id: number;
  name: string;
  parentId: number | null;
}

/** A live session as the store reads it back. */
export interface LoadedSession {
  subject: Subject;
  email: string;
  operator: boolean;
  csrfSecret: string;
  expiresAt: number;
  /** The account (null for operators). */
  account: SessionAccount | null;
  /** What the session acts as on the Gateway and Legacy interfaces (null for operators). */
  principal: Principal | null;
  /** Why the session may not act even so (its account, or that account's reseller, is deactivated); null: it may. */
  refusal: string | null;
}

/** Sessions are found by the SHA-256 of their id; the id itself (in the cookie) is never stored. */
export const sessionIdHash = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

export interface SessionRecord {
  subject: Subject;
  csrfSecret: string;
  expiresAt: number;
}

/** Writes a session (a new one, or the same one with a new CSRF secret). */
export async function saveSession(db: Executor, idHash: string, record: SessionRecord, now: number): Promise<void> {
  const s = record.subject;
  const values = {
    user_id: s.kind === 'user' ? s.userId : null,
    child_account_id: s.kind === 'child' ? s.accountId : null,
    operator_token_sha256: s.kind === 'operator-token' ? s.tokenSha256 : null,
    csrf_secret: record.csrfSecret,
  };
  // A session saved again keeps its end: it never lasts more than SESSION_MAX_MS from its sign-in.
  await db
    .insertInto('panel_sessions')
    .values({ id_hash: idHash, ...values, created_at: now, last_seen_at: now, expires_at: Math.min(record.expiresAt, now + SESSION_MAX_MS) })
    .onConflict((oc) => oc.column('id_hash').doUpdateSet(values))
    .execute();
}

/**
 * Reads a session back, or null when there is none, it has expired (then
 * it is deleted), its user was deleted or disabled, or it was opened with
 * an operator token that is no longer the current one (`operatorTokenSha256`).
 */
export async function loadSession(db: Executor, idHash: string, now: number, operatorTokenSha256: string): Promise<LoadedSession | null> {
  const row = await (db as Kysely<Database>)
    .withTables<ChildUserTables>()
    .selectFrom('panel_sessions as s')
    .leftJoin('panel_users as u', 'u.id', 's.user_id')
    .leftJoin('child_users as c', 'c.account_id', 's.child_account_id')
    .leftJoin('accounts as a', (j) => j.on((eb) => eb.or([eb('a.id', '=', eb.ref('u.account_id')), eb('a.id', '=', eb.ref('s.child_account_id'))])))
    .leftJoin('accounts as p', 'p.id', 'a.parent_id')
    .select([
      's.user_id',
      's.child_account_id',
      's.operator_token_sha256',
      's.csrf_secret',
      's.last_seen_at',
      's.expires_at',
      'u.email',
      'u.account_id as user_account_id',
      'u.disabled_at',
      'c.email as child_email',
      'a.id as account_id',
      'a.name as account_name',
      'a.parent_id',
      'a.role',
      'a.timezone',
      'a.active',
      'p.active as parent_active',
    ])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return null;
  const expired = Number(row.expires_at) <= now || Number(row.last_seen_at) + SESSION_IDLE_MS <= now;
  if (expired) {
    await deleteSession(db, idHash);
    return null;
  }
  let subject: Subject;
  let email: string;
  if (row.operator_token_sha256 !== null) {
    if (row.operator_token_sha256 !== operatorTokenSha256) return null;
    subject = { kind: 'operator-token', tokenSha256: row.operator_token_sha256 };
    email = 'operator';
  } else if (row.user_id !== null) {
    if (row.email === null || row.disabled_at !== null) return null;
    const accountId = row.user_account_id === null ? null : Number(row.user_account_id);
    subject = { kind: 'user', userId: Number(row.user_id), email: row.email, accountId };
    email = row.email;
  } else if (row.child_account_id !== null) {
    if (row.child_email === null) return null;
    email = row.child_email;
    subject = { kind: 'child', accountId: Number(row.child_account_id), email };
  } else return null;

  const hasAccount = subject.kind === 'child' || (subject.kind === 'user' && subject.accountId !== null);
  if (hasAccount && row.account_id === null) return null;
  const account = hasAccount
    ? { id: Number(row.account_id), name: row.account_name ?? '', parentId: row.parent_id === null ? null : Number(row.parent_id) }
    : null;
  const principal: Principal | null =
    hasAccount && row.role !== null && row.timezone !== null
      ? // A session has no API key: its key id is minus the account's id (per-key counters stay per account).
        { accountId: Number(row.account_id), keyId: -Number(row.account_id), role: row.role, timezone: row.timezone }
      : null;
  const refusal = !hasAccount
    ? null
    : Number(row.active) !== 1
      ? 'This account is deactivated.'
      : row.parent_active !== null && Number(row.parent_active) === 0
        ? 'The reseller account this account belongs to is deactivated.'
        : null;
  if (Number(row.last_seen_at) + TOUCH_EVERY_MS <= now) {
    await db.updateTable('panel_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }
  return {
    subject,
    email,
    operator: !hasAccount,
    csrfSecret: row.csrf_secret,
    expiresAt: Number(row.expires_at),
    account,
    principal,
    refusal,
  };
}

export async function deleteSession(db: Executor, idHash: string): Promise<void> {
  await db.deleteFrom('panel_sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of the subject's user but the one kept (after a password change). */
export async function deleteOtherSessions(db: Executor, subject: Subject, keepIdHash: string): Promise<void> {
  const base = db.deleteFrom('panel_sessions').where('id_hash', '<>', keepIdHash);
  if (subject.kind === 'user') await base.where('user_id', '=', subject.userId).execute();
  else if (subject.kind === 'child') await base.where('child_account_id', '=', subject.accountId).execute();
}

/** Deletes sessions past their end (run now and then; expired ones are refused anyway). */
export async function deleteExpiredSessions(db: Executor, now: number): Promise<void> {
  await db
    .deleteFrom('panel_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]))
    .execute();
}
