import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';
import { legacy } from './legacy/legacy-helpers.ts';
import { ConfigError, loadConfig } from '../src/config.ts';

// Per-account rate limits (docs/operations.md, "Rate limits"). Every window is a minute long and the
// tests count answers, never time them: a limit of N a second is N × 60 requests per window.
const WINDOW = { RATE_LIMIT_WINDOW_SECONDS: '60' };
const REDIS_URL = 'redis://127.0.0.1:6379';

const redisUp = await new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1');
  socket.setTimeout(1000);
  socket.once('connect', () => {
    socket.destroy();
    resolve(true);
  });
  socket.once('error', () => resolve(false));
  socket.once('timeout', () => {
    socket.destroy();
    resolve(false);
  });
});

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

before(async () => {
  gw = await startGateway(WINDOW);
  alice = await gw.customer();
  bob = await gw.customer();
});
after(() => gw.close());

/** Sends `n` requests one after the other; the statuses, counted. */
async function flood(n: number, send: (i: number) => Promise<{ status: number }>) {
  const counts: Record<number, number> = {};
  for (let i = 0; i < n; i++) {
    const { status } = await send(i);
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

test('the operator sets, reads and clears an account rate limit', async () => {
  const account = (await gw.admin('POST', '/admin/accounts', { name: 'Limits' })).body.id;
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${account}/rate-limit`)).body, { accountId: account, perSecond: 'default', gatewayPerSecond: null });
  const set = await gw.admin('PUT', `/admin/accounts/${account}/rate-limit`, { perSecond: 25 });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body, { accountId: account, perSecond: 25, gatewayPerSecond: 25 });
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${account}/rate-limit`)).body.perSecond, 25);
  assert.equal((await gw.admin('PUT', `/admin/accounts/${account}/rate-limit`, { perSecond: 'off' })).body.perSecond, 'off');
  assert.equal((await gw.admin('GET', `/admin/accounts/${account}/rate-limit`)).body.perSecond, 'off');
  assert.equal((await gw.admin('PUT', `/admin/accounts/${account}/rate-limit`, { perSecond: 'default' })).body.perSecond, 'default');

  for (const perSecond of [0, -1, 1.5, 'none', null, 2_000_000]) {
    const bad = await gw.admin('PUT', `/admin/accounts/${account}/rate-limit`, { perSecond });
    assert.equal(bad.status, 400, JSON.stringify(perSecond));
    assert.match(bad.body.error, /perSecond/);
  }
  assert.equal((await gw.admin('PUT', '/admin/accounts/999999/rate-limit', { perSecond: 5 })).status, 404);
  assert.equal((await gw.admin('GET', '/admin/accounts/999999/rate-limit')).status, 404);
  assert.equal((await gw.call(null, 'GET', `/admin/accounts/${account}/rate-limit`)).status, 401);
});

test('gateway: over the limit, 429 in the gateway envelope with Retry-After; another account is not affected', async () => {
  await gw.admin('PUT', `/admin/accounts/${alice.accountId}/rate-limit`, { perSecond: 1 });
  assert.deepEqual(await flood(60, () => gw.call(alice.key, 'GET', '/balance')), { 200: 60 });
  const limited = await gw.call(alice.key, 'GET', '/balance');
  assert.equal(limited.status, 429);
  assert.equal(limited.body.hasError, true);
  assert.equal(limited.body.object, null);
  assert.match(limited.body.message, /Too many requests for this account: retry after \d+ second/);
  assert.deepEqual(limited.body.errors, [limited.body.message]);
  const wait = Number(limited.headers['retry-after']);
  assert.ok(wait >= 1 && wait <= 60, String(wait));
  // Every operation of the account, not only the one flooded.
  assert.equal((await gw.call(alice.key, 'GET', '/routes')).status, 429);

  // Bob (no limit of his own; the gateway default is off) goes on.
  assert.deepEqual(await flood(100, () => gw.call(bob.key, 'GET', '/balance')), { 200: 100 });
  // Public routes and the operator API are not limited.
  assert.equal((await gw.call(null, 'GET', '/healthz')).status, 200);
  assert.equal((await gw.admin('GET', `/admin/accounts/${alice.accountId}`)).status, 200);
});

