import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startGateway, type TestGateway } from './helpers.ts';
import { RbmSim } from '../tools/rbm-sim/server.ts';

// SMS fallback (src/rcs/fallback.ts): an RCS message to a phone without RCS
// (RBM simulator and built-in simulator: receivers ending in 0009) goes out
// as SMS on the route's fallback route, charged at that route's price.

const TOKEN = 'rbm-fallback-token';
const SECRET = 'rbm-fallback-secret';

let gw: TestGateway;
let sim: RbmSim;
let dir: string;
const routes: Record<'sms' | 'rcs' | 'rcsPlain' | 'simRcs' | 'expensiveSms' | 'rcsCheap', number> = {
  sms: 0,
  rcs: 0,
  rcsPlain: 0,
  simRcs: 0,
  expensiveSms: 0,
  rcsCheap: 0,
};
let keyA: string;
let accountA: number;
let keyB: string;
let accountB: number;

const ROUTE = { productId: 1, replyFarePrice: '0', connector: 'simulator' };

async function route(body: Record<string, unknown>): Promise<number> {
  const res = await gw.admin('POST', '/admin/routes', { ...ROUTE, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as number;
}

async function customer(balance: number, routeIds: number[]) {
  const account = await gw.admin('POST', '/admin/accounts', { name: 'Fallback customer', balance });
  for (const routeId of routeIds) assert.equal((await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId })).status, 204);
  const key = await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {});
  return { accountId: account.body.id as number, key: key.body.key as string };
}

