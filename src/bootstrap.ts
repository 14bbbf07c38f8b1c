import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Core } from './core.ts';
import { operator } from './operator.ts';
import { createPanelUser, generatePassword } from './panel/users.ts';
import { operatorTokenSha256 } from './common/operator-token.ts';

/** The demo account's panel user. */
export const DEMO_PANEL_EMAIL = 'demo@example.com';

/** The setting holding the SHA-256 (hex) of the generated operator token. */
const TOKEN_SETTING = 'operator_token_sha256';
/** The data-directory file with the token in clear, written by the process that generated it. */
export const TOKEN_FILE = 'admin-token';

export interface OperatorToken {
  /** SHA-256 (hex) of the token: what the operator API compares a Bearer token with. */
  sha256: string;
  /**
   * Where the token comes from:
   * - env: GATEWAY_ADMIN_TOKEN (nothing stored);
   * - generated: this process made it and stored its digest first (`token` holds it, to print once);
   * - adopted: the data directory's `admin-token` from an earlier version, now stored for every process;
   * - database: stored before, by an earlier start or another process.
   */
  source: 'env' | 'generated' | 'adopted' | 'database';
  /** The token in clear: only when generated (printed once) or given in GATEWAY_ADMIN_TOKEN. */
  token: string | null;
  /** The data-directory file holding this database's token, when there is one. */
  file: string | null;
  /** An `admin-token` file that held another token, renamed to this path (see below). */
  staleFile: string | null;
}

/**
 * The operator token (docs/operator.md). GATEWAY_ADMIN_TOKEN when set.
 * Otherwise one token per database, shared by every process using it: the
 * first process to start generates it and stores its SHA-256 in `settings`
 * (insert `ON CONFLICT DO NOTHING`, then read back: of processes starting
 * together, one wins and all read its digest). The winner writes the token
 * to the data directory's `admin-token` (mode 600) and prints it; the
 * database never holds it in clear.
 *
 * A database without a stored token whose data directory already has an
 * `admin-token` (written by versions that kept the token only there) adopts
 * that token, so an upgrade keeps the operator's token. An `admin-token`
 * that holds another token than the database's (another process of a fleet
 * stored its own first) would mislead: it is renamed `admin-token.old`.
 */
export async function operatorToken(core: Core): Promise<OperatorToken> {
  const fromEnv = core.config.GATEWAY_ADMIN_TOKEN;
  if (fromEnv) return { sha256: operatorTokenSha256(fromEnv), source: 'env', token: fromEnv, file: null, staleFile: null };

  const db = core.db.kysely;
  const file = join(core.config.GATEWAY_DATA_DIR, TOKEN_FILE);
  const read = async () => (await db.selectFrom('settings').select('value').where('name', '=', TOKEN_SETTING).executeTakeFirst())?.value;

  let stored = await read();
  if (stored === undefined) {
    const earlier = readTokenFile(file);
    const candidate = earlier ?? randomBytes(24).toString('base64url');
    const sha256 = operatorTokenSha256(candidate);
    await db
      .insertInto('settings')
      .values({ name: TOKEN_SETTING, value: sha256 })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    stored = await read();
    if (stored === undefined) throw new Error(`setting ${TOKEN_SETTING} is missing right after it was stored`);
    if (stored === sha256) {
      if (earlier !== null) return { sha256, source: 'adopted', token: null, file, staleFile: null };
      // The token is printed whatever happens to the file (a read-only data directory, say).
      const written = writeTokenFile(file, candidate);
      return { sha256, source: 'generated', token: candidate, file: written ? file : null, staleFile: null };
    }
    // Another process stored its token first: that one is the database's.
  }
  // Read now, not before the race: the winner may share this data directory and have written it since.
  const inFile = readTokenFile(file);
  if (inFile === null) return { sha256: stored, source: 'database', token: null, file: null, staleFile: null };
  if (operatorTokenSha256(inFile) === stored) return { sha256: stored, source: 'database', token: null, file, staleFile: null };
  const staleFile = `${file}.old`;
  renameSync(file, staleFile);
  return { sha256: stored, source: 'database', token: null, file: null, staleFile };
}

function readTokenFile(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return text === '' ? null : text;
}

/**
 * Whole or not at all: a process starting at the same time on the same data
 * directory never reads half a token. False when it could not be written.
 */
function writeTokenFile(file: string, token: string): boolean {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temporary, `${token}\n`, { mode: 0o600 });
    renameSync(temporary, file);
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}

/**
 * On a new database (no account yet), creates a demo account with the
 * simulator route and credits, so the README's curl example works at once.
 * Also its browser panel user, demo@example.com with a random password.
 * Returns its key and that password; null when the database already has accounts.
 */
export async function createDemoAccount(
  core: Core,
): Promise<{ accountId: number; routeId: number; key: string; panelEmail: string; panelPassword: string } | null> {
  const any = await core.db.kysely.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  const ops = operator(core);
  const account = await ops.createAccount({ name: 'Demo', role: 'RESELLER', balance: 100 });
  const route = await ops.createRoute({
    displayName: 'Simulator SMS',
    productName: 'SMS',
    productId: 1,
    farePrice: '0.05',
    replyFarePrice: '0.01',
    channel: 'SMS',
    connector: 'simulator',
  });
  await ops.grantRoute(account.id, route.id);
  const { key } = await ops.issueKey(account.id);
  // Its browser panel user (docs/panel.md), with a random password printed at start.
  const panelPassword = generatePassword();
  await createPanelUser(core.db.kysely, { email: DEMO_PANEL_EMAIL, password: panelPassword, accountId: account.id });
  return { accountId: account.id, routeId: route.id, key, panelEmail: DEMO_PANEL_EMAIL, panelPassword };
}
