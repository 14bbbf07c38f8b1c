import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { BlockList, isIP } from 'node:net';
import type { Executor } from '../db/executor.ts';
import { DomainError, notFound, unauthorized, validation } from '../common/errors.ts';
import { LookupCache } from '../common/lookup-cache.ts';

/** What an authenticated request knows about its caller. */
export interface Principal {
  accountId: number;
  keyId: number;
  role: 'CUSTOMER' | 'RESELLER';
  timezone: string;
}

/** Keys are UUID-shaped and stored only as a SHA-256 hash. */
export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export async function issueApiKey(db: Executor, accountId: number, allowedIps: string[] | undefined) {
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw notFound(`Account ${accountId}`);
  const ips = allowedIps && allowedIps.length > 0 ? allowedIps : null;
  if (ips) {
    const bad = ips.filter((cidr) => parseCidr(cidr) === null);
    if (bad.length) throw validation(bad.map((b) => `allowedIps: "${b}" is not an IP address or CIDR range`));
  }
  const key = randomUUID();
  const row = await db
    .insertInto('api_keys')
    .values({
      account_id: accountId,
      key_hash: hashKey(key),
      allowed_ips: ips ? JSON.stringify(ips) : null,
      created_at: Date.now(),
      revoked_at: null,
      hint: key.slice(-HINT_LENGTH),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), key };
}

/** Characters of a key kept in clear for listings: 16 of its 122 random bits, not enough to guess the rest. */
const HINT_LENGTH = 4;

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** What the operator sees of a key: never the key, only its last characters (`hint`). */
export interface ListedKey {
  id: number;
  /** The key's last 4 characters; null for keys issued before the gateway kept them. */
  hint: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Addresses or CIDR ranges the key may be used from; null: any. */
  allowedIps: string[] | null;
}

/** One page of the account's keys, revoked ones included, oldest first. */
export async function listApiKeys(db: Executor, accountId: number, page: { skip: number; limit: number }): Promise<{ records: ListedKey[]; total: number }> {
  const base = db.selectFrom('api_keys').where('account_id', '=', accountId);
  const [rows, total] = await Promise.all([
    base.select(['id', 'hint', 'created_at', 'revoked_at', 'allowed_ips']).orderBy('id').offset(page.skip).limit(page.limit).execute(),
    base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  const records = rows.map((r) => ({
    id: Number(r.id),
    hint: r.hint,
    createdAt: iso(r.created_at) as string,
    revokedAt: iso(r.revoked_at),
    allowedIps: r.allowed_ips ? (JSON.parse(r.allowed_ips) as string[]) : null,
  }));
  return { records, total: Number(total?.n ?? 0) };
}

export async function revokeApiKey(db: Executor, keyId: number): Promise<void> {
  const res = await db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw notFound(`API key ${keyId}`);
}

export function parseCidr(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', prefixText] = cidr.trim().split('/');
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function buildAllowList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const p = parseCidr(c);
    if (p) list.addSubnet(p.address, p.prefix, p.family);
  }
  return list;
}

function ipAllowed(list: BlockList, ip: string): boolean {
  const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  return list.check(plain, family);
}

interface CachedKey {
  /** null: no such key (cached too, so a flood of bad keys does not hit the database). */
  principal: Principal | null;
  allow: BlockList | null;
  /** Why a live key is refused anyway: its account, or the reseller of that account, is deactivated; null: it is not. */
  refusal: string | null;
}

/**
 * Resolves API keys to principals. Lookups are cached for a short time
 * (keys are checked on every request); a revocation or an account's
 * (de)activation through this process clears the cache at once, other
 * processes see it within `ttlMs`.
 */
export class KeyAuthenticator {
  private readonly cache: LookupCache<string, CachedKey>;
  /** Each key's hash, as last computed (the SHA-256 was a few percent of a small request's time); bounded like the cache. */
  private hashes = new Map<string, string>();

  constructor(
    private readonly db: Executor,
    ttlMs = 1000,
  ) {
    this.cache = new LookupCache(ttlMs);
  }

  invalidate(): void {
    this.cache.clear();
  }

  /** Throws UNAUTHORIZED for a missing, unknown, revoked or IP-restricted key, or one of a deactivated account (or reseller). */
  async authenticate(key: string | undefined, ip: string): Promise<Principal> {
    if (!key) throw unauthorized();
    const hash = this.hashOf(key);
    const entry = await this.cache.get(hash, () => this.load(hash));
    if (!entry.principal) throw unauthorized('The API key is invalid or has been revoked.');
    if (entry.allow && !ipAllowed(entry.allow, ip)) {
      throw new DomainError('UNAUTHORIZED', `The calling address ${ip} is not authorized for this API key.`);
    }
    // After the allow-list: a caller outside it learns nothing of the account.
    if (entry.refusal) throw unauthorized(entry.refusal);
    return entry.principal;
  }

  private hashOf(key: string): string {
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      if (this.hashes.size >= 10_000) this.hashes = new Map();
      hash = hashKey(key.trim());
      this.hashes.set(key, hash);
    }
    return hash;
  }

  private async load(hash: string): Promise<CachedKey> {
    // A child user's account (src/childusers) has its reseller as parent: the reseller's deactivation stops it too.
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .leftJoin('accounts as parent', 'parent.id', 'accounts.parent_id')
      .select([
        'api_keys.id as keyId',
        'api_keys.account_id as accountId',
        'api_keys.allowed_ips',
        'accounts.role',
        'accounts.timezone',
        'accounts.active',
        'parent.active as parentActive',
      ])
      .where('api_keys.key_hash', '=', hash)
      .where('api_keys.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return { principal: null, allow: null, refusal: null };
    const cidrs = row.allowed_ips ? (JSON.parse(row.allowed_ips) as string[]) : null;
    return {
      principal: { accountId: Number(row.accountId), keyId: Number(row.keyId), role: row.role, timezone: row.timezone },
      allow: cidrs ? buildAllowList(cidrs) : null,
      refusal:
        row.active !== 1
          ? 'The account of this API key is deactivated.'
          : row.parentActive === 0
            ? 'The reseller account this account belongs to is deactivated.'
            : null,
    };
  }
}
