/**
 * SMPP credentials of customer accounts (docs/smpp-server.md, "Credentials"):
 * one system_id and password per credential, the route its submits use,
 * an optional IP allow-list, the window, the submit rate of a bind and how
 * many binds may be open at once. Passwords are kept as the slow scrypt hash
 * of child users (src/childusers/password.ts); SMPP 3.4 carries at most 8
 * password characters and 15 of system_id, so longer ones are refused here.
 */
import { randomInt } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Executor } from '../db/executor.ts';
import type { Selectable } from 'kysely';
import type { SmppAccountsTable } from '../db/tables.ts';
import { DomainError, notFound, validation } from '../common/errors.ts';
import { hashPassword, verifyPassword } from '../childusers/password.ts';

export const SYSTEM_ID_MAX = 15;
export const PASSWORD_MAX = 8;
export const DEFAULTS = { windowSize: 100, submitsPerSecond: 0, maxBinds: 4 } as const;
export const LIMITS = { windowSize: 10_000, submitsPerSecond: 1_000_000, maxBinds: 1000 } as const;

export type CredentialRow = Selectable<SmppAccountsTable>;

export interface CredentialInput {
  systemId?: string | undefined;
  password?: string | undefined;
  routeId?: number | undefined;
  allowedIps?: string[] | null | undefined;
  windowSize?: number | undefined;
  submitsPerSecond?: number | undefined;
  maxBinds?: number | undefined;
}

/** A credential as the operator sees it (never the password or its hash). */
export function credentialView(row: CredentialRow) {
  return {
    systemId: row.system_id,
    accountId: Number(row.account_id),
    routeId: Number(row.route_id),
    allowedIps: row.allowed_ips ? (JSON.parse(row.allowed_ips) as string[]) : null,
    windowSize: Number(row.window_size),
    submitsPerSecond: Number(row.submits_per_second),
    maxBinds: Number(row.max_binds),
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
}

const SYSTEM_ID = /^[A-Za-z0-9_.-]+$/;
/** Printable ASCII: what every SMPP client can type and send in a C-octet string. */
const PRINTABLE = /^[!-~]+$/;
const PASSWORD_ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** 8 characters from a 56-character alphabet (about 46 bits): the most SMPP 3.4 carries. */
export function generatePassword(): string {
  let out = '';
  for (let i = 0; i < PASSWORD_MAX; i++) out += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return out;
}

function checkInput(input: CredentialInput, problems: string[]): void {
  if (input.systemId !== undefined && (input.systemId.length < 1 || input.systemId.length > SYSTEM_ID_MAX || !SYSTEM_ID.test(input.systemId)))
    problems.push(`systemId: must be 1 to ${SYSTEM_ID_MAX} letters, digits, '_', '.' or '-' (SMPP 3.4 carries at most ${SYSTEM_ID_MAX} characters)`);
  if (input.password !== undefined && (input.password.length < 1 || input.password.length > PASSWORD_MAX || !PRINTABLE.test(input.password)))
    problems.push(`password: must be 1 to ${PASSWORD_MAX} printable ASCII characters without spaces (SMPP 3.4 carries at most ${PASSWORD_MAX} characters)`);
  const whole = (field: keyof typeof LIMITS, min: number) => {
    const v = input[field];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > LIMITS[field]))
      problems.push(`${field}: must be a whole number from ${min} to ${LIMITS[field]}`);
  };
  whole('windowSize', 1);
  whole('submitsPerSecond', 0);
  whole('maxBinds', 1);
  for (const cidr of input.allowedIps ?? []) if (parseCidr(cidr) === null) problems.push(`allowedIps: "${cidr}" is not an IP address or CIDR range`);
}

async function checkRoute(db: Executor, accountId: number, routeId: number): Promise<void> {
  const route = await db
    .selectFrom('account_routes as ar')
    .innerJoin('routes as r', 'r.id', 'ar.route_id')
    .select(['r.channel'])
    .where('ar.account_id', '=', accountId)
    .where('ar.route_id', '=', routeId)
    .executeTakeFirst();
  if (!route) throw validation([`routeId: route ${routeId} is not granted to account ${accountId} (grant it first: POST /admin/accounts/${accountId}/routes)`]);
  if (route.channel !== 'SMS') throw validation([`routeId: route ${routeId} is an ${route.channel} route; SMPP submits need an SMS route`]);
}

/** Creates a credential; answers it with the password (given, or generated when not). */
export async function createCredential(db: Executor, accountId: number, input: CredentialInput) {
  const problems: string[] = [];
  if (input.systemId === undefined) problems.push('systemId: required');
  if (input.routeId === undefined) problems.push('routeId: required');
  checkInput(input, problems);
  if (problems.length) throw validation(problems);
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw notFound(`Account ${accountId}`);
  await checkRoute(db, accountId, input.routeId as number);
  const systemId = input.systemId as string;
  const taken = await db.selectFrom('smpp_accounts').select('system_id').where('system_id', '=', systemId).executeTakeFirst();
  if (taken) throw new DomainError('CONFLICT', `An SMPP credential with system_id "${systemId}" already exists.`);
  const password = input.password ?? generatePassword();
  const row = {
    system_id: systemId,
    account_id: accountId,
    password_hash: await hashPassword(password),
    route_id: input.routeId as number,
    allowed_ips: input.allowedIps && input.allowedIps.length > 0 ? JSON.stringify(input.allowedIps) : null,
    window_size: input.windowSize ?? DEFAULTS.windowSize,
    submits_per_second: input.submitsPerSecond ?? DEFAULTS.submitsPerSecond,
    max_binds: input.maxBinds ?? DEFAULTS.maxBinds,
    created_at: Date.now(),
  };
  try {
    await db.insertInto('smpp_accounts').values(row).execute();
  } catch (err) {
    // Two creations of one system_id at once: the primary key refuses the second.
    if (await db.selectFrom('smpp_accounts').select('system_id').where('system_id', '=', systemId).executeTakeFirst())
      throw new DomainError('CONFLICT', `An SMPP credential with system_id "${systemId}" already exists.`);
    throw err;
  }
  return { ...credentialView(row), password };
}

