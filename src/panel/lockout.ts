import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';

/** Failed sign-ins of one e-mail within WINDOW_MS that lock it. */
export const MAX_FAILURES = 5;
export const WINDOW_MS = 15 * 60_000;
/** How long a locked e-mail stays locked. */
export const LOCK_MS = 15 * 60_000;

/**
 * Seconds the e-mail (its lower-cased key) stays locked, 0 when it is not.
 * Counted per e-mail, whether a user has it or not: a lock says nothing
 * about who exists.
 */
export async function lockedFor(db: Executor, key: string, now: number): Promise<number> {
  const row = await db.selectFrom('panel_sign_in_failures').select('locked_until').where('email_key', '=', key).executeTakeFirst();
  const until = row?.locked_until === null || row?.locked_until === undefined ? 0 : Number(row.locked_until);
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

/**
 * Counts a failed sign-in in one statement (processes sharing the database
 * count together): a window older than WINDOW_MS starts again at 1, the
 * MAX_FAILURES-th failure in a window locks the e-mail for LOCK_MS.
 */
export async function recordFailure(db: Executor, key: string, now: number): Promise<void> {
  const stale = now - WINDOW_MS;
  const lockUntil = now + LOCK_MS;
  await sql`insert into panel_sign_in_failures (email_key, window_start, failures, locked_until)
    values (${key}, ${now}, 1, ${MAX_FAILURES <= 1 ? lockUntil : null})
    on conflict (email_key) do update set
      failures = case when panel_sign_in_failures.window_start < ${stale} then 1 else panel_sign_in_failures.failures + 1 end,
      window_start = case when panel_sign_in_failures.window_start < ${stale} then ${now} else panel_sign_in_failures.window_start end,
      locked_until = case
        when panel_sign_in_failures.window_start >= ${stale} and panel_sign_in_failures.failures + 1 >= ${MAX_FAILURES} then ${lockUntil}
        else panel_sign_in_failures.locked_until end`.execute(db);
}

/** A successful sign-in forgets the e-mail's failures. */
export async function clearFailures(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('panel_sign_in_failures').where('email_key', '=', key).execute();
}

/** Forgets failures whose window and lock are over (rows of e-mails nobody tries any more). */
export async function deleteStaleFailures(db: Executor, now: number): Promise<void> {
  await db
    .deleteFrom('panel_sign_in_failures')
    .where('window_start', '<', now - WINDOW_MS)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .execute();
}