before(async () => {
  sim = await new RbmSim({ token: TOKEN, secret: SECRET, deliveryMs: 20 }).start();
  dir = mkdtempSync(join(tmpdir(), 'rbm-fallback-'));
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({
      rbm: [{ name: 'rbm1', baseUrl: sim.url, agentId: 'fallback-agent', tokenEnv: 'RBM_FALLBACK_TOKEN', webhookSecretEnv: 'RBM_FALLBACK_SECRET' }],
    }),
  );
  process.env.RBM_FALLBACK_TOKEN = TOKEN;
  process.env.RBM_FALLBACK_SECRET = SECRET;
  gw = await startGateway({ GATEWAY_CARRIERS_FILE: file, GATEWAY_DEMO: 'false' });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  sim.webhookUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/rbm/events/rbm1`;
  // The fallback SMS routes are granted to nobody: the operator's choice, not the customer's.
  routes.sms = await route({ displayName: 'SMS fallback', productName: 'SMS', farePrice: '0.2', channel: 'SMS' });
  routes.rcs = await route({
    displayName: 'RBM',
    productName: 'RCS',
    productId: 2,
    farePrice: '0.5',
    channel: 'RCS',
    connector: 'rbm1',
    fallbackRouteId: routes.sms,
  });
  routes.rcsPlain = await route({ displayName: 'RBM no fallback', productName: 'RCS', productId: 2, farePrice: '0.5', channel: 'RCS', connector: 'rbm1' });
  routes.simRcs = await route({ displayName: 'Sim RCS', productName: 'RCS', productId: 2, farePrice: '0.5', channel: 'RCS', fallbackRouteId: routes.sms });
  routes.expensiveSms = await route({ displayName: 'Expensive SMS', productName: 'SMS', farePrice: '3', channel: 'SMS' });
  routes.rcsCheap = await route({ displayName: 'Cheap RBM', productName: 'RCS', productId: 2, farePrice: '0.1', channel: 'RCS', connector: 'rbm1' });
  const patched = await gw.admin('PATCH', `/admin/routes/${routes.rcsCheap}`, { fallbackRouteId: routes.expensiveSms });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  ({ accountId: accountA, key: keyA } = await customer(10, [routes.rcs, routes.rcsPlain, routes.simRcs]));
  // A status destination, so that A's status changes are recorded as events (status_log), which the tests read as each message's history.
  const callbacks = await gw.admin('PUT', `/admin/accounts/${accountA}/callbacks`, { statusUrl: 'https://hooks.example.com/status' });
  assert.equal(callbacks.status, 200, JSON.stringify(callbacks.body));
  ({ accountId: accountB, key: keyB } = await customer(1, [routes.rcsCheap]));
});
after(async () => {
  await gw.close();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
});

const NO_RCS = (n: number) => `55219${String(n).padStart(4, '0')}0009`;
const WITH_RCS = (n: number) => `55219${String(n).padStart(4, '0')}7777`;
const db = () => gw.core.db.kysely;
const balance = async (key: string) => (await gw.call(key, 'GET', '/balance')).body.object.balance as number;
const send = async (key: string, kind: string, body: unknown) => {
  const res = await gw.call(key, 'POST', `/messages/rcs/${kind}/send`, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
};
const sent = async (key: string, requestId: string) => (await gw.call(key, 'GET', `/reports/messages/sent?requestId=${requestId}`)).body.object as any[];
const final = (key: string, requestId: string, n: number) =>
  gw.eventually(
    () => sent(key, requestId),
    (rows) => rows.length === n && rows.every((m) => ['DELIVERED', 'FAILED'].includes(m.status)),
    'final statuses',
  );
const messageTo = (requestId: string, receiver: string) =>
  db().selectFrom('messages').selectAll().where('request_id', '=', requestId).where('receiver', '=', receiver).executeTakeFirstOrThrow();
const ledgerOf = async (requestId: string) =>
  (await db().selectFrom('ledger').select(['amount', 'reason']).where('request_id', '=', requestId).orderBy('id').execute()).map((r) => [
    r.amount / 1e6,
    r.reason,
  ]);
const ledgerSum = async (accountId: number) =>
  (await db().selectFrom('ledger').select('amount').where('account_id', '=', accountId).execute()).reduce((s, r) => s + r.amount, 0) / 1e6;
const logOf = async (messageId: string) =>
  (await db().selectFrom('status_log').select(['status', 'details']).where('message_id', '=', messageId).orderBy('id').execute()).map((r) => r.status);

test('card to a phone without RCS: sent as SMS on the fallback route (title, message, button URLs), charged at its price', async () => {
  const start = await balance(keyA);
  const message =
    'Everything in the store is 20% off today only, online and in every shop, while stocks last. Show this message at the till or use the link below.';
  const requestId = await send(keyA, 'card', {
    receivers: [NO_RCS(1), WITH_RCS(1)],
    route: routes.rcs,
    cardTitle: 'Black Friday',
    cardMessage: message,
    buttons: [{ text: 'Shop now', url: 'https://shop.example.com/bf' }, { text: 'Stop' }],
  });
  const report = await final(keyA, requestId, 2);
  assert.ok(
    report.every((m) => m.status === 'DELIVERED'),
    JSON.stringify(report),
  );

  const text = `Black Friday\n${message}\nShop now: https://shop.example.com/bf`;
  assert.ok(text.length > 160 && text.length <= 306, 'two SMS segments');
  const fallen = await messageTo(requestId, NO_RCS(1));
  assert.deepEqual(
    {
      channel: fallen.channel,
      route: Number(fallen.route_id),
      connector: fallen.connector,
      content: fallen.content,
      payload: fallen.payload,
      segments: fallen.segments,
      cost: fallen.cost,
      status: fallen.status,
    },
    { channel: 'SMS', route: routes.sms, connector: 'simulator', content: text, payload: null, segments: 2, cost: 400_000, status: 'DELIVERED' },
  );
  assert.deepEqual(await logOf(fallen.id), ['QUEUED', 'SENT', 'DELIVERED']);
  const queued = await db()
    .selectFrom('status_log')
    .select('details')
    .where('message_id', '=', fallen.id)
    .where('status', '=', 'QUEUED')
    .executeTakeFirstOrThrow();
  assert.equal(queued.details, `no RCS capability: sent as SMS on route ${routes.sms}`);
  assert.equal(
    sim.received.some((m) => m.messageId === fallen.id),
    false,
    'the RBM platform never took it',
  );
  const rcs = await messageTo(requestId, WITH_RCS(1));
  assert.equal(rcs.channel, 'RCS');
  assert.equal(rcs.connector, 'rbm1');

  // Balance = start - 2 RCS sends + the refunded RCS send - the SMS (2 x 0.2).
  assert.equal(await balance(keyA), Number((start - 1 + 0.5 - 0.4).toFixed(6)));
  assert.deepEqual(await ledgerOf(requestId), [
    [-1, 'send'],
    [0.5, 'refund: no RCS capability, sent as SMS'],
    [-0.4, 'send: SMS fallback'],
  ]);
  assert.equal(await ledgerSum(accountA), await balance(keyA));

  // Reports: the sent report shows what the message became; the requests report what was asked.
  const row = report.find((m) => m.receiver === NO_RCS(1));
  assert.deepEqual(
    { content: row.content, product: row.product, route: row.route, details: row.statusDetails },
    { content: text, product: 'SMS', route: 'SMS fallback', details: 'stat:DELIVRD err:000' },
  );
  assert.equal(report.find((m) => m.receiver === WITH_RCS(1)).route, 'RBM');
  const request = (await gw.call(keyA, 'GET', `/reports/messages/requests?requestId=${requestId}`)).body.object;
  assert.deepEqual(
    request.map((r: any) => [r.content, r.route, r.routeId]),
    [['Black Friday', 'RBM', routes.rcs]],
  );
});

test('the built-in simulator has no RCS for receivers ending in 0009 either: same fallback', async () => {
  const start = await balance(keyA);
  const requestId = await send(keyA, 'basic', { receivers: [NO_RCS(2)], route: routes.simRcs, message: 'Olá, sem RCS' });
  const [row] = await final(keyA, requestId, 1);
  assert.deepEqual([row.status, row.content, row.route], ['DELIVERED', 'Olá, sem RCS', 'SMS fallback']);
  assert.equal(await balance(keyA), Number((start - 0.2).toFixed(6)));
});

