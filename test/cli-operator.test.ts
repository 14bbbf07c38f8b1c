import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { freshDatabase, startGateway, type TestDatabase } from './helpers.ts';
import { legacy } from './legacy/legacy-helpers.ts';

/*
 * The operator CLI's lists and account (de)activation (docs/operator.md), as
 * an operator runs them: a separate process on the gateway's database.
 */

let db: TestDatabase | null = null;
after(async () => db?.drop());

function run(env: Record<string, string>, ...args: string[]) {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: res.status, out: res.stdout, err: res.stderr };
}
const json = (env: Record<string, string>, ...args: string[]) => {
  const res = run(env, ...args);
  assert.equal(res.code, 0, `${args.join(' ')}: ${res.err}`);
  return JSON.parse(res.out);
};
/** The table's lines, each split on runs of 2+ spaces (columns). */
const table = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));

test('account list, key list, route list: a table by default, --json the answer as is; deactivate and activate', async () => {
  db = await freshDatabase();
  const env = { ...db.env, GATEWAY_DEMO: 'false' };
  const acme = json(env, 'account', 'create', '--name', 'Acme Comércio', '--balance', '10.5');
  const beta = json(env, 'account', 'create', '--name', 'Beta', '--role', 'RESELLER');
  const route = json(env, 'route', 'create', '--name', 'Claro SMS', '--price', '0.065', '--reply-price', '0.01');
  json(env, 'route', 'grant', '--account', String(acme.id), '--route', String(route.id));
  const first = json(env, 'key', 'issue', '--account', String(acme.id), '--allowed-ip', '10.0.0.0/8');
  const second = json(env, 'key', 'issue', '--account', String(acme.id));
  json(env, 'key', 'revoke', '--key', String(first.id));
  const off = json(env, 'account', 'deactivate', '--account', String(beta.id));
  assert.equal(off.active, false);

  const accounts = run(env, 'account', 'list');
  assert.equal(accounts.code, 0, accounts.err);
  const rows = table(accounts.out);
  assert.deepEqual(rows[0], ['ID', 'NAME', 'ROLE', 'BALANCE', 'ACTIVE', 'PARENT', 'CREATED (UTC)']);
  assert.deepEqual(
    rows.slice(1, 3).map((r) => r.slice(0, 6)),
    [
      [String(beta.id), 'Beta', 'RESELLER', '0', 'no', '-'],
      [String(acme.id), 'Acme Comércio', 'CUSTOMER', '10.5', 'yes', '-'],
    ],
    'newest first',
  );
  assert.deepEqual(rows.at(-1), ['2 accounts']);
  const byId = json(env, 'account', 'list', '--order', 'id', '--json');
  assert.equal(byId.total, 2);
  assert.deepEqual(
    byId.records.map((a: { id: number; active: boolean }) => [a.id, a.active]),
    [
      [acme.id, true],
      [beta.id, false],
    ],
  );
  assert.deepEqual(
    json(env, 'account', 'list', '--status', 'deactivated', '--json').records.map((a: { id: number }) => a.id),
    [beta.id],
  );
  assert.deepEqual(
    json(env, 'account', 'list', '--name', 'acme', '--json').records.map((a: { id: number }) => a.id),
    [acme.id],
  );
  const paged = run(env, 'account', 'list', '--order', 'id', '--skip', '1', '--limit', '1');
  assert.deepEqual(table(paged.out).at(-1), ['accounts 2-2 of 2 (--skip, --limit for others)']);

  const keys = run(env, 'key', 'list', '--account', String(acme.id));
  assert.equal(keys.code, 0, keys.err);
  const keyRows = table(keys.out);
  assert.deepEqual(keyRows[0], ['ID', 'KEY', 'CREATED (UTC)', 'REVOKED (UTC)', 'ALLOWED IPS']);
  assert.deepEqual([keyRows[1]?.[0], keyRows[1]?.[1], keyRows[1]?.[4]], [String(first.id), `…${first.key.slice(-4)}`, '10.0.0.0/8']);
  assert.match(keyRows[1]?.[3] ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d$/, 'revoked');
  assert.deepEqual([keyRows[2]?.[1], keyRows[2]?.[3], keyRows[2]?.[4]], [`…${second.key.slice(-4)}`, '-', 'any']);
  for (const k of [first.key, second.key]) assert.ok(!keys.out.includes(k.slice(0, 8)), 'never the key');
  assert.equal(json(env, 'key', 'list', '--account', String(acme.id), '--json').records[0].hint, first.key.slice(-4));

  const routes = run(env, 'route', 'list');
  assert.deepEqual(table(routes.out), [
    ['ID', 'NAME', 'CHANNEL', 'CONNECTOR', 'PRICE', 'REPLY', 'PRODUCT', 'FALLBACK'],
    [String(route.id), 'Claro SMS', 'SMS', 'simulator', '0.065', '0.01', 'SMS (1)', '-'],
    ['1 route'],
  ]);
  assert.equal(json(env, 'route', 'list', '--account', String(acme.id), '--json').total, 1);
  assert.equal(run(env, 'route', 'list', '--account', String(beta.id)).out, '0 routes\n');

  const on = json(env, 'account', 'activate', '--account', String(beta.id));
  assert.equal(on.active, true);
  assert.equal(json(env, 'account', 'list', '--status', 'deactivated', '--json').total, 0);
});

