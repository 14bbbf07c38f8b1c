import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { ADMIN_TOKEN, startGateway, type TestGateway } from './helpers.ts';

let gw: TestGateway;

before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ROUTE = { displayName: 'Standard', productName: 'SMS', productId: 1, farePrice: '0.10', replyFarePrice: '0.02', channel: 'SMS', connector: 'simulator' };

/** An operator call with any Authorization header (or none). */
async function withAuth(authorization: string | null, method: InjectOptions['method'], url: string, payload?: unknown) {
  const res = await gw.app.inject({
    method,
    url,
    headers: authorization === null ? {} : { authorization },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null };
}
async function rawAdmin(url: string, payload: string) {
  const res = await gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload });
  return { status: res.statusCode, body: res.json() };
}

/** Operator errors are `{ error: text }` with a 4xx status; `mentions` must appear in the text. */
function assertError(res: { status: number; body: any }, status: number, ...mentions: string[]) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['error'], JSON.stringify(res.body));
  assert.equal(typeof res.body.error, 'string');
  assert.ok(res.body.error.length > 0);
  for (const m of mentions) assert.ok(res.body.error.includes(m), `${JSON.stringify(res.body.error)} should mention ${m}`);
}

async function account(body: Record<string, unknown> = { name: 'Acme' }) {
  const res = await gw.admin('POST', '/admin/accounts', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number; name: string; role: string; timezone: string; balance: number };
}
async function route(body: Record<string, unknown> = {}) {
  const res = await gw.admin('POST', '/admin/routes', { ...ROUTE, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number };
}
async function key(accountId: number) {
  const res = await gw.admin('POST', `/admin/accounts/${accountId}/api-keys`, {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number; key: string };
}
const balanceOf = async (id: number) => (await gw.admin('GET', `/admin/accounts/${id}`)).body.balance as number;
const counts = async () => {
  const db = gw.core.db.kysely;
  const n = async (table: 'accounts' | 'api_keys' | 'routes' | 'account_routes' | 'contact_groups' | 'ledger') =>
    (await db.selectFrom(table).selectAll().execute()).length;
  return {
    accounts: await n('accounts'),
    keys: await n('api_keys'),
    routes: await n('routes'),
    grants: await n('account_routes'),
    groups: await n('contact_groups'),
    ledger: await n('ledger'),
  };
};

test('every operator endpoint needs the bearer token: 401 {error}, nothing done', async () => {
  const a = await account();
  const k = await key(a.id);
  const r = await route();
  const endpoints: [InjectOptions['method'], string, unknown][] = [
    ['POST', '/admin/accounts', { name: 'Intruder' }],
    ['GET', `/admin/accounts/${a.id}`, undefined],
    ['POST', `/admin/accounts/${a.id}/api-keys`, {}],
    ['DELETE', `/admin/api-keys/${k.id}`, undefined],
    ['POST', `/admin/accounts/${a.id}/credits`, { amount: 1000 }],
    ['POST', '/admin/routes', ROUTE],
    ['POST', `/admin/accounts/${a.id}/routes`, { routeId: r.id }],
    ['POST', `/admin/accounts/${a.id}/contact-groups`, { name: 'G', numbers: [] }],
    ['POST', '/admin/simulator/inbound', { from: phone(1), text: 'hi' }],
    ['GET', '/admin/nope', undefined],
  ];
  const wrong = [
    null,
    '',
    'Bearer',
    'Bearer ',
    `Bearer ${ADMIN_TOKEN}x`,
    `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
    `Bearer ${ADMIN_TOKEN.toUpperCase()}`,
    `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
    ADMIN_TOKEN,
    `Bearer ${k.key}`,
    `Bearer ${'x'.repeat(10_000)}`,
  ];
  const before = await counts();
  for (const [method, url, payload] of endpoints) {
    for (const auth of wrong) assertError(await withAuth(auth, method, url, payload), 401);
  }
  assert.deepEqual(await counts(), before);
  assert.equal((await gw.call(k.key, 'GET', '/balance')).status, 200, 'the key was not revoked');
  assert.equal(await balanceOf(a.id), 0);
  assert.equal((await withAuth(`Bearer ${ADMIN_TOKEN}`, 'GET', `/admin/accounts/${a.id}`)).status, 200);
});

test('POST /admin/accounts: defaults, and every field', async () => {
  const plain = await gw.admin('POST', '/admin/accounts', { name: 'Plain' });
  assert.equal(plain.status, 201);
  assert.ok(Number.isInteger(plain.body.id) && plain.body.id > 0);
  assert.deepEqual(
    { ...plain.body, id: undefined, active: undefined },
    { id: undefined, name: 'Plain', role: 'CUSTOMER', timezone: 'America/Sao_Paulo', balance: 0, active: undefined },
  );

  const full = await account({ name: 'Reseller Co', role: 'RESELLER', timezone: 'Europe/Lisbon', balance: '12.345678' });
  assert.deepEqual(
    { name: full.name, role: full.role, timezone: full.timezone, balance: full.balance },
    { name: 'Reseller Co', role: 'RESELLER', timezone: 'Europe/Lisbon', balance: 12.345678 },
  );
  assert.equal((await account({ name: 'Number balance', balance: 0.1 })).balance, 0.1);
  assert.notEqual(full.id, plain.body.id);
});

test('GET /admin/accounts/{id}: the account with its balance; unknown 404, bad id 400', async () => {
  const a = await account({ name: 'Lookup', balance: '7.5' });
  const res = await gw.admin('GET', `/admin/accounts/${a.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual({ ...res.body, active: undefined }, { ...a, active: undefined });
  assertError(await gw.admin('GET', '/admin/accounts/999999'), 404);
  assertError(await gw.admin('GET', `/admin/accounts/${Number.MAX_SAFE_INTEGER}`), 404);
  for (const bad of ['abc', '0', '-1', '1.5', '1e20', '99999999999999999999']) assertError(await gw.admin('GET', `/admin/accounts/${bad}`), 400, 'id');
});

test('POST /admin/accounts: bad bodies are 400 naming the field, nothing created', async () => {
  const before = await counts();
  const cases: [unknown, string][] = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 5 }, 'name'],
    [{ name: 'n'.repeat(201) }, 'name'],
    [{ name: 'x\u0000y' }, 'name'],
    [{ name: 'X', role: 'ADMIN' }, 'role'],
    [{ name: 'X', role: 'customer' }, 'role'],
    [{ name: 'X', timezone: 'Mars/Olympus' }, 'timezone'],
    [{ name: 'X', timezone: 5 }, 'timezone'],
    [{ name: 'X', balance: -1 }, 'balance'],
    [{ name: 'X', balance: '-0.01' }, 'balance'],
    [{ name: 'X', balance: '1.1234567' }, 'balance'],
    [{ name: 'X', balance: 0.0000001 }, 'balance'],
    [{ name: 'X', balance: 'abc' }, 'balance'],
    [{ name: 'X', balance: '1,5' }, 'balance'],
    [{ name: 'X', balance: 1e21 }, 'balance'],
    [{ name: 'X', balance: '99999999999' }, 'balance'],
    [{ name: 'X', balance: true }, 'balance'],
    [{ name: 'X', balance: null }, 'balance'],
    [[], 'body'],
  ];
  for (const [body, field] of cases) assertError(await gw.admin('POST', '/admin/accounts', body), 400, field);
  assertError(await rawAdmin('/admin/accounts', '{"name": "x"'), 400);
  assertError(await rawAdmin('/admin/accounts', ''), 400);
  assertError(await gw.admin('POST', '/admin/accounts', { name: 'x'.repeat(gw.config.BODY_LIMIT_BYTES) }), 413);
  assert.deepEqual(await counts(), before);
});

test('POST /admin/accounts/{id}/api-keys: a UUID key shown once; allow-lists validated', async () => {
  const a = await account({ name: 'Keys', balance: 3 });
  const k1 = await key(a.id);
  const k2 = await key(a.id);
  assert.match(k1.key, UUID);
  assert.notEqual(k1.key, k2.key);
  assert.notEqual(k1.id, k2.id);
  assert.deepEqual(Object.keys(k1).sort(), ['id', 'key']);
  assert.equal((await gw.call(k1.key, 'GET', '/balance')).body.object.balance, 3);
  assert.ok(!JSON.stringify((await gw.admin('GET', `/admin/accounts/${a.id}`)).body).includes(k1.key), 'the key is shown only at creation');
  const stored = await gw.core.db.kysely.selectFrom('api_keys').selectAll().execute();
  assert.ok(!JSON.stringify(stored).includes(k1.key), 'the key is stored hashed');

  const listed = await gw.admin('POST', `/admin/accounts/${a.id}/api-keys`, { allowedIps: ['10.0.0.0/8', '2001:db8::/32', '127.0.0.1'] });
  assert.equal(listed.status, 201);
  assert.equal((await gw.call(listed.body.key, 'GET', '/balance')).status, 200);

  const before = await counts();
  for (const [body, field] of [
    [{ allowedIps: ['nope'] }, 'allowedIps'],
    [{ allowedIps: ['10.0.0.0/33'] }, 'allowedIps'],
    [{ allowedIps: ['10.0.0.0/x'] }, 'allowedIps'],
    [{ allowedIps: '10.0.0.0/8' }, 'allowedIps'],
    [{ allowedIps: [5] }, 'allowedIps'],
  ] as const) {
    assertError(await gw.admin('POST', `/admin/accounts/${a.id}/api-keys`, body), 400, field);
  }
  assertError(await gw.admin('POST', '/admin/accounts/999999/api-keys', {}), 404);
  assertError(await gw.admin('POST', '/admin/accounts/abc/api-keys', {}), 400, 'id');
  assert.deepEqual(await counts(), before);
});

test('DELETE /admin/api-keys/{id}: 204, revoked at once; again 404; unknown 404; bad id 400', async () => {
  const a = await account({ name: 'Revoke', balance: 1 });
  const k = await key(a.id);
  const other = await key(a.id);
  assert.equal((await gw.call(k.key, 'GET', '/balance')).status, 200);
  const res = await gw.app.inject({ method: 'DELETE', url: `/admin/api-keys/${k.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal((await gw.call(k.key, 'GET', '/balance')).status, 401);
  assert.equal((await gw.call(other.key, 'GET', '/balance')).status, 200);
  assertError(await gw.admin('DELETE', `/admin/api-keys/${k.id}`), 404);
  assertError(await gw.admin('DELETE', '/admin/api-keys/999999'), 404);
  for (const bad of ['abc', '0', '1e20']) assertError(await gw.admin('DELETE', `/admin/api-keys/${bad}`), 400, 'id');
});

test('POST /admin/accounts/{id}/credits: signed amounts, exact to 6 decimals, one ledger entry each', async () => {
  const a = await account({ name: 'Ledger', balance: '1' });
  const steps: [number | string, number][] = [
    ['0.1', 1.1],
    ['0.2', 1.3],
    [10, 11.3],
    ['-5.5', 5.8],
    ['-0.000001', 5.799999],
    [0.000001, 5.8],
    ['123.456789', 129.256789],
    [-129.256789, 0],
  ];
  for (const [amount, expected] of steps) {
    const res = await gw.admin('POST', `/admin/accounts/${a.id}/credits`, { amount, reason: `step ${amount}` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { balance: expected });
    assert.equal(await balanceOf(a.id), expected);
  }
  const ledger = await gw.core.db.kysely.selectFrom('ledger').select(['amount', 'reason']).where('account_id', '=', a.id).orderBy('id').execute();
  assert.deepEqual(
    ledger.map((l) => Number(l.amount)),
    [1_000_000, 100_000, 200_000, 10_000_000, -5_500_000, -1, 1, 123_456_789, -129_256_789],
  );
  assert.equal(ledger[1]?.reason, 'step 0.1');

  const before = await counts();
  const cases: [unknown, string][] = [
    [{}, 'amount'],
    [{ amount: 'abc' }, 'amount'],
    [{ amount: '1.1234567' }, 'amount'],
    [{ amount: 0.0000001 }, 'amount'],
    [{ amount: 1e21 }, 'amount'],
    [{ amount: '1e3' }, 'amount'],
    [{ amount: null }, 'amount'],
    [{ amount: true }, 'amount'],
    [{ amount: [1] }, 'amount'],
    [{ amount: 1, reason: 'r'.repeat(201) }, 'reason'],
    [{ amount: 1, reason: 5 }, 'reason'],
  ];
  for (const [body, field] of cases) assertError(await gw.admin('POST', `/admin/accounts/${a.id}/credits`, body), 400, field);
  assertError(await gw.admin('POST', '/admin/accounts/999999/credits', { amount: 5 }), 404);
  assertError(await gw.admin('POST', '/admin/accounts/x/credits', { amount: 5 }), 400, 'id');
  assert.deepEqual(await counts(), before, 'no ledger entry for a refused change');
  assert.equal(await balanceOf(a.id), 0);
});

test('POST /admin/routes: 201 with id; prices with up to 6 decimals exact, e.g. 0.065 in GET /routes', async () => {
  const res = await gw.admin('POST', '/admin/routes', { ...ROUTE, displayName: 'Cheap', farePrice: '0.065', replyFarePrice: 0.000001, productId: 42 });
  assert.equal(res.status, 201);
  assert.ok(Number.isInteger(res.body.id));
  assert.deepEqual(res.body, {
    id: res.body.id,
    displayName: 'Cheap',
    farePrice: 0.065,
    productName: 'SMS',
    productId: 42,
    replyFarePrice: 0.000001,
    channel: 'SMS',
    connector: 'simulator',
    fallbackRouteId: null,
  });
  assert.equal((await route({ channel: 'RCS', farePrice: 0.065, replyFarePrice: '0' })).id > res.body.id, true);

  const a = await account({ name: 'Exact', balance: '1' });
  assert.equal((await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: res.body.id })).status, 204);
  const k = await key(a.id);
  const routes = await gw.call(k.key, 'GET', '/routes');
  assert.deepEqual(routes.body.object, [
    { id: res.body.id, displayName: 'Cheap', farePrice: 0.065, productName: 'SMS', productId: 42, replyFarePrice: 0.000001 },
  ]);
  assert.equal((await gw.call(k.key, 'POST', '/messages/sms/send', { receivers: [phone(1), phone(2), phone(3)], message: 'x' })).status, 200);
  assert.equal(await balanceOf(a.id), 0.805, '1 - 3 x 0.065, no float drift');
});

test('POST /admin/routes: bad bodies are 400 naming the field', async () => {
  const before = await counts();
  const cases: [unknown, string[]][] = [
    [{}, ['displayName', 'productName', 'productId', 'farePrice', 'replyFarePrice', 'channel', 'connector']],
    [{ ...ROUTE, displayName: '' }, ['displayName']],
    [{ ...ROUTE, productId: -1 }, ['productId']],
    [{ ...ROUTE, productId: 1.5 }, ['productId']],
    [{ ...ROUTE, productId: '1' }, ['productId']],
    [{ ...ROUTE, productId: 3_000_000_000 }, ['productId']],
    [{ ...ROUTE, farePrice: '-0.1' }, ['farePrice']],
    [{ ...ROUTE, farePrice: -0.1 }, ['farePrice']],
    [{ ...ROUTE, farePrice: '0.0650001' }, ['farePrice']],
    [{ ...ROUTE, farePrice: 'free' }, ['farePrice']],
    [{ ...ROUTE, replyFarePrice: 0.0000001 }, ['replyFarePrice']],
    [{ ...ROUTE, replyFarePrice: null }, ['replyFarePrice']],
    [{ ...ROUTE, channel: 'MMS' }, ['channel']],
    [{ ...ROUTE, channel: 'sms' }, ['channel']],
    [{ ...ROUTE, connector: 'nope' }, ['connector', 'simulator']],
    [{ ...ROUTE, connector: '' }, ['connector']],
  ];
  for (const [body, fields] of cases) assertError(await gw.admin('POST', '/admin/routes', body), 400, ...fields);
  assertError(await rawAdmin('/admin/routes', '{"displayName":'), 400);
  assert.deepEqual(await counts(), before);
});

test('POST /admin/accounts/{id}/routes: 204, idempotent; unknown route or account 404; bad body 400', async () => {
  const a = await account({ name: 'Grants', balance: 1 });
  const r = await route({ displayName: 'Granted' });
  const k = await key(a.id);
  for (let i = 0; i < 2; i++) {
    const res = await gw.app.inject({
      method: 'POST',
      url: `/admin/accounts/${a.id}/routes`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { routeId: r.id },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
  }
  assert.deepEqual(
    (await gw.call(k.key, 'GET', '/routes')).body.object.map((x: any) => x.id),
    [r.id],
    'granted once',
  );

  const before = await counts();
  assertError(await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: 999_999 }), 404);
  assertError(await gw.admin('POST', '/admin/accounts/999999/routes', { routeId: r.id }), 404);
  for (const body of [{}, { routeId: 'x' }, { routeId: String(r.id) }, { routeId: 0 }, { routeId: 1e20 }, { routeId: null }]) {
    assertError(await gw.admin('POST', `/admin/accounts/${a.id}/routes`, body), 400, 'routeId');
  }
  assertError(await gw.admin('POST', '/admin/accounts/abc/routes', { routeId: r.id }), 400, 'id');
  assert.deepEqual(await counts(), before);
});

test('POST /admin/accounts/{id}/contact-groups: 201 {id}; invalid numbers not stored; duplicate name 409', async () => {
  const a = await account({ name: 'Groups', balance: 1 });
  const k = await key(a.id);
  const res = await gw.admin('POST', `/admin/accounts/${a.id}/contact-groups`, {
    name: 'Team',
    description: 'the team',
    numbers: [phone(1), phone(2), 'bad', phone(1)],
  });
  assert.equal(res.status, 201);
  assert.ok(Number.isInteger(res.body.id));
  const big = await gw.admin('POST', `/admin/accounts/${a.id}/contact-groups`, {
    name: 'Big',
    numbers: Array.from({ length: 5000 }, (_, i) => `55119${String(i).padStart(4, '0')}8888`),
  });
  assert.equal(big.status, 201);
  const contacts = (await gw.call(k.key, 'GET', '/contacts')).body.object;
  assert.deepEqual(
    contacts.map((g: any) => [g.id, g.name, g.validContacts]),
    [
      [res.body.id, 'Team', 2],
      [big.body.id, 'Big', 5000],
    ],
  );

  const before = await counts();
  assertError(await gw.admin('POST', `/admin/accounts/${a.id}/contact-groups`, { name: 'Team', numbers: [] }), 409, 'Team');
  const cases: [unknown, string][] = [
    [{ numbers: [] }, 'name'],
    [{ name: '', numbers: [] }, 'name'],
    [{ name: '   ', numbers: [] }, 'name'],
    [{ name: 'N' }, 'numbers'],
    [{ name: 'N', numbers: phone(1) }, 'numbers'],
    [{ name: 'N', numbers: [Number(phone(1))] }, 'numbers[0]'],
    [{ name: 'N', numbers: ['1'.repeat(33)] }, 'numbers[0]'],
    [{ name: 'N', numbers: [], description: 5 }, 'description'],
  ];
  for (const [body, field] of cases) assertError(await gw.admin('POST', `/admin/accounts/${a.id}/contact-groups`, body), 400, field);
  assertError(await gw.admin('POST', '/admin/accounts/999999/contact-groups', { name: 'N', numbers: [] }), 404);
  assert.deepEqual(await counts(), before);
});

test('POST /admin/simulator/inbound: 202; bad bodies 400', async () => {
  const res = await gw.admin('POST', '/admin/simulator/inbound', { from: `+${phone(9)}`, to: '28282', text: 'STOP' });
  assert.equal(res.status, 202);
  assert.deepEqual(res.body, { accepted: true });
  await gw.eventually(
    () => gw.core.db.kysely.selectFrom('replies').selectAll().where('sender', '=', phone(9)).execute(),
    (rows) => rows.length === 1,
    'the inbound text',
  );
  const cases: [unknown, string][] = [
    [{ text: 'x' }, 'from'],
    [{ from: 'abc', text: 'x' }, 'from'],
    [{ from: '123', text: 'x' }, 'from'],
    [{ from: Number(phone(9)), text: 'x' }, 'from'],
    [{ from: phone(9) }, 'text'],
    [{ from: phone(9), text: 't'.repeat(2001) }, 'text'],
    [{ from: phone(9), text: 'a\u0000' }, 'text'],
    [{ from: phone(9), text: 'x', to: 5 }, 'to'],
  ];
  for (const [body, field] of cases) assertError(await gw.admin('POST', '/admin/simulator/inbound', body), 400, field);
});

test('unknown operator operations are 404 {error}', async () => {
  for (const [method, url] of [
    ['GET', '/admin/nope'],
    ['GET', '/admin/api-keys'],
    ['PUT', '/admin/accounts/1'],
    ['DELETE', '/admin/routes'],
    ['GET', '/admin/accounts/1/nope'],
  ] as const) {
    assertError(await gw.admin(method, url), 404);
  }
});

test('the ledger sums to the balance after sends, refunds, cancels and replies', async () => {
  const a = await account({ name: 'Invariant', balance: '10' });
  const r = await route({ farePrice: '0.065', replyFarePrice: '0.013' });
  await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: r.id });
  const k = await key(a.id);
  const send = async (body: Record<string, unknown>) => {
    const res = await gw.call(k.key, 'POST', '/messages/sms/send', body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.headers['x-request-id'] as string;
  };
  const immediate = await send({ receivers: [phone(50), '5511987650003'], message: 'y'.repeat(200) });
  const scheduled = await send({ receivers: [phone(51)], message: 'later', scheduleDate: new Date(Date.now() + 86_400_000).toISOString() });
  assert.equal((await gw.call(k.key, 'POST', '/messages/request/cancel', { requestId: scheduled })).status, 200);
  await gw.eventually(
    () => gw.call(k.key, 'GET', `/reports/messages/sent?requestId=${immediate}`),
    (res) => res.body.object.every((m: any) => ['DELIVERED', 'FAILED'].includes(m.status)),
    'final statuses',
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone(50), text: 'reply' });
  await gw.eventually(
    () => gw.call(k.key, 'GET', '/reports/messages/received'),
    (res) => res.body.totalRecords === 1,
    'the reply',
  );
  await gw.admin('POST', `/admin/accounts/${a.id}/credits`, { amount: '-1.5' });

  // 10 - 2 x 2 x 0.065 (send) + 2 x 0.065 (refund of 0003) - 0.065 + 0.065 (cancel) - 0.013 (reply) - 1.5
  assert.equal(await balanceOf(a.id), 8.357);
  const entries = await gw.core.db.kysely.selectFrom('ledger').select('amount').where('account_id', '=', a.id).execute();
  assert.equal(
    entries.reduce((s, e) => s + Number(e.amount), 0),
    8_357_000,
  );
});

test('GET /admin/carriers: each connection with its bind state, free window and the messages waiting for it', async () => {
  const a = await account({ name: 'Carriers', balance: 10 });
  const r = await route({ displayName: 'Carriers' });
  assert.equal((await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: r.id })).status, 204);
  const k = await key(a.id);
  const before = await gw.admin('GET', '/admin/carriers');
  assert.equal(before.status, 200);
  const sim = (body: any[]) => body.find((c) => c.name === 'simulator');
  assert.deepEqual(Object.keys(sim(before.body)), ['name', 'channels', 'ready', 'capacity', 'queued', 'sending', 'scheduled', 'submitted']);
  assert.deepEqual(Object.keys(sim(before.body).submitted), ['accepted', 'retry', 'failed']);
  assert.deepEqual(sim(before.body).channels, ['SMS', 'RCS']);
  assert.equal(sim(before.body).ready, true);
  assert.ok(sim(before.body).capacity > 0);

  const later = new Date(Date.now() + 3_600_000).toISOString();
  const sent = await gw.call(k.key, 'POST', '/messages/sms/send', { receivers: [phone(41), phone(42)], message: 'later', route: r.id, scheduleDate: later });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const after = await gw.admin('GET', '/admin/carriers');
  assert.equal(sim(after.body).scheduled, sim(before.body).scheduled + 2);

  // Submits since start, by answer: two messages sent now are two more accepted submits.
  const now = await gw.call(k.key, 'POST', '/messages/sms/send', { receivers: [phone(43), phone(44)], message: 'now', route: r.id });
  assert.equal(now.status, 200, JSON.stringify(now.body));
  const counted = await gw.eventually(
    () => gw.admin('GET', '/admin/carriers'),
    (res) => sim(res.body).submitted.accepted >= sim(before.body).submitted.accepted + 2,
    'two accepted submits counted',
  );
  assert.equal(sim(counted.body).submitted.failed, sim(before.body).submitted.failed);
  assertError(await withAuth(null, 'GET', '/admin/carriers'), 401);
});