export async function listCredentials(db: Executor, accountId: number) {
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw notFound(`Account ${accountId}`);
  const rows = await db.selectFrom('smpp_accounts').selectAll().where('account_id', '=', accountId).orderBy('system_id').execute();
  return rows.map(credentialView);
}

export async function getCredential(db: Executor, systemId: string): Promise<CredentialRow | undefined> {
  return db.selectFrom('smpp_accounts').selectAll().where('system_id', '=', systemId).executeTakeFirst();
}

/** Changes a credential: a new password, route, allow-list (null: any address), window, rate or bind limit. */
export async function updateCredential(db: Executor, systemId: string, input: Omit<CredentialInput, 'systemId'>) {
  const problems: string[] = [];
  checkInput(input, problems);
  if (problems.length) throw validation(problems);
  const row = await getCredential(db, systemId);
  if (!row) throw notFound(`SMPP credential ${systemId}`);
  if (input.routeId !== undefined) await checkRoute(db, Number(row.account_id), input.routeId);
  const changes: Partial<CredentialRow> = {};
  if (input.password !== undefined) changes.password_hash = await hashPassword(input.password);
  if (input.routeId !== undefined) changes.route_id = input.routeId;
  if (input.allowedIps !== undefined) changes.allowed_ips = input.allowedIps && input.allowedIps.length > 0 ? JSON.stringify(input.allowedIps) : null;
  if (input.windowSize !== undefined) changes.window_size = input.windowSize;
  if (input.submitsPerSecond !== undefined) changes.submits_per_second = input.submitsPerSecond;
  if (input.maxBinds !== undefined) changes.max_binds = input.maxBinds;
  if (Object.keys(changes).length > 0) await db.updateTable('smpp_accounts').set(changes).where('system_id', '=', systemId).execute();
  return credentialView({ ...row, ...changes });
}

/** Removes a credential; the server closes its open binds within seconds (src/smpp-server/server.ts). Deliveries it still owed are dropped. */
export async function removeCredential(db: Executor, systemId: string): Promise<void> {
  const res = await db.deleteFrom('smpp_accounts').where('system_id', '=', systemId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound(`SMPP credential ${systemId}`);
  await db.deleteFrom('smpp_deliveries').where('system_id', '=', systemId).execute();
}

/** The credential a bind names, when the password is right; null otherwise (unknown system_id or wrong password alike). */
export async function checkBind(db: Executor, systemId: string, password: string): Promise<CredentialRow | null> {
  const row = await getCredential(db, systemId);
  if (!row) {
    // As slow as a wrong password: the answer time does not tell which system_ids exist.
    await verifyPassword(password, DUMMY_HASH);
    return null;
  }
  return (await verifyPassword(password, row.password_hash)) ? row : null;
}

const DUMMY_HASH = '$scrypt$ln=15,r=8,p=3$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** What the operator sees of the deliveries owed to an account's SMPP customers (GET /admin/accounts/{id}/smpp-deliveries). */
export async function deliveriesView(db: Executor, accountId: number) {
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw notFound(`Account ${accountId}`);
  const rows = await db
    .selectFrom('smpp_deliveries')
    .select((eb) => ['system_id', eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest'), eb.fn.max('attempts').as('attempts')])
    .where('account_id', '=', accountId)
    .groupBy('system_id')
    .orderBy('system_id')
    .execute();
  const out = [];
  for (const r of rows) {
    const last = await db
      .selectFrom('smpp_deliveries')
      .select(['last_error'])
      .where('system_id', '=', r.system_id)
      .where('last_error', 'is not', null)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    out.push({
      systemId: r.system_id,
      pending: Number(r.n),
      oldest: r.oldest === null ? null : new Date(Number(r.oldest)).toISOString(),
      maxAttempts: Number(r.attempts ?? 0),
      lastError: last?.last_error ?? null,
    });
  }
  return { accountId, pending: out.reduce((n, r) => n + r.pending, 0), credentials: out };
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

/** Whether `ip` may bind with a credential of this allow-list (null: any address). */
export function ipAllowed(allowedIps: string | null, ip: string): boolean {
  if (!allowedIps) return true;
  const list = new BlockList();
  for (const c of JSON.parse(allowedIps) as string[]) {
    const p = parseCidr(c);
    if (p) list.addSubnet(p.address, p.prefix, p.family);
  }
  const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return list.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
}

/** The credentials among `systemIds` that may bind and submit now: they exist, and their account (and its reseller, for a child user) is active. */
export async function usableCredentials(db: Executor, systemIds: string[]): Promise<Set<string>> {
  if (systemIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('smpp_accounts as s')
    .innerJoin('accounts as c', 'c.id', 's.account_id')
    .leftJoin('accounts as p', 'p.id', 'c.parent_id')
    .select('s.system_id')
    .where('s.system_id', 'in', systemIds)
    .where('c.active', '=', 1)
    .where((eb) => eb.or([eb('p.id', 'is', null), eb('p.active', '=', 1)]))
    .execute();
  return new Set(rows.map((r) => r.system_id));
}
