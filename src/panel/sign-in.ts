import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { ChildUserTables } from '../childusers/tables.ts';
import { DomainError, validation } from '../common/errors.ts';
import { hashingFor, hashPassword, verifyPassword } from '../childusers/password.ts';
import { emailKey } from '../childusers/validate.ts';
import { clearFailures, deleteStaleFailures, lockedFor, recordFailure } from './lockout.ts';
import { OPERATOR_EMAIL, passwordProblem } from './users.ts';
import { deleteExpiredSessions, deleteOtherSessions, type Subject } from './sessions.ts';

export const WRONG_CREDENTIALS = 'Email or password is wrong';

export interface SignInOptions {
  /** Whether a password is the operator token (the `operator` e-mail's password). */
  isOperatorToken: (password: string) => boolean;
  /** The SHA-256 of the operator token, kept with a session opened with it. */
  operatorTokenSha256: string;
  now: number;
}

/**
 * A hash no password matches quickly: verified against when the e-mail is
 * unknown, so an unknown e-mail costs about as much as a known one.
 */
let decoy: Promise<string> | undefined;
const decoyHash = () => {
  decoy ??= hashPassword(`decoy-${Math.random()}`);
  return decoy;
};

/** Computes the decoy hash now (at start), so the first unknown e-mail costs no more than the others. */
export const prepareSignIn = () => {
  void decoyHash();
};

/** Old rows (ended sessions nobody presents again, failures past their window) are deleted at most this often per process. */
const SWEEP_EVERY_MS = 60_000;
let sweptAt = 0;
async function sweep(db: Kysely<Database>, now: number): Promise<void> {
  if (now - sweptAt < SWEEP_EVERY_MS) return;
  sweptAt = now;
  await deleteExpiredSessions(db, now);
  await deleteStaleFailures(db, now);
}

const locked = (seconds: number) => {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  const error = new DomainError('RATE_LIMITED', `Too many failed sign-ins for this email: try again in ${minutes} minute(s)`);
  error.retryAfterSeconds = seconds;
  return error;
};

/**
 * Checks an e-mail and password (docs/panel.md, "Sign-in, sessions and
 * security"): a panel user, a child user's owner credential, or `operator`
 * with the operator token. Unknown e-mail and wrong password get the same
 * answer; failures count per e-mail and lock it after MAX_FAILURES.
 */
export async function signIn(db: Kysely<Database>, email: string, password: string, options: SignInOptions): Promise<Subject> {
  const key = emailKey(email);
  await sweep(db, options.now);
  const wait = await lockedFor(db, key, options.now);
  if (wait > 0) throw locked(wait);

  const subject = await check(db, key, password, options);
  if (!subject) {
    await recordFailure(db, key, options.now);
    throw new DomainError('UNAUTHORIZED', WRONG_CREDENTIALS);
  }
  await clearFailures(db, key);
  return subject;
}

async function check(db: Kysely<Database>, key: string, password: string, options: SignInOptions): Promise<Subject | null> {
  if (key === OPERATOR_EMAIL) return options.isOperatorToken(password) ? { kind: 'operator-token', tokenSha256: options.operatorTokenSha256 } : null;
  const user = await db
    .selectFrom('panel_users')
    .select(['id', 'email', 'password_hash', 'account_id'])
    .where('email_key', '=', key)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (user) {
    if (!(await verifyPassword(password, user.password_hash))) return null;
    return { kind: 'user', userId: Number(user.id), email: user.email, accountId: user.account_id === null ? null : Number(user.account_id) };
  }
  const child = await db
    .withTables<ChildUserTables>()
    .selectFrom('child_users')
    .select(['account_id', 'email', 'password_hash'])
    .where('email_key', '=', key)
    .executeTakeFirst();
  if (child) {
    if (!(await verifyPassword(password, child.password_hash))) return null;
    return { kind: 'child', accountId: Number(child.account_id), email: child.email };
  }
  await verifyPassword(password, await decoyHash());
  return null;
}

/**
 * Changes the signed-in user's password and ends the user's other
 * sessions (the one asking stays signed in). A child user's password is
 * its owner credential's.
 */
export async function changePassword(db: Kysely<Database>, subject: Subject, current: string, next: string, keepIdHash: string): Promise<void> {
  if (subject.kind === 'operator-token')
    throw validation(['The operator token is not a password that can be changed here: replace the token as docs/operator.md says.']);
  const problem = passwordProblem('next', next);
  const stored =
    subject.kind === 'user'
      ? await db.selectFrom('panel_users').select('password_hash').where('id', '=', subject.userId).executeTakeFirst()
      : await db.withTables<ChildUserTables>().selectFrom('child_users').select('password_hash').where('account_id', '=', subject.accountId).executeTakeFirst();
  const caller = subject.kind === 'user' ? `user:${subject.userId}` : `account:${subject.accountId}`;
  const hash = await hashingFor(caller, async () => {
    if (!stored || !(await verifyPassword(current, stored.password_hash)))
      throw validation(['current: the current password is wrong', ...(problem ? [problem] : [])]);
    if (problem) throw validation([problem]);
    return hashPassword(next);
  });
  await db.transaction().execute(async (tx) => {
    if (subject.kind === 'user') await tx.updateTable('panel_users').set({ password_hash: hash }).where('id', '=', subject.userId).execute();
    else await tx.withTables<ChildUserTables>().updateTable('child_users').set({ password_hash: hash }).where('account_id', '=', subject.accountId).execute();
    await deleteOtherSessions(tx, subject, keepIdHash);
  });
}