test('no fallback route: FAILED and refunded, as before', async () => {
  const start = await balance(keyA);
  const requestId = await send(keyA, 'basic', { receivers: [NO_RCS(3)], route: routes.rcsPlain, message: 'no rcs here' });
  const [row] = await final(keyA, requestId, 1);
  assert.equal(row.status, 'FAILED');
  assert.match(row.statusDetails, /no RCS capability/);
  assert.equal(row.route, 'RBM no fallback');
  assert.equal((await messageTo(requestId, NO_RCS(3))).channel, 'RCS');
  assert.equal(await balance(keyA), start);
  assert.deepEqual(await ledgerOf(requestId), [
    [-0.5, 'send'],
    [0.5, 'refund: rejected by carrier'],
  ]);
});

test('a balance that does not cover the SMS: FAILED and refunded, nothing else charged', async () => {
  // 1 - 0.1 (RCS) leaves 0.9; the SMS costs 3, i.e. 2.9 more than the RCS send.
  const requestId = await send(keyB, 'basic', { receivers: [NO_RCS(4)], route: routes.rcsCheap, message: 'too dear' });
  const [row] = await final(keyB, requestId, 1);
  assert.equal(row.status, 'FAILED');
  assert.match(row.statusDetails, /no RCS capability/);
  const stored = await messageTo(requestId, NO_RCS(4));
  assert.deepEqual([stored.channel, stored.connector, stored.cost], ['RCS', 'rbm1', 100_000]);
  assert.equal(await balance(keyB), 1);
  assert.deepEqual(await ledgerOf(requestId), [
    [-0.1, 'send'],
    [0.1, 'refund: rejected by carrier'],
  ]);
  assert.equal(await ledgerSum(accountB), 1);
});

test('operator API: fallbackRouteId is shown, set, cleared and checked', async () => {
  const assertError = (res: { status: number; body: any }, status: number, mention: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['error']);
    assert.ok(res.body.error.includes(mention), `${res.body.error} should mention ${mention}`);
  };
  const count = async () => (await db().selectFrom('routes').select('id').execute()).length;
  const before = await count();
  const rcs = { displayName: 'X', productName: 'RCS', farePrice: '0.1', channel: 'RCS' };
  assertError(await gw.admin('POST', '/admin/routes', { ...ROUTE, ...rcs, fallbackRouteId: 999_999 }), 400, 'fallbackRouteId: route 999999 does not exist');
  assertError(await gw.admin('POST', '/admin/routes', { ...ROUTE, ...rcs, fallbackRouteId: routes.rcsPlain }), 400, 'must be an SMS route');
  assertError(await gw.admin('POST', '/admin/routes', { ...ROUTE, ...rcs, channel: 'SMS', fallbackRouteId: routes.sms }), 400, 'only an RCS route');
  assertError(await gw.admin('POST', '/admin/routes', { ...ROUTE, ...rcs, fallbackRouteId: 'one' }), 400, 'fallbackRouteId');
  assert.equal(await count(), before);

  assertError(await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, { fallbackRouteId: routes.rcsPlain }), 400, 'its own fallback');
  assertError(await gw.admin('PATCH', `/admin/routes/${routes.sms}`, { fallbackRouteId: routes.expensiveSms }), 400, 'only an RCS route');
  assertError(await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, { fallbackRouteId: routes.rcs }), 400, 'must be an SMS route');
  assertError(await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, { fallbackRouteId: 999_999 }), 400, 'does not exist');
  assertError(await gw.admin('PATCH', '/admin/routes/999999', { fallbackRouteId: routes.sms }), 404, 'Route 999999');
  assertError(await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, {}), 400, 'fallbackRouteId');

  const set = await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, { fallbackRouteId: routes.sms });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body, {
    id: routes.rcsPlain,
    displayName: 'RBM no fallback',
    farePrice: 0.5,
    productName: 'RCS',
    productId: 2,
    replyFarePrice: 0,
    channel: 'RCS',
    connector: 'rbm1',
    fallbackRouteId: routes.sms,
  });
  const cleared = await gw.admin('PATCH', `/admin/routes/${routes.rcsPlain}`, { fallbackRouteId: null });
  assert.equal(cleared.body.fallbackRouteId, null);
  const stored = await db().selectFrom('routes').select('fallback_route_id').where('id', '=', routes.rcsPlain).executeTakeFirstOrThrow();
  assert.equal(stored.fallback_route_id, null);
  // Customers' route list (GET /routes: the public fields only) is unchanged.
  assert.deepEqual(Object.keys((await gw.call(keyA, 'GET', '/routes')).body.object[0]).sort(), [
    'displayName',
    'farePrice',
    'id',
    'productId',
    'productName',
    'replyFarePrice',
  ]);
});
