import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Core } from './core.ts';
import { operator } from './operator.ts';

/**
 * The operator token: GATEWAY_ADMIN_TOKEN, else one generated on first start
 * and kept in the data directory (docs/decisions.md).
 */
export function adminToken(core: Core): { token: string; generated: boolean } {
  if (core.config.GATEWAY_ADMIN_TOKEN) return { token: core.config.GATEWAY_ADMIN_TOKEN, generated: false };
  const file = join(core.config.GATEWAY_DATA_DIR, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false };
  mkdirSync(core.config.GATEWAY_DATA_DIR, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}

/**
 * On a new database, creates a demo account with the simulator route and
 * credits, so the README's curl example works at once. Returns its key.
 */
export async function createDemoAccount(core: Core): Promise<{ accountId: number; routeId: number; key: string } | null> {
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
  return { accountId: account.id, routeId: route.id, key };
}
