import { createHash, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, RouteRow } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import type { AcceptInput, AcceptResult } from '../messaging/accept.ts';
import { chargedSegments } from '../billing/segments.ts';
import { DomainError } from '../shared/errors.ts';
import type { TokenTables } from './tables.ts';

/** DECISIONS.md "Token code": default expiry, ceiling, and wrong guesses before a token locks. */
export const DEFAULT_EXPIRY_MINUTES = 10;
export const MAX_EXPIRY_MINUTES = 24 * 60;
export const MAX_FAILED_ATTEMPTS = 5;
/** Creation limit per phone (SMS pumping and user harassment): this many tokens in the window. */
export const MAX_TOKENS_PER_PHONE = 5;
export const PHONE_WINDOW_MS = 10 * 60_000;

export type TokenErrorReason = 'EXPIRY_RANGE' | 'INVALID' | 'EXPIRED' | 'USED' | 'WRONG_PHONE' | 'PHONE_REQUIRED' | 'LOCKED' | 'RATE_LIMITED';

/**
 * A refused token operation. Every reason is a VALIDATION error (400) with
 * its own stable `reason`, so each interface can word it in its language.
 */
export class TokenError extends DomainError {
  constructor(readonly reason: TokenErrorReason, message: string) {
    super(reason === 'RATE_LIMITED' ? 'RATE_LIMITED' : 'VALIDATION', message);
  }
}

type TokenDb = Kysely<Database & TokenTables>;
const tokenDb = (db: Executor): TokenDb => (db as Kysely<Database>).withTables<TokenTables>();

/** The code is short, so the account id salts it; expiry and the attempt lock do the real protection. */
const hashCode = (accountId: number, code: string) => createHash('sha256').update(`token:${accountId}:${code}`).digest('hex');

/** Six digits from the operating system's CSPRNG. */
const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');

/** `"{prefix}: {code}"`, or the code alone without a prefix (DECISIONS.md). */
export const tokenText = (prefix: string | null, code: string) => (prefix && prefix.trim() ? `${prefix.trim()}: ${code}` : code);

export interface NewToken {
  /** Normalised phone (55 + area code + number). */
  phone: string;
  prefix: string | null;
  expireInMinutes?: number | undefined;
  enforcePhone: boolean;
  sender: string | null;
}

export interface CreatedToken {
  id: number;
  requestId: string;
  phone: string;
  text: string;
  expiresAt: number;
  result: AcceptResult;
}

/**
 * Creates a token and sends its code through the normal send path (charged
 * like any SMS, source `token`). When the send is refused (balance), the
 * token is removed: nobody received a code for it.
 */
export async function createToken(
  deps: { db: Executor; accept: (input: AcceptInput) => Promise<AcceptResult> },
  accountId: number,
  route: RouteRow,
  input: NewToken,
): Promise<CreatedToken> {
  const minutes = input.expireInMinutes ?? DEFAULT_EXPIRY_MINUTES;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_EXPIRY_MINUTES) {
    throw new TokenError('EXPIRY_RANGE', `expireInMinutes: must be a whole number from 1 to ${MAX_EXPIRY_MINUTES}`);
  }
  const db = tokenDb(deps.db);
  const now = Date.now();
  const recent = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .where('phone', '=', input.phone)
    .where('created_at', '>', now - PHONE_WINDOW_MS)
    .executeTakeFirst();
  if (Number(recent?.n ?? 0) >= MAX_TOKENS_PER_PHONE) {
    throw new TokenError('RATE_LIMITED', `Too many tokens for this phone: at most ${MAX_TOKENS_PER_PHONE} every ${PHONE_WINDOW_MS / 60_000} minutes.`);
  }
  // Two live tokens of one account never share a code, so a code alone finds its token.
  let code = newCode();
  for (let i = 0; i < 20; i++) {
    const clash = await db
      .selectFrom('tokens')
      .select('id')
      .where('account_id', '=', accountId)
      .where('code_hash', '=', hashCode(accountId, code))
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!clash) break;
    code = newCode();
  }
  const expiresAt = now + minutes * 60_000;
  const row = await db
    .insertInto('tokens')
    .values({ account_id: accountId, phone: input.phone, code_hash: hashCode(accountId, code), enforce_phone: input.enforcePhone ? 1 : 0, request_id: null, created_at: now, expires_at: expiresAt, used_at: null, failed_attempts: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  const text = tokenText(input.prefix, code);
  let result: AcceptResult;
  try {
    result = await deps.accept({
      accountId,
      route,
      source: 'token',
      content: text,
      tag: null,
      custom: null,
      sender: input.sender,
      scheduleAt: null,
      items: [{ receiver: input.phone, content: text, segments: chargedSegments(text), tag: null, custom: null, payload: null }],
    });
  } catch (err) {
    await db.deleteFrom('tokens').where('id', '=', id).where('account_id', '=', accountId).execute();
    throw err;
  }
  await db.updateTable('tokens').set({ request_id: result.requestId }).where('id', '=', id).where('account_id', '=', accountId).execute();
  return { id, requestId: result.requestId, phone: input.phone, text, expiresAt, result };
}

/**
 * Checks a code, once. Each refusal has its own reason: unknown code,
 * expired, already used, locked after too many wrong guesses, phone missing
 * (secure validation) or a different phone. A wrong guess that names a
 * phone counts against that phone's live token.
 */
export async function validateToken(dbIn: Executor, accountId: number, input: { code: string; phone: string | null }): Promise<{ phone: string }> {
  const db = tokenDb(dbIn);
  const now = Date.now();
  const token = await db
    .selectFrom('tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('code_hash', '=', hashCode(accountId, input.code.trim()))
    .orderBy('id', 'desc')
    .limit(10)
    .execute()
    .then((rows) => rows.find((r) => input.phone === null || r.phone === input.phone) ?? rows[0]);

  if (!token) {
    if (input.phone !== null) await countFailure(db, accountId, input.phone, now);
    throw new TokenError('INVALID', 'The token code is not valid.');
  }
  if (token.used_at !== null) throw new TokenError('USED', 'The token was already used.');
  if (token.failed_attempts >= MAX_FAILED_ATTEMPTS) throw new TokenError('LOCKED', 'The token is locked after too many wrong attempts.');
  if (token.expires_at <= now) throw new TokenError('EXPIRED', 'The token has expired.');
  if (input.phone === null && token.enforce_phone === 1) throw new TokenError('PHONE_REQUIRED', 'phoneNumber: required to validate this token.');
  if (input.phone !== null && input.phone !== token.phone) {
    await db.updateTable('tokens').set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) })).where('id', '=', token.id).where('account_id', '=', accountId).execute();
    throw new TokenError('WRONG_PHONE', 'The token was not sent to this phone number.');
  }
  const used = await db
    .updateTable('tokens')
    .set({ used_at: now })
    .where('id', '=', token.id)
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(used.numUpdatedRows) === 0) throw new TokenError('USED', 'The token was already used.');
  return { phone: token.phone };
}

/** A wrong code for a phone counts against the phone's newest live token. */
async function countFailure(db: TokenDb, accountId: number, phone: string, now: number): Promise<void> {
  const live = await db
    .selectFrom('tokens')
    .select('id')
    .where('account_id', '=', accountId)
    .where('phone', '=', phone)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (live) {
    await db.updateTable('tokens').set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) })).where('id', '=', live.id).where('account_id', '=', accountId).execute();
  }
}
