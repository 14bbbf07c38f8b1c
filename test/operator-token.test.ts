import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, DIALECT, type TestDatabase } from './helpers.ts';
import { http, spawnGateway, type GatewayProcess } from './process.ts';
import { openDatabase } from '../src/db/database.ts';
import { operatorTokenSha256 } from '../src/common/operator-token.ts';

/*
 * The operator token shared by every process on a database, and the start
 * defaults: 127.0.0.1, no demo account unless asked (docs/operator.md).
 * Real processes, as `npm start` runs them.
 */

/** Nothing inherited from the environment running the tests decides these. */
const UNSET = { GATEWAY_ADMIN_TOKEN: '', GATEWAY_DEMO: '' };
const TOKEN_LINE = /^Operator token: (\S+)$/m;

const asOperator = (token: string) => ({ authorization: `Bearer ${token}` });
async function operatorStatus(gw: GatewayProcess, token: string) {
  const accounts = await http(gw.base, 'GET', '/admin/accounts', undefined, asOperator(token));
  const metrics = await fetch(`${gw.base}/metrics`, { headers: asOperator(token) });
  await metrics.text();
  return [accounts.status, metrics.status];
}

async function storedSettings(db: TestDatabase, dataDir: string) {
  const store = await openDatabase({ dataDir, databaseUrl: db.env.DATABASE_URL, ...(db.pgSchema ? { pgSchema: db.pgSchema } : {}) });
  try {
    return await store.kysely.selectFrom('settings').select(['name', 'value']).where('name', '=', 'operator_token_sha256').execute();
  } finally {
    await store.close();
  }
}

