import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import { isUniqueViolation } from '../db/unique.ts';
import { DomainError, notFound, validation } from '../common/errors.ts';
import { hashPassword } from '../childusers/password.ts';
import { emailKey, emailProblem } from '../childusers/validate.ts';
import { emailTaken } from '../childusers/child-users.ts';

/** Shortest accepted panel password, in characters (code points). */
export const MIN_PANEL_PASSWORD = 10;
const MAX_PANEL_PASSWORD = 1024;

/** The e-mail the operator signs in with, the operator token being the password (docs/panel.md). */
export const OPERATOR_EMAIL = 'operator';

/** A panel user as the operator API and the CLI show it (never its password). */
export interface PanelUser {
  id: number;
  email: string;
  /** The account whose panel the user opens; null: an operator. */
  accountId: number | null;
  createdAt: string;
}

export interface NewPanelUser {
  email: string;
  password: string;
  /** null: an operator user (the operator console). */
  accountId: number | null;
}

/** The problem with a new password, or null (`field` names it in the answer). */
export function passwordProblem(field: string, password: string): string | null {
  const length = [...password].length;
  if (length < MIN_PANEL_PASSWORD) return `${field}: must be at least ${MIN_PANEL_PASSWORD} characters`;
  if (length > MAX_PANEL_PASSWORD) return `${field}: must be at most ${MAX_PANEL_PASSWORD} characters`;
  return null;
}

/** A random password for a user created without one (CLI): 20 characters of base64url, 120 bits. */
export const generatePassword = () => randomBytes(15).toString('base64url');

const TAKEN = 'email: is already used by another panel user or child user';

/**
 * Creates a panel user. The e-mail is unique case-insensitively among panel
 * users and child users (both sign in by e-mail); the password is hashed
 * with scrypt before anything is written.
 */
export async function createPanelUser(db: Kysely<Database>, input: NewPanelUser): Promise<PanelUser> {
  const badEmail = emailProblem(input.email);
  const problems = [badEmail === null ? null : `email: ${badEmail}`, passwordProblem('password', input.password)].filter((p): p is string => p !== null);
  if (problems.length) throw validation(problems);
  const email = input.email.trim();
  const key = emailKey(email);
  if (input.accountId !== null) {
    const account = await db.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
    if (!account) throw notFound(`Account ${input.accountId}`);
  }
  const panelTaken = await db.selectFrom('panel_users').select('id').where('email_key', '=', key).executeTakeFirst();
  if (panelTaken || (await emailTaken(db, email))) throw new DomainError('CONFLICT', TAKEN);
  const passwordHash = await hashPassword(input.password);
  const createdAt = Date.now();
  try {
    const row = await db
      .insertInto('panel_users')
      .values({ email, email_key: key, password_hash: passwordHash, account_id: input.accountId, created_at: createdAt, disabled_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: Number(row.id), email, accountId: input.accountId, createdAt: new Date(createdAt).toISOString() };
  } catch (err) {
    if (isUniqueViolation(err)) throw new DomainError('CONFLICT', TAKEN);
    throw err;
  }
}

/** The panel users of an account (accountId null: the operator users), oldest first. */
export async function listPanelUsers(db: Executor, accountId: number | null): Promise<PanelUser[]> {
  const rows = await db
    .selectFrom('panel_users')
    .select(['id', 'email', 'account_id', 'created_at'])
    .where('account_id', accountId === null ? 'is' : '=', accountId)
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    email: r.email,
    accountId: r.account_id === null ? null : Number(r.account_id),
    createdAt: new Date(Number(r.created_at)).toISOString(),
  }));
}

/** Deletes a panel user and ends its sessions at once (every process: they are rows). */
export async function deletePanelUser(db: Kysely<Database>, id: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('panel_sessions').where('user_id', '=', id).execute();
    const res = await tx.deleteFrom('panel_users').where('id', '=', id).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound(`Panel user ${id}`);
  });
}
