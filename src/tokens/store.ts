import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, RouteRow } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import type { AcceptInput, AcceptResult } from '../messaging/accept.ts';
import { DomainError } from '../common/errors.ts';
import { maskCode, MAX_FAILED_ATTEMPTS } from './mask.ts';
import type { TokenTables } from './tables.ts';
import { acceptInput } from '../messaging/send.ts';

/** Default expiry and its ceiling. */
export const DEFAULT_EXPIRY_MINUTES = 10;
export const MAX_EXPIRY_MINUTES = 24 * 60;
export { MAX_FAILED_ATTEMPTS };
/** Creation limit per phone (SMS pumping and user harassment): this many tokens in the window. */
export const MAX_TOKENS_PER_PHONE = 5;
export const PHONE_WINDOW_MS = 10 * 60_000;
/**
 * Refused validations an account may make in a window, counted in the
 * database: every interface and every process on the database share it.
 * Once spent, every validation of the account is a 429 until the window ends.
 */
export const GUESS_BUDGET = 20;
export const GUESS_WINDOW_MS = 10 * 60_000;

export type TokenErrorReason = 'EXPIRY_RANGE' | 'INVALID' | 'EXPIRED' | 'USED' | 'WRONG_PHONE' | 'PHONE_REQUIRED' | 'LOCKED' | 'RATE_LIMITED' | 'GUESS_LIMIT';

/**
 * A refused token operation, with its own stable `reason` so each interface
 * can word it in its language: RATE_LIMITED (creation) and GUESS_LIMIT
 * (validation budget spent, with the seconds to wait) are 429s, every other
 * reason is a VALIDATION error (400).
 */
export class TokenError extends DomainError {
  constructor(
    readonly reason: TokenErrorReason,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(reason === 'RATE_LIMITED' || reason === 'GUESS_LIMIT' ? 'RATE_LIMITED' : 'VALIDATION', message);
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }
}

type TokenDb = Kysely<Database & TokenTables>;
const tokenDb = (db: Executor): TokenDb => (db as Kysely<Database>).withTables<TokenTables>();

/**
 * The key codes are hashed with: the `token_hmac_key` setting, made once
 * per database by its migration, so every process on the database uses the
 * same. Read once per database handle.
 */
const KEY_SETTING = 'token_hmac_key';
const keys = new WeakMap<object, Promise<Buffer>>();

function hmacKey(db: Executor): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = readKey(db);
    keys.set(db, key);
    key.catch(() => keys.delete(db));
  }
  return key;
}