test('processes started together on one database generate one operator token, printed once, accepted by all', async () => {
  const db = await freshDatabase();
  // PostgreSQL: a fleet, each process with its own data directory. SQLite: processes sharing the data directory.
  const ownDir = DIALECT === 'postgres' ? mkdtempSync(join(tmpdir(), 'gw-token-')) : (db.env.GATEWAY_DATA_DIR as string);
  const dirs = [db.env.GATEWAY_DATA_DIR as string, ownDir];
  const started: GatewayProcess[] = [];
  try {
    const starts = await Promise.allSettled(dirs.map((dir) => spawnGateway({ ...db.env, ...UNSET, GATEWAY_DATA_DIR: dir })));
    for (const s of starts) if (s.status === 'fulfilled') started.push(s.value);
    for (const s of starts) if (s.status === 'rejected') throw s.reason;

    const printed = started.map((gw) => gw.output().match(TOKEN_LINE)?.[1]).filter((t) => t !== undefined);
    assert.equal(printed.length, 1, `one process prints the token: ${started.map((gw) => gw.output()).join(' | ')}`);
    const token = printed[0] as string;
    assert.ok(token.length >= 32);
    for (const gw of started) {
      assert.deepEqual(await operatorStatus(gw, token), [200, 200], gw.base);
      assert.deepEqual(await operatorStatus(gw, `${token}x`), [401, 401], gw.base);
    }
    // The generating process wrote it to its data directory, readable by its owner only.
    const writer = started.findIndex((gw) => TOKEN_LINE.test(gw.output()));
    const file = join(dirs[writer] as string, 'admin-token');
    assert.equal(readFileSync(file, 'utf8').trim(), token);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    if (DIALECT === 'postgres') assert.equal(existsSync(join(dirs[1 - writer] as string, 'admin-token')), false);
    assert.match(started[writer]?.output() ?? '', new RegExp(`also in ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

    // The database keeps only the digest.
    await Promise.all(started.splice(0).map((gw) => gw.stop()));
    const settings = await storedSettings(db, ownDir);
    assert.deepEqual(settings, [{ name: 'operator_token_sha256', value: operatorTokenSha256(token) }]);

    // A restart prints nothing and accepts the same token.
    const again = await spawnGateway({ ...db.env, ...UNSET, GATEWAY_DATA_DIR: ownDir });
    started.push(again);
    assert.doesNotMatch(again.output(), /Operator token/);
    assert.deepEqual(await operatorStatus(again, token), [200, 200]);
    await started.pop()?.stop();

    if (DIALECT === 'postgres') {
      // A member of the fleet whose data directory has its own admin-token from before the fleet shared one: renamed, not used.
      const stray = mkdtempSync(join(tmpdir(), 'gw-token-'));
      dirs.push(stray);
      writeFileSync(join(stray, 'admin-token'), 'a-token-of-another-time-0123456789\n');
      const strayGw = await spawnGateway({ ...db.env, ...UNSET, GATEWAY_DATA_DIR: stray });
      started.push(strayGw);
      assert.equal(existsSync(join(stray, 'admin-token')), false);
      assert.equal(readFileSync(join(stray, 'admin-token.old'), 'utf8').trim(), 'a-token-of-another-time-0123456789');
      assert.deepEqual(await operatorStatus(strayGw, token), [200, 200]);
      assert.deepEqual(await operatorStatus(strayGw, 'a-token-of-another-time-0123456789'), [401, 401]);
      await started.pop()?.stop();
    }

    // GATEWAY_ADMIN_TOKEN, when set, is the token of that process: the stored one is not accepted there.
    const byEnv = await spawnGateway({ ...db.env, ...UNSET, GATEWAY_DATA_DIR: ownDir, GATEWAY_ADMIN_TOKEN: 'an-explicit-operator-token-42' });
    started.push(byEnv);
    assert.doesNotMatch(byEnv.output(), /Operator token/);
    assert.deepEqual(await operatorStatus(byEnv, 'an-explicit-operator-token-42'), [200, 200]);
    assert.deepEqual(await operatorStatus(byEnv, token), [401, 401]);
  } finally {
    await Promise.all(started.map((gw) => gw.stop()));
    for (const dir of dirs.slice(1)) if (dir !== db.env.GATEWAY_DATA_DIR) rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
});

test("SQLite: a data directory's admin-token that is not the database's is renamed admin-token.old", { skip: DIALECT !== 'sqlite' }, async () => {
  const db = await freshDatabase();
  const dir = db.env.GATEWAY_DATA_DIR as string;
  try {
    let gw = await spawnGateway({ ...db.env, ...UNSET });
    const token = gw.output().match(TOKEN_LINE)?.[1] as string;
    await gw.stop();
    writeFileSync(join(dir, 'admin-token'), 'edited-by-hand-0123456789abcdef\n');
    gw = await spawnGateway({ ...db.env, ...UNSET });
    try {
      assert.equal(existsSync(join(dir, 'admin-token')), false);
      assert.equal(readFileSync(join(dir, 'admin-token.old'), 'utf8').trim(), 'edited-by-hand-0123456789abcdef');
      assert.deepEqual(await operatorStatus(gw, token), [200, 200]);
      assert.deepEqual(await operatorStatus(gw, 'edited-by-hand-0123456789abcdef'), [401, 401]);
    } finally {
      await gw.stop();
    }
  } finally {
    await db.drop();
  }
});

test('upgrade: the admin-token file of an earlier version becomes the database token, nothing new printed', async () => {
  const db = await freshDatabase();
  const dir = db.env.GATEWAY_DATA_DIR as string;
  writeFileSync(join(dir, 'admin-token'), 'kept-from-an-earlier-version-0001\n', { mode: 0o600 });
  try {
    const gw = await spawnGateway({ ...db.env, ...UNSET });
    try {
      assert.doesNotMatch(gw.output(), /Operator token/);
      assert.deepEqual(await operatorStatus(gw, 'kept-from-an-earlier-version-0001'), [200, 200]);
      assert.equal(readFileSync(join(dir, 'admin-token'), 'utf8').trim(), 'kept-from-an-earlier-version-0001');
    } finally {
      await gw.stop();
    }
    assert.deepEqual(await storedSettings(db, dir), [{ name: 'operator_token_sha256', value: operatorTokenSha256('kept-from-an-earlier-version-0001') }]);
  } finally {
    await db.drop();
  }
});

test('defaults: listens on 127.0.0.1, no demo account; --demo (or GATEWAY_DEMO=true) creates one on a new database and prints a key and a curl that work', async () => {
  const TOKEN = 'defaults-test-operator-token-01';
  const dbs: TestDatabase[] = [];
  const fresh = async () => {
    const db = await freshDatabase();
    dbs.push(db);
    return db;
  };
  try {
    // No HOST, no GATEWAY_DEMO.
    const plain = await fresh();
    let gw = await spawnGateway({ ...plain.env, ...UNSET, HOST: '', GATEWAY_ADMIN_TOKEN: TOKEN });
    try {
      assert.match(gw.base, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.doesNotMatch(gw.output(), /Demo/);
      assert.deepEqual((await http(gw.base, 'GET', '/admin/accounts', undefined, asOperator(TOKEN))).body, { records: [], total: 0 });
    } finally {
      await gw.stop();
    }

    // --demo: the demo account, still on 127.0.0.1 (HOST decides where to listen).
    const demoDb = await fresh();
    gw = await spawnGateway({ ...demoDb.env, ...UNSET, HOST: '', GATEWAY_ADMIN_TOKEN: TOKEN }, ['--demo']);
    try {
      assert.match(gw.base, /^http:\/\/127\.0\.0\.1:\d+$/);
      const out = gw.output();
      const key = out.match(/^Demo API key: (\S+)$/m)?.[1];
      assert.ok(key, out);
      // Run the printed curl: its URL, key and body.
      const curl = out.match(/curl -s -X POST (\S+) -H 'x-api-key: (\S+)' -H 'content-type: application\/json' -d '(.+)'$/m);
      assert.ok(curl, out);
      assert.equal(curl[2], key);
      assert.ok(curl[1]?.startsWith(gw.base), `${curl[1]} is this process`);
      const sent = await fetch(curl[1] as string, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: curl[3] });
      assert.equal(sent.status, 200, await sent.text());
      const accounts = (await http(gw.base, 'GET', '/admin/accounts', undefined, asOperator(TOKEN))).body;
      assert.deepEqual(
        accounts.records.map((a: { name: string }) => a.name),
        ['Demo'],
      );
    } finally {
      await gw.stop();
    }
    // Not a new database any more: nothing created, and it says so.
    gw = await spawnGateway({ ...demoDb.env, ...UNSET, GATEWAY_ADMIN_TOKEN: TOKEN }, ['--demo']);
    try {
      assert.match(gw.output(), /Demo: not created, the database already has accounts/);
      assert.doesNotMatch(gw.output(), /Demo API key/);
      assert.equal((await http(gw.base, 'GET', '/admin/accounts', undefined, asOperator(TOKEN))).body.total, 1);
    } finally {
      await gw.stop();
    }

    // GATEWAY_DEMO=true does the same.
    const envDemo = await fresh();
    gw = await spawnGateway({ ...envDemo.env, ...UNSET, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'true' });
    try {
      assert.match(gw.output(), /^Demo API key: \S+$/m);
    } finally {
      await gw.stop();
    }

    // Anything but --demo is a usage error.
    await assert.rejects(
      spawnGateway({ ...plain.env, ...UNSET, GATEWAY_ADMIN_TOKEN: TOKEN }, ['--deom']),
      /exited with 64[\s\S]*Usage: npm start \[-- --demo\]/,
    );
  } finally {
    for (const db of dbs) await db.drop();
  }
});
