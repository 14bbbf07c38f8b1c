import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDatabase, startGateway, type TestDatabase } from './helpers.ts';

let db: TestDatabase | null = null;
after(async () => db?.drop());

/** The operator CLI as an operator runs it: a separate process on the same database. */
function cli(env: Record<string, string>, ...args: string[]) {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: res.status, out: res.stdout ? (JSON.parse(res.stdout) as any) : null, err: res.stderr };
}

test('the CLI provisions an account the gateway then serves', async () => {
  db = await freshDatabase();
  const env = { ...db.env, GATEWAY_DEMO: 'false' };
  const account = cli(env, 'account', 'create', '--name', 'Acme', '--balance', '10.5');
  assert.equal(account.code, 0, account.err);
  assert.deepEqual({ name: account.out.name, role: account.out.role, balance: account.out.balance }, { name: 'Acme', role: 'CUSTOMER', balance: 10.5 });
  const id = String(account.out.id);

  const route = cli(env, 'route', 'create', '--name', 'Claro SMS', '--price', '0.065', '--reply-price', '0.01');
  assert.equal(route.code, 0, route.err);
  assert.equal(route.out.farePrice, 0.065);
  assert.equal(cli(env, 'route', 'grant', '--account', id, '--route', String(route.out.id)).code, 0);
  assert.equal(cli(env, 'credits', 'add', '--account', id, '--amount=-0.5').out.balance, 10);

  const csv = join(db.env.GATEWAY_DATA_DIR ?? '', 'numbers.csv');
  writeFileSync(csv, 'phone,name\n5511988887777,Ana\n+5511988886666,Bruno\nnot-a-phone,Bad\n5511988887777,Ana again\n');
  const group = cli(env, 'group', 'import', '--account', id, '--name', 'clients', '--csv', csv);
  assert.equal(group.code, 0, group.err);
  assert.deepEqual({ added: group.out.added, invalid: group.out.invalid }, { added: 2, invalid: ['not-a-phone'] });

  const key = cli(env, 'key', 'issue', '--account', id);
  assert.match(key.out.key, /^[0-9a-f-]{36}$/);

  // The gateway sees what the CLI made.
  const gw = await startGateway({ GATEWAY_DEMO: 'false' }, {}, db);
  try {
    const groups = await gw.call(key.out.key, 'GET', '/contacts');
    assert.deepEqual(
      groups.body.object.map((g: any) => [g.name, g.validContacts]),
      [['clients', 2]],
    );
    const routes = await gw.call(key.out.key, 'GET', '/routes');
    assert.deepEqual(
      routes.body.object.map((r: any) => [r.displayName, r.farePrice]),
      [['Claro SMS', 0.065]],
    );
    assert.equal(cli(env, 'key', 'revoke', '--key', String(key.out.id)).code, 0);
    // Another process revoked it: this one's key cache forgets it within a second.
    await gw.eventually(
      async () => (await gw.call(key.out.key, 'GET', '/balance')).status,
      (s) => s === 401,
      'revocation seen',
    );
  } finally {
    await gw.close();
  }
});

test('CLI mistakes exit non-zero with a message and change nothing', async () => {
  const local = await freshDatabase();
  try {
    const env = { ...local.env, GATEWAY_DEMO: 'false' };
    const missing = cli(env, 'account', 'create');
    assert.equal(missing.code, 65);
    assert.match(missing.err, /--name is required/);
    const badConnector = cli(env, 'route', 'create', '--name', 'X', '--price', '1', '--reply-price', '0', '--connector', 'nope');
    assert.equal(badConnector.code, 65);
    assert.match(badConnector.err, /no carrier connection named "nope"/);
    const badPrice = cli(env, 'route', 'create', '--name', 'X', '--price', '0.0000001', '--reply-price', '0');
    assert.equal(badPrice.code, 65);
    assert.match(badPrice.err, /farePrice/);
    const unknown = cli(env, 'credits', 'add', '--account', '999', '--amount', '5');
    assert.equal(unknown.code, 65);
    assert.match(unknown.err, /Account 999 was not found/);
    const negative = cli(env, 'account', 'create', '--name', 'A');
    assert.equal(cli(env, 'credits', 'add', '--account', String(negative.out.id), '--amount=-1').code, 65);
    assert.equal(cli(env, 'account', 'show', '--account', String(negative.out.id)).out.balance, 0);
  } finally {
    await local.drop();
  }
});
