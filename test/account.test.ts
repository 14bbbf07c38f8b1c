import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 100, farePrice: '0.10' });
  bob = await gw.customer({ balance: 50 });
});
after(() => gw.close());

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ENDPOINTS = ['/contacts', '/routes', '/balance'];

function assertFailure(res: { status: number; body: any }, status: number) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(
    { ...res.body, message: undefined, errors: undefined },
    { hasError: true, message: undefined, totalRecords: 0, errors: undefined, object: null },
  );
  assert.equal(typeof res.body.message, 'string');
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length === 1 && typeof res.body.errors[0] === 'string');
}

/** A gateway call from a given client address (app.inject's default is 127.0.0.1). */
async function from(remoteAddress: string, key: string, url: string, headers: Record<string, string> = {}) {
  const res = await gw.app.inject({ method: 'GET', url, remoteAddress, headers: { 'x-api-key': key, ...headers } });
  return { status: res.statusCode, body: res.json() };
}

async function keyFor(accountId: number, allowedIps?: string[]): Promise<{ id: number; key: string }> {
  const res = await gw.admin('POST', `/admin/accounts/${accountId}/api-keys`, allowedIps ? { allowedIps } : {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

test('GET /contacts: none yet', async () => {
  const res = await gw.call(alice.key, 'GET', '/contacts');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { hasError: false, message: null, totalRecords: 0, errors: [], object: [] });
});

test("GET /contacts: the account's groups with their count of valid contacts", async () => {
  const g1 = await gw.admin('POST', `/admin/accounts/${alice.accountId}/contact-groups`, {
    name: 'Customers',
    numbers: [phone(1), `+${phone(2)}`, 'not a phone', phone(1), '123', ` ${phone(3)} `],
  });
  const g2 = await gw.admin('POST', `/admin/accounts/${alice.accountId}/contact-groups`, { name: 'Empty', numbers: [] });
  const other = await gw.admin('POST', `/admin/accounts/${bob.accountId}/contact-groups`, { name: 'Bob group', numbers: [phone(9)] });
  for (const r of [g1, g2, other]) assert.equal(r.status, 201);

  const res = await gw.call(alice.key, 'GET', '/contacts');
  assert.equal(res.status, 200);
  assert.equal(res.body.totalRecords, 2);
  assert.deepEqual(
    res.body.object.map((g: any) => ({ ...g, createdAt: undefined })),
    [
      { id: g1.body.id, name: 'Customers', createdAt: undefined, validContacts: 3 },
      { id: g2.body.id, name: 'Empty', createdAt: undefined, validContacts: 0 },
    ],
  );
  for (const g of res.body.object) {
    assert.deepEqual(Object.keys(g).sort(), ['createdAt', 'id', 'name', 'validContacts']);
    assert.match(g.createdAt, ISO);
    assert.ok(Math.abs(Date.parse(g.createdAt) - Date.now()) < 24 * 3600 * 1000);
  }
  const bobs = await gw.call(bob.key, 'GET', '/contacts');
  assert.deepEqual(
    bobs.body.object.map((g: any) => [g.id, g.name, g.validContacts]),
    [[other.body.id, 'Bob group', 1]],
  );
});

test('GET /routes: only the routes granted to the account, prices as numbers', async () => {
  const res = await gw.call(alice.key, 'GET', '/routes');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    hasError: false,
    message: null,
    totalRecords: 1,
    errors: [],
    object: [{ id: alice.routeId, displayName: 'SMS Simulator', farePrice: 0.1, productName: 'SMS', productId: 1, replyFarePrice: 0.02 }],
  });

  const extra = await gw.admin('POST', '/admin/routes', {
    displayName: 'Premium',
    productName: 'SMS Premium',
    productId: 7,
    farePrice: '0.065',
    replyFarePrice: '0.000001',
    channel: 'SMS',
    connector: 'simulator',
  });
  assert.equal(extra.status, 201);
  assert.deepEqual(
    (await gw.call(alice.key, 'GET', '/routes')).body.object.map((r: any) => r.id),
    [alice.routeId],
    'not granted: not listed',
  );
  assert.ok(!(await gw.call(bob.key, 'GET', '/routes')).body.object.some((r: any) => r.id === alice.routeId), "another customer's route is not listed");

  assert.equal((await gw.admin('POST', `/admin/accounts/${alice.accountId}/routes`, { routeId: extra.body.id })).status, 204);
  const after = await gw.call(alice.key, 'GET', '/routes');
  assert.equal(after.body.totalRecords, 2);
  assert.deepEqual(after.body.object[1], {
    id: extra.body.id,
    displayName: 'Premium',
    farePrice: 0.065,
    productName: 'SMS Premium',
    productId: 7,
    replyFarePrice: 0.000001,
  });
});

