import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import { issueApiKey, listApiKeys, parseCidr, revokeApiKey } from '../accounts/api-keys.ts';
import { notFound, validation } from '../common/errors.ts';

/** Keys listed at most (an account has a handful). */
const MAX_LISTED = 1000;

/** An API key as the account panel shows it: never the key, only a masked form. */
export interface PanelKey {
  id: number;
  /** The key masked for display: `****…` and its last 4 characters (all the gateway keeps in clear). */
  prefix: string;
  allowedIps: string[] | null;
  createdAt: string;
  revokedAt: string | null;
}

const masked = (hint: string | null) => (hint ? `****…${hint}` : '****');

/** The account's keys, revoked ones included, oldest first. */
export async function listKeys(db: Executor, accountId: number): Promise<PanelKey[]> {
  const { records } = await listApiKeys(db, accountId, { skip: 0, limit: MAX_LISTED });
  return records.map((k) => ({ id: k.id, prefix: masked(k.hint), allowedIps: k.allowedIps, createdAt: k.createdAt, revokedAt: k.revokedAt }));
}

/** A new key of the account; the key itself is in this answer only. */
export async function createKey(db: Kysely<Database>, accountId: number, allowedIps: string[] | undefined) {
  const { id, key } = await issueApiKey(db, accountId, allowedIps);
  return { id, key, prefix: masked(key.slice(-4)), allowedIps: allowedIps && allowedIps.length > 0 ? allowedIps : null };
}

/** Whether the key is the account's (another account's key is NOT_FOUND, as a key that does not exist). */
async function ownKey(db: Executor, accountId: number, keyId: number) {
  const row = await db.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
  if (!row) throw notFound(`API key ${keyId}`);
  return row;
}

/** Revokes one of the account's keys. */
export async function revokeKey(db: Kysely<Database>, accountId: number, keyId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await ownKey(tx, accountId, keyId);
    await revokeApiKey(tx, keyId);
  });
}

/** Replaces the addresses one of the account's live keys may be used from ([] = any). */
export async function setAllowedIps(db: Kysely<Database>, accountId: number, keyId: number, allowedIps: string[]): Promise<PanelKey> {
  const bad = allowedIps.filter((cidr) => parseCidr(cidr) === null);
  if (bad.length) throw validation(bad.map((b) => `allowedIps: "${b}" is not an IP address or CIDR range`));
  const ips = allowedIps.length > 0 ? allowedIps.map((c) => c.trim()) : null;
  await db.transaction().execute(async (tx) => {
    const row = await ownKey(tx, accountId, keyId);
    if (row.revoked_at !== null) throw notFound(`API key ${keyId}`);
    await tx
      .updateTable('api_keys')
      .set({ allowed_ips: ips ? JSON.stringify(ips) : null })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .execute();
  });
  const key = (await listKeys(db, accountId)).find((k) => k.id === keyId);
  if (!key) throw notFound(`API key ${keyId}`);
  return key;
}