async function readKey(db: Executor): Promise<Buffer> {
  const read = async () => (await db.selectFrom('settings').select('value').where('name', '=', KEY_SETTING).executeTakeFirst())?.value;
  let value = await read();
  if (value === undefined) {
    // Only when someone deleted it: a new key (live codes made with the old one stop validating).
    await db
      .insertInto('settings')
      .values({ name: KEY_SETTING, value: randomBytes(32).toString('hex') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    value = await read();
  }
  if (value === undefined) throw new Error(`setting ${KEY_SETTING} is missing`);
  return Buffer.from(value, 'hex');
}

/**
 * A code is stored only as this HMAC: without the key (kept in the
 * database's settings, not with the tokens) the million possible codes
 * cannot be tried against a stolen hash.
 */
const hashCode = (key: Buffer, accountId: number, code: string) => createHmac('sha256', key).update(`${accountId}:${code}`).digest('hex');

/** Six digits from the operating system's CSPRNG. */
const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');

/** `"{prefix}: {code}"`, or the code alone without a prefix. */
export const tokenText = (prefix: string | null, code: string) => (prefix?.trim() ? `${prefix.trim()}: ${code}` : code);

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
  const key = await hmacKey(deps.db);
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
      .where('code_hash', '=', hashCode(key, accountId, code))
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!clash) break;
    code = newCode();
  }
  const expiresAt = now + minutes * 60_000;
  const row = await db
    .insertInto('tokens')
    .values({
      account_id: accountId,
      phone: input.phone,
      code_hash: hashCode(key, accountId, code),
      enforce_phone: input.enforcePhone ? 1 : 0,
      request_id: null,
      created_at: now,
      expires_at: expiresAt,
      used_at: null,
      failed_attempts: 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  const text = tokenText(input.prefix, code);
  let result: AcceptResult;
  try {
    result = await deps.accept(
      acceptInput({
        accountId,
        route,
        source: 'token',
        // The requests report shows the text; the code goes only to the phone.
        content: maskCode(text),
        sender: input.sender,
        scheduleAt: null,
        messages: [{ receiver: input.phone, content: text }],
      }),
    );
  } catch (err) {
    await db.deleteFrom('tokens').where('id', '=', id).where('account_id', '=', accountId).execute();
    throw err;
  }
  await db.updateTable('tokens').set({ request_id: result.requestId }).where('id', '=', id).where('account_id', '=', accountId).execute();
  return { id, requestId: result.requestId, phone: input.phone, text, expiresAt, result };
}

/**
 * Checks a code, once, in one transaction that first takes one guess from
 * the account's budget (a conditional UPDATE: parallel validations each take
 * their own, and none is taken past the budget; on PostgreSQL the row lock
 * also puts an account's validations one after the other). A spent budget
 * is a 429 whatever the code. A success gives its guess back; a refusal
 * keeps it and, when a phone is named, counts against every live token of
 * that phone (MAX_FAILED_ATTEMPTS lock them). Each refusal has its own
 * reason: unknown code, expired, already used, locked, phone missing
 * (secure validation) or a different phone.
 */
export async function validateToken(db: Kysely<Database>, accountId: number, input: { code: string; phone: string | null }): Promise<{ phone: string }> {
  // Read before the transaction: on SQLite it holds the only connection.
  const hash = hashCode(await hmacKey(db), accountId, input.code.trim());
  const outcome = await db.transaction().execute(async (tx) => {
    const t = tokenDb(tx);
    const now = Date.now();
    const budget = await takeGuess(t, accountId, now);
    if (budget.spent) {
      // At most the window: a concurrent guess may have started the window after this request read the clock.
      const wait = Math.min(GUESS_WINDOW_MS / 1000, Math.max(1, Math.ceil((budget.windowStart + GUESS_WINDOW_MS - now) / 1000)));
      return new TokenError(
        'GUESS_LIMIT',
        `Too many wrong validation attempts on this account (at most ${GUESS_BUDGET} every ${GUESS_WINDOW_MS / 60_000} minutes); try again in ${wait} second(s).`,
        wait,
      );
    }
    const result = await check(t, accountId, hash, input.phone, now);
    if (result instanceof TokenError) {
      if (input.phone !== null) await countAgainstPhone(t, accountId, input.phone, now);
    } else {
      await t
        .updateTable('token_guesses')
        .set((eb) => ({ failures: eb('failures', '-', 1) }))
        .where('account_id', '=', accountId)
        .where('window_start', '=', budget.windowStart)
        .where('failures', '>', 0)
        .execute();
    }
    // Returned, not thrown: a refusal must commit what it counted.
    return result;
  });
  if (outcome instanceof TokenError) throw outcome;
  return outcome;
}

/**
 * Takes one guess from the account's budget: a window older than
 * GUESS_WINDOW_MS starts again at `now` with this guess; else the count
 * grows only while under GUESS_BUDGET. `spent`: nothing was taken.
 */
async function takeGuess(t: TokenDb, accountId: number, now: number): Promise<{ windowStart: number; spent: boolean }> {
  const stale = now - GUESS_WINDOW_MS;
  const take = () =>
    t
      .updateTable('token_guesses')
      .set((eb) => ({
        failures: eb
          .case()
          .when('window_start', '<=', stale)
          .then(1)
          .else(eb('failures', '+', 1))
          .end(),
        window_start: eb.case().when('window_start', '<=', stale).then(now).else(eb.ref('window_start')).end(),
      }))
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('window_start', '<=', stale), eb('failures', '<', GUESS_BUDGET)]))
      .returning('window_start')
      .executeTakeFirst();
  let taken = await take();
  if (!taken) {
    // The account's first guess, unless another validation just made the row (then the UPDATE sees it now).
    const made = await t
      .insertInto('token_guesses')
      .values({ account_id: accountId, window_start: now, failures: 1 })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .returning('window_start')
      .executeTakeFirst();
    taken = made ?? (await take());
  }
  if (taken) return { windowStart: Number(taken.window_start), spent: false };
  const row = await t.selectFrom('token_guesses').select('window_start').where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return { windowStart: Number(row.window_start), spent: true };
}

/** The token the code and phone name, used once; or why not. */
async function check(t: TokenDb, accountId: number, hash: string, phone: string | null, now: number): Promise<{ phone: string } | TokenError> {
  const rows = await t
    .selectFrom('tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('code_hash', '=', hash)
    .orderBy('id', 'desc')
    .limit(10)
    .execute();
  const token = rows.find((r) => phone === null || r.phone === phone) ?? rows[0];
  if (!token) return new TokenError('INVALID', 'The token code is not valid.');
  if (token.used_at !== null) return new TokenError('USED', 'The token was already used.');
  if (token.failed_attempts >= MAX_FAILED_ATTEMPTS) return new TokenError('LOCKED', 'The token is locked after too many wrong attempts.');
  if (token.expires_at <= now) return new TokenError('EXPIRED', 'The token has expired.');
  if (phone === null && token.enforce_phone === 1) return new TokenError('PHONE_REQUIRED', 'phoneNumber: required to validate this token.');
  if (phone !== null && phone !== token.phone) {
    // The right code with another phone counts against the token too.
    await t
      .updateTable('tokens')
      .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
      .where('id', '=', token.id)
      .where('account_id', '=', accountId)
      .execute();
    return new TokenError('WRONG_PHONE', 'The token was not sent to this phone number.');
  }
  const used = await t
    .updateTable('tokens')
    .set({ used_at: now })
    .where('id', '=', token.id)
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(used.numUpdatedRows) === 0) return new TokenError('USED', 'The token was already used.');
  return { phone: token.phone };
}

/** A refused validation naming a phone counts against every live token of that phone, not only the newest. */
async function countAgainstPhone(t: TokenDb, accountId: number, phone: string, now: number): Promise<void> {
  await t
    .updateTable('tokens')
    .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
    .where('account_id', '=', accountId)
    .where('phone', '=', phone)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .execute();
}