test('GET /routes with an empty JSON body and Content-Type application/json (the published example) works', async () => {
  const plain = await gw.call(alice.key, 'GET', '/routes');
  const withBody = await gw.call(alice.key, 'GET', '/routes', {}, { 'content-type': 'application/json' });
  assert.equal(withBody.status, 200);
  assert.deepEqual(withBody.body, plain.body);
  const res = await gw.app.inject({ method: 'GET', url: '/routes', headers: { 'x-api-key': alice.key, 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), plain.body);
});

test('GET /balance: the envelope with o: null; follows operator credits exactly', async () => {
  const res = await gw.call(bob.key, 'GET', '/balance');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { hasError: false, message: null, totalRecords: 0, errors: [], object: { balance: 50 }, o: null });
  await gw.admin('POST', `/admin/accounts/${bob.accountId}/credits`, { amount: '0.1' });
  await gw.admin('POST', `/admin/accounts/${bob.accountId}/credits`, { amount: '0.2' });
  assert.equal((await gw.call(bob.key, 'GET', '/balance')).body.object.balance, 50.3);
  await gw.admin('POST', `/admin/accounts/${bob.accountId}/credits`, { amount: '-50.3' });
  assert.deepEqual((await gw.call(bob.key, 'GET', '/balance')).body.object, { balance: 0 });
});

test('every account endpoint needs a valid key: 401 in the envelope', async () => {
  for (const url of ENDPOINTS) {
    assertFailure(await gw.call(null, 'GET', url), 401);
    assertFailure(await gw.call('', 'GET', url, undefined, { 'x-api-key': '' }), 401);
    assertFailure(await gw.call(crypto.randomUUID(), 'GET', url), 401);
    assertFailure(await gw.call(' ', 'GET', url), 401);
    assertFailure(await gw.call('x'.repeat(5000), 'GET', url), 401);
    assertFailure(await gw.call(null, 'GET', url, undefined, { authorization: `Bearer ${alice.key}` }), 401);
  }
});

test('per-key IP allow-list: an unlisted address gets 401', async () => {
  const tenNet = await keyFor(alice.accountId, ['10.0.0.0/8']);
  for (const url of ENDPOINTS) assertFailure(await gw.call(tenNet.key, 'GET', url), 401);
  assert.equal((await from('10.1.2.3', tenNet.key, '/balance')).status, 200);
  assertFailure(await from('11.0.0.1', tenNet.key, '/balance'), 401);
  assertFailure(await from('127.0.0.1', tenNet.key, '/balance', { 'x-forwarded-for': '10.1.2.3' }), 401);

  const before = (await gw.call(alice.key, 'GET', '/balance')).body.object.balance;
  assertFailure(await gw.call(tenNet.key, 'POST', '/messages/sms/send', { receivers: [phone(20)], message: 'blocked' }), 401);
  assert.equal((await gw.call(alice.key, 'GET', '/balance')).body.object.balance, before, 'nothing sent or charged');

  const local = await keyFor(alice.accountId, ['127.0.0.1/32']);
  const res = await gw.call(local.key, 'GET', '/balance');
  assert.equal(res.status, 200);
  assert.equal(res.body.object.balance, before);
  assert.equal((await from('::ffff:127.0.0.1', local.key, '/balance')).status, 200, 'IPv4-mapped IPv6 is the IPv4 address');
  assertFailure(await from('127.0.0.2', local.key, '/balance'), 401);

  assert.equal((await gw.call((await keyFor(alice.accountId, ['127.0.0.1'])).key, 'GET', '/routes')).status, 200, 'a bare address is a /32');
  assert.equal((await gw.call((await keyFor(alice.accountId, ['10.0.0.0/8', '127.0.0.0/8'])).key, 'GET', '/contacts')).status, 200);
  assertFailure(await gw.call((await keyFor(alice.accountId, ['::1/128'])).key, 'GET', '/balance'), 401);
  assert.equal((await from('2001:db8::1', (await keyFor(alice.accountId, ['2001:db8::/32'])).key, '/balance')).status, 200);
  assert.equal((await from('203.0.113.5', alice.key, '/balance')).status, 200, 'a key without a list works from anywhere');
});

test("a revoked key gets 401 at once; the account's other keys keep working", async () => {
  const second = await keyFor(alice.accountId);
  assert.equal((await gw.call(second.key, 'GET', '/balance')).status, 200, 'used once, so it is cached');
  const del = await gw.admin('DELETE', `/admin/api-keys/${second.id}`);
  assert.equal(del.status, 204);
  for (const url of ENDPOINTS) assertFailure(await gw.call(second.key, 'GET', url), 401);
  assertFailure(await gw.call(second.key, 'POST', '/messages/sms/send', { receivers: [phone(21)], message: 'x' }), 401);
  assert.equal((await gw.call(alice.key, 'GET', '/balance')).status, 200);
});

test('unknown gateway operations are 404 in the envelope', async () => {
  for (const [method, url] of [
    ['GET', '/nope'],
    ['GET', '/messages/sms/send'],
    ['POST', '/balance'],
    ['DELETE', '/routes'],
    ['GET', '/contacts/1'],
  ] as const) {
    assertFailure(await gw.call(alice.key, method, url), 404);
  }
});