test('list and (de)activation mistakes exit 65 with the problem, and change nothing', async () => {
  const local = await freshDatabase();
  try {
    const env = { ...local.env, GATEWAY_DEMO: 'false' };
    const cases: [string[], RegExp][] = [
      [['account', 'list', '--limit', '0'], /limit: must be a whole number from 1 to 1000/],
      [['account', 'list', '--limit', '1001'], /limit: must be a whole number from 1 to 1000/],
      [['account', 'list', '--skip=-1'], /skip: must be a whole number from 0/],
      [['account', 'list', '--skip', 'x'], /skip: must be a whole number/],
      [['account', 'list', '--status', 'inactive'], /status: must be one of "active", "deactivated", "all"/],
      [['account', 'list', '--order', 'oldest'], /order: must be one of "newest", "id"/],
      [['key', 'list'], /--account is required/],
      [['key', 'list', '--account', '999'], /Account 999 was not found/],
      [['route', 'list', '--account', '999'], /Account 999 was not found/],
      [['account', 'deactivate', '--account', '999'], /Account 999 was not found/],
      [['account', 'activate', '--account', 'abc'], /--account must be a positive integer/],
    ];
    for (const [args, message] of cases) {
      const res = run(env, ...args);
      assert.equal(res.code, 65, `${args.join(' ')}: ${res.out}`);
      assert.match(res.err, message);
    }
    assert.equal(run(env, 'account', 'list').out, '0 accounts\n');
  } finally {
    await local.drop();
  }
});

test('a deactivation by the CLI (another process) reaches a running gateway within its key cache lifetime (1 s)', async () => {
  const local = await freshDatabase();
  const env = { ...local.env, GATEWAY_DEMO: 'false' };
  const gw = await startGateway({}, {}, local);
  try {
    const customer = await gw.customer();
    assert.equal((await gw.call(customer.key, 'GET', '/balance')).status, 200, 'the key is in the cache');
    const waitFor = async (status: number) => {
      const since = Date.now();
      await gw.eventually(
        async () => [(await gw.call(customer.key, 'GET', '/balance')).status, (await legacy(gw, customer.key, 'GET', '/credits')).status],
        (s) => s[0] === status && s[1] === status,
        `${status} on both interfaces`,
      );
      return Date.now() - since;
    };
    assert.equal(run(env, 'account', 'deactivate', '--account', String(customer.accountId)).code, 0);
    assert.ok((await waitFor(401)) < 2500, 'within the cache lifetime (and a margin for a loaded machine)');
    assert.equal(run(env, 'account', 'activate', '--account', String(customer.accountId)).code, 0);
    assert.ok((await waitFor(200)) < 2500);
  } finally {
    await gw.close();
    await local.drop();
  }
});