test('legacy: over the limit, 429 in the legacy envelope with Retry-After and the legacy text', async () => {
  const carol = await gw.customer();
  await gw.admin('PUT', `/admin/accounts/${carol.accountId}/rate-limit`, { perSecond: 1 });
  assert.deepEqual(await flood(60, () => legacy(gw, carol.key, 'GET', '/credits')), { 200: 60 });
  const limited = await legacy(gw, carol.key, 'GET', '/credits');
  assert.equal(limited.status, 429);
  assert.deepEqual({ ...limited.body, Message: '' }, { Success: false, Object: null, Message: '' });
  assert.match(limited.body.Message, /^Muitas requisições em pouco tempo\. Tente novamente em \d+ segundo\(s\)\.$/);
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  // The other account goes on; each interface counts apart.
  assert.equal((await legacy(gw, bob.key, 'GET', '/credits')).status, 200);
  assert.equal((await gw.call(carol.key, 'GET', '/balance')).status, 200);
});

test('unauthenticated requests are not counted against an account', async () => {
  const dave = await gw.customer({ allowedIps: ['10.0.0.0/8'] });
  const erin = await gw.customer();
  await gw.admin('PUT', `/admin/accounts/${dave.accountId}/rate-limit`, { perSecond: 1 });
  await gw.admin('PUT', `/admin/accounts/${erin.accountId}/rate-limit`, { perSecond: 1 });
  // Dave's key from an address outside its allow-list, and unknown keys: 401, never 429.
  assert.deepEqual(await flood(70, () => gw.call(dave.key, 'GET', '/balance')), { 401: 70 });
  assert.deepEqual(await flood(70, () => gw.call(randomUUID(), 'GET', '/balance')), { 401: 70 });
  assert.deepEqual(await flood(70, () => legacy(gw, dave.key, 'GET', '/credits')), { 401: 70 });
  // From its allowed address, Dave has his whole allowance.
  const fromAllowed = () =>
    gw.app.inject({ method: 'GET', url: '/balance', headers: { 'x-api-key': dave.key }, remoteAddress: '10.1.2.3' }).then((r) => ({ status: r.statusCode }));
  assert.deepEqual(await flood(61, fromAllowed), { 200: 60, 429: 1 });
  assert.deepEqual(await flood(60, () => gw.call(erin.key, 'GET', '/balance')), { 200: 60 });
});

test('an operator change applies at once, without restart', async () => {
  const frank = await gw.customer();
  await gw.admin('PUT', `/admin/accounts/${frank.accountId}/rate-limit`, { perSecond: 1 });
  assert.deepEqual(await flood(61, () => gw.call(frank.key, 'GET', '/balance')), { 200: 60, 429: 1 });
  await gw.admin('PUT', `/admin/accounts/${frank.accountId}/rate-limit`, { perSecond: 'off' });
  assert.deepEqual(await flood(50, () => gw.call(frank.key, 'GET', '/balance')), { 200: 50 });
  // Raised: the window's count goes on (61 so far, the refused one included), against the new allowance of 120.
  await gw.admin('PUT', `/admin/accounts/${frank.accountId}/rate-limit`, { perSecond: 2 });
  assert.deepEqual(await flood(60, () => gw.call(frank.key, 'GET', '/balance')), { 200: 59, 429: 1 });
  await gw.admin('PUT', `/admin/accounts/${frank.accountId}/rate-limit`, { perSecond: 'default' });
  assert.equal((await gw.call(frank.key, 'GET', '/balance')).status, 200);
});

test('the CLI sets it, and a running gateway follows without restart', async () => {
  const cli = (...args: string[]) => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'account', 'rate-limit', ...args], {
      env: { ...process.env, ...gw.db.env },
      encoding: 'utf8',
    });
    return { code: res.status, out: res.stdout, err: res.stderr };
  };
  const ken = await gw.customer();
  const id = String(ken.accountId);
  assert.deepEqual(JSON.parse(cli('--account', id).out), { accountId: ken.accountId, perSecond: 'default', gatewayPerSecond: null });
  const set = cli('--account', id, '--per-second', '1');
  assert.equal(set.code, 0, set.err);
  assert.equal(JSON.parse(set.out).perSecond, 1);
  assert.deepEqual(await flood(61, () => gw.call(ken.key, 'GET', '/balance')), { 200: 60, 429: 1 });
  assert.equal(JSON.parse(cli('--account', id, '--off').out).perSecond, 'off');
  // Another process changed it: this one's cache forgets within RATE_LIMIT_CACHE_MS (5 s).
  await gw.eventually(
    () => gw.call(ken.key, 'GET', '/balance'),
    (r) => r.status === 200,
    'the limit lifted',
  );
  for (const bad of [
    ['--per-second', '0'],
    ['--per-second', 'x'],
    ['--off', '--default'],
  ]) {
    const res = cli('--account', id, ...bad);
    assert.notEqual(res.code, 0, bad.join(' '));
  }
});

