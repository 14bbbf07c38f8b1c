import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { LookupCache } from '../common/lookup-cache.ts';
import { validation } from '../common/errors.ts';
import { getAccount } from './accounts.ts';

/**
 * An account's request rate limit on the HTTP interfaces, as the operator set
 * it (docs/operations.md, "Rate limits"): `default` = the interface's default
 * (RATE_LIMIT_PER_SECOND on the gateway, the legacy default on the legacy
 * interface), `off` = no limit, or a number of requests a second.
 */
export type AccountRateLimit = 'default' | 'off' | number;

/** Largest per-second limit the operator may set. */
export const MAX_RATE_LIMIT_PER_SECOND = 1_000_000;

/**
 * How long a process keeps an account's setting: a change by the operator
 * applies at once in the process that made it, within this in the others.
 */
export const RATE_LIMIT_CACHE_MS = 5_000;

const caches = new WeakMap<object, LookupCache<number, AccountRateLimit>>();
const cacheOf = (db: Kysely<Database>) => {
  let cache = caches.get(db);
  if (!cache) {
    cache = new LookupCache<number, AccountRateLimit>(RATE_LIMIT_CACHE_MS);
    caches.set(db, cache);
  }
  return cache;
};

const fromColumn = (value: number | string | null): AccountRateLimit => (value === null ? 'default' : Number(value) === 0 ? 'off' : Number(value));

/** The account's setting, cached for RATE_LIMIT_CACHE_MS ('default' for an account that does not exist). */
export function cachedAccountRateLimit(db: Kysely<Database>, accountId: number): Promise<AccountRateLimit> {
  return cacheOf(db).get(accountId, async () => {
    const row = await db.selectFrom('accounts').select('rate_limit_per_second').where('id', '=', accountId).executeTakeFirst();
    return fromColumn(row?.rate_limit_per_second ?? null);
  });
}

/** The account's setting, read now (404 for an unknown account). */
export async function getAccountRateLimit(db: Kysely<Database>, accountId: number): Promise<AccountRateLimit> {
  return fromColumn((await getAccount(db, accountId)).rate_limit_per_second);
}

/** Sets the account's limit; this process's cache forgets it at once. */
export async function setAccountRateLimit(db: Kysely<Database>, accountId: number, limit: AccountRateLimit): Promise<AccountRateLimit> {
  if (typeof limit === 'number' && (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RATE_LIMIT_PER_SECOND)) {
    throw validation([`perSecond: must be a whole number from 1 to ${MAX_RATE_LIMIT_PER_SECOND}`]);
  }
  await getAccount(db, accountId);
  const column = limit === 'default' ? null : limit === 'off' ? 0 : limit;
  await db.updateTable('accounts').set({ rate_limit_per_second: column }).where('id', '=', accountId).execute();
  cacheOf(db).clear();
  return limit;
}