test('RATE_LIMIT_PER_SECOND is the gateway default of accounts without their own', async () => {
  const limited = await startGateway({ ...WINDOW, RATE_LIMIT_PER_SECOND: '2' });
  try {
    const grace = await limited.customer();
    const heidi = await limited.customer();
    assert.deepEqual(await flood(121, () => limited.call(grace.key, 'GET', '/balance')), { 200: 120, 429: 1 });
    await limited.admin('PUT', `/admin/accounts/${heidi.accountId}/rate-limit`, { perSecond: 'off' });
    assert.deepEqual(await flood(150, () => limited.call(heidi.key, 'GET', '/balance')), { 200: 150 });
    assert.equal((await limited.admin('GET', `/admin/accounts/${grace.accountId}/rate-limit`)).body.gatewayPerSecond, 2);
  } finally {
    await limited.close();
  }
});

test('a bad rate limit variable stops the start, naming it', () => {
  for (const [name, value] of [
    ['RATE_LIMIT_PER_SECOND', '-1'],
    ['RATE_LIMIT_PER_SECOND', 'many'],
    ['RATE_LIMIT_WINDOW_SECONDS', '0'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
  ]) {
    assert.throws(
      () => loadConfig({ [name as string]: value }),
      (err: unknown) => err instanceof ConfigError && err.message.includes(`${name}=`),
      `${name}=${value}`,
    );
  }
  assert.match(
    (() => {
      try {
        loadConfig({ REDIS_URL: 'tcp://x' });
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })(),
    /REDIS_URL="tcp:\/\/x" must be a Redis URL/,
  );
});

test('two gateway processes sharing Redis refuse a flood at the same total rate', {
  skip: !redisUp && 'Redis is not reachable at 127.0.0.1:6379',
}, async () => {
  const env = { ...WINDOW, REDIS_URL, RATE_LIMIT_REDIS_PREFIX: `test-rate-limit-${randomUUID()}:` };
  const one = await startGateway(env);
  const two = await startGateway(env, {}, one.db);
  try {
    const ivan = await one.customer();
    const judy = await one.customer();
    await one.admin('PUT', `/admin/accounts/${ivan.accountId}/rate-limit`, { perSecond: 1 });
    await one.admin('PUT', `/admin/accounts/${judy.accountId}/rate-limit`, { perSecond: 1 });
    // 3N requests alternately to both processes within one window: N accepted in total, not 2N.
    const gateway = await flood(180, (i) => (i % 2 === 0 ? one : two).call(ivan.key, 'GET', '/balance'));
    assert.deepEqual(gateway, { 200: 60, 429: 120 });
    const legacyCounts = await flood(180, (i) => legacy(i % 2 === 0 ? one : two, ivan.key, 'GET', '/credits'));
    assert.deepEqual(legacyCounts, { 200: 60, 429: 120 });
    // Another account has its own count on both.
    assert.deepEqual(await flood(60, (i) => (i % 2 === 0 ? two : one).call(judy.key, 'GET', '/balance')), { 200: 60 });
    // The operator lifts the limit through one process: there it applies at once (in the other, within RATE_LIMIT_CACHE_MS).
    await two.admin('PUT', `/admin/accounts/${ivan.accountId}/rate-limit`, { perSecond: 'off' });
    assert.equal((await two.call(ivan.key, 'GET', '/balance')).status, 200);
  } finally {
    await two.close();
    await one.close();
  }
});

test('an unreachable Redis lets requests through rather than refuse them all', { skip: !redisUp && 'Redis tests skipped' }, async () => {
  const down = await startGateway({ ...WINDOW, REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_SECOND: '1' });
  try {
    const kim = await down.customer();
    assert.deepEqual(await flood(70, () => down.call(kim.key, 'GET', '/balance')), { 200: 70 });
  } finally {
    await down.close();
  }
});
