import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hashKey } from '../src/accounts/api-keys.ts';
import { ADMIN_TOKEN, startGateway, type Customer, type TestGateway } from './helpers.ts';
import { legacy } from './legacy/legacy-helpers.ts';

/*
 * The operator's lists (accounts, keys, routes) and account deactivation
 * (docs/operator.md), through the operator API.
 */

let gw: TestGateway;

before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const ROUTE = { displayName: 'Standard', productName: 'SMS', productId: 1, farePrice: '0.10', replyFarePrice: '0.02', channel: 'SMS', connector: 'simulator' };

async function account(body: Record<string, unknown>) {
  const res = await gw.admin('POST', '/admin/accounts', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number; name: string };
}
async function route(body: Record<string, unknown> = {}) {
  const res = await gw.admin('POST', '/admin/routes', { ...ROUTE, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number };
}
async function issue(accountId: number, allowedIps?: string[]) {
  const res = await gw.admin('POST', `/admin/accounts/${accountId}/api-keys`, allowedIps ? { allowedIps } : {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: number; key: string };
}
/** Operator errors are `{ error: text }`; `mentions` must appear in the text. */
function assertError(res: { status: number; body: any }, status: number, ...mentions: string[]) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['error'], JSON.stringify(res.body));
  for (const m of mentions) assert.ok(res.body.error.includes(m), `${JSON.stringify(res.body.error)} should mention ${m}`);
}
const list = async (url: string) => {
  const res = await gw.admin('GET', url);
  assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
  return res.body as { records: any[]; total: number };
};
const deactivate = (id: number) => gw.admin('POST', `/admin/accounts/${id}/deactivate`);
const activate = (id: number) => gw.admin('POST', `/admin/accounts/${id}/activate`);

/** Gateway and Legacy v2 answers to the key: a read on each interface. */
async function both(key: string) {
  const gateway = await gw.call(key, 'GET', '/balance');
  const old = await legacy(gw, key, 'GET', '/credits');
  return { gateway, legacy: old };
}
function assertAccepted(key: string, answers: Awaited<ReturnType<typeof both>>) {
  assert.equal(answers.gateway.status, 200, `${key}: ${JSON.stringify(answers.gateway.body)}`);
  assert.equal(answers.legacy.status, 200, `${key}: ${answers.legacy.raw}`);
}
/** Refused as a revoked key is: the gateway's 401 envelope (with `why`), the legacy interface's 401 with an empty body. */
function assertRefused(answers: Awaited<ReturnType<typeof both>>, why: RegExp) {
  assert.equal(answers.gateway.status, 401, JSON.stringify(answers.gateway.body));
  assert.equal(answers.gateway.body.hasError, true);
  assert.match(answers.gateway.body.message, why);
  assert.equal(answers.legacy.status, 401);
  assert.equal(answers.legacy.raw, '');
}

test('every new operation needs the operator token: 401 {error}, nothing changes', async () => {
  const a = await account({ name: 'Guarded' });
  const k = await issue(a.id);
  for (const [method, url] of [
    ['GET', '/admin/accounts'],
    ['GET', `/admin/accounts/${a.id}/keys`],
    ['GET', '/admin/routes'],
    ['GET', `/admin/accounts/${a.id}/routes`],
    ['POST', `/admin/accounts/${a.id}/deactivate`],
    ['POST', `/admin/accounts/${a.id}/activate`],
  ] as const) {
    for (const authorization of [null, `Bearer ${ADMIN_TOKEN}x`, `Bearer ${k.key}`]) {
      const res = await gw.app.inject({ method, url, headers: authorization ? { authorization } : {} });
      assertError({ status: res.statusCode, body: res.json() }, 401);
    }
  }
  assert.equal((await gw.call(k.key, 'GET', '/balance')).status, 200, 'not deactivated');
});

test('GET /admin/accounts: newest first or by id, with balance and active flag, filtered by name and status, paged', async () => {
  const tag = `L${Date.now().toString(36)}`;
  const made = [];
  for (const [i, name] of ['Alpha', 'beta', 'ALPHABET', 'Gamma 100%', 'Gamma_1'].entries()) {
    made.push(await account({ name: `${tag} ${name}`, balance: i + 0.5, role: i === 1 ? 'RESELLER' : 'CUSTOMER' }));
  }
  const ids = made.map((a) => a.id);
  assert.equal((await deactivate(ids[1] as number)).status, 200);

  const all = await list(`/admin/accounts?name=${tag}&limit=1000`);
  assert.equal(all.total, 5);
  assert.deepEqual(
    all.records.map((a) => a.id),
    [...ids].reverse(),
    'newest first',
  );
  const beta = all.records.find((a) => a.id === ids[1]);
  assert.deepEqual(
    { ...beta, createdAt: typeof beta.createdAt, deactivatedAt: typeof beta.deactivatedAt },
    {
      id: ids[1],
      name: `${tag} beta`,
      role: 'RESELLER',
      timezone: 'America/Sao_Paulo',
      balance: 1.5,
      active: false,
      parentId: null,
      createdAt: 'string',
      deactivatedAt: 'string',
    },
  );
  assert.ok(Math.abs(Date.parse(beta.createdAt) - Date.now()) < 60_000);
  assert.equal(all.records.find((a) => a.id === ids[0]).deactivatedAt, null);

  const byId = await list(`/admin/accounts?name=${tag}&order=id`);
  assert.deepEqual(
    byId.records.map((a) => a.id),
    ids,
  );
  // Part of the name, any case; LIKE's own characters are taken literally.
  const names = async (query: string) => (await list(`/admin/accounts?order=id&name=${encodeURIComponent(query)}`)).records.map((a) => a.name);
  assert.deepEqual(await names(`${tag} alpha`), [`${tag} Alpha`, `${tag} ALPHABET`]);
  assert.deepEqual(await names('PHAB'), [`${tag} ALPHABET`]);
  assert.deepEqual(await names(`${tag} gamma 100%`), [`${tag} Gamma 100%`]);
  assert.deepEqual(await names(`${tag} gamma_`), [`${tag} Gamma_1`]);
  assert.deepEqual(await names(`${tag} Gamma%1`), []);
  assert.deepEqual(await names(`${tag} _eta`), []);
  // Status.
  const deactivated = await list(`/admin/accounts?name=${tag}&status=deactivated`);
  assert.deepEqual(
    deactivated.records.map((a) => a.id),
    [ids[1]],
  );
  assert.equal(deactivated.total, 1);
  const active = await list(`/admin/accounts?name=${tag}&status=active&order=id`);
  assert.deepEqual(
    active.records.map((a) => a.id),
    [ids[0], ids[2], ids[3], ids[4]],
  );
  assert.equal((await list(`/admin/accounts?name=${tag}&status=all`)).total, 5);
  // Pages: total counts every match.
  const page = await list(`/admin/accounts?name=${tag}&order=id&skip=1&limit=2`);
  assert.deepEqual({ ids: page.records.map((a) => a.id), total: page.total }, { ids: [ids[1], ids[2]], total: 5 });
  const past = await list(`/admin/accounts?name=${tag}&skip=5`);
  assert.deepEqual(past, { records: [], total: 5 });
  assert.ok((await list('/admin/accounts')).total >= 5);
});

test('GET /admin/accounts: bad parameters are 400 {error} naming the parameter and what it must be', async () => {
  const cases: [string, string][] = [
    ['limit=0', 'limit: must be a whole number from 1 to 1000'],
    ['limit=1001', 'limit: must be a whole number from 1 to 1000'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['skip=-1', 'skip: must be a whole number from 0 to 9007199254740991'],
    ['skip=1e309', 'skip'],
    ['skip=99999999999999999999', 'skip'],
    ['status=inactive', 'status: must be one of "active", "deactivated", "all"'],
    ['status=ACTIVE', 'status'],
    ['order=oldest', 'order: must be one of "newest", "id"'],
    ['name=', 'name'],
    [`name=${'n'.repeat(201)}`, 'name'],
    ['name=a%00b', 'name'],
    ['stauts=active', 'stauts: is not a parameter of this list'],
  ];
  for (const [query, text] of cases) assertError(await gw.admin('GET', `/admin/accounts?${query}`), 400, text);
  for (const url of ['/admin/routes?limit=0', '/admin/accounts/1/keys?skip=x', '/admin/accounts/1/routes?limit=5000', '/admin/routes?name=x']) {
    assertError(await gw.admin('GET', url), 400);
  }
  for (const bad of ['0', 'abc', '-1', '1.5', '99999999999999999999']) {
    assertError(await gw.admin('GET', `/admin/accounts/${bad}/keys`), 400, 'id');
    assertError(await gw.admin('GET', `/admin/accounts/${bad}/routes`), 400, 'id');
    assertError(await gw.admin('POST', `/admin/accounts/${bad}/deactivate`), 400, 'id');
  }
});

test('GET /admin/accounts/{id}/keys: ids, last 4 characters, dates, allow-lists; never the key or its hash', async () => {
  const a = await account({ name: 'Keys' });
  const other = await account({ name: 'Other keys' });
  const first = await issue(a.id, ['10.0.0.0/8', '192.168.1.7']);
  const second = await issue(a.id);
  await issue(other.id);
  assert.equal((await gw.admin('DELETE', `/admin/api-keys/${first.id}`)).status, 204);

  const res = await gw.admin('GET', `/admin/accounts/${a.id}/keys`);
  assert.equal(res.status, 200);
  assert.equal(res.body.total, 2);
  const [one, two] = res.body.records;
  assert.deepEqual(
    { ...one, createdAt: typeof one.createdAt, revokedAt: typeof one.revokedAt },
    { id: first.id, hint: first.key.slice(-4), createdAt: 'string', revokedAt: 'string', allowedIps: ['10.0.0.0/8', '192.168.1.7'] },
  );
  assert.ok(Date.parse(one.revokedAt) >= Date.parse(one.createdAt));
  assert.deepEqual({ ...two, createdAt: undefined }, { id: second.id, hint: second.key.slice(-4), createdAt: undefined, revokedAt: null, allowedIps: null });
  const text = JSON.stringify(res.body);
  for (const k of [first, second]) {
    assert.ok(!text.includes(k.key), 'the key itself');
    assert.ok(!text.includes(k.key.slice(0, 8)), 'the start of the key');
    assert.ok(!text.includes(hashKey(k.key)), "the key's hash");
  }
  // A key issued before the gateway kept the last characters.
  await gw.core.db.kysely.updateTable('api_keys').set({ hint: null }).where('id', '=', second.id).execute();
  assert.equal((await list(`/admin/accounts/${a.id}/keys`)).records[1].hint, null);
  // Paged like every list.
  assert.deepEqual(
    (await list(`/admin/accounts/${a.id}/keys?skip=1&limit=1`)).records.map((k) => k.id),
    [second.id],
  );
  assertError(await gw.admin('GET', '/admin/accounts/999999/keys'), 404, 'Account 999999');
  assert.deepEqual(await list(`/admin/accounts/${(await account({ name: 'No keys' })).id}/keys`), { records: [], total: 0 });
});

test('GET /admin/routes: every route with channel, connector, prices and fallback; GET /admin/accounts/{id}/routes: the granted ones', async () => {
  const sms = await route({ displayName: 'Listed SMS', farePrice: '0.065', replyFarePrice: '0.01', productId: 7 });
  const rcs = await route({
    displayName: 'Listed RCS',
    productName: 'RCS',
    productId: 2,
    farePrice: '0.08',
    replyFarePrice: '0',
    channel: 'RCS',
    fallbackRouteId: sms.id,
  });
  const all = await list('/admin/routes?limit=1000');
  const byId = new Map(all.records.map((r) => [r.id, r]));
  assert.equal(all.total, all.records.length);
  assert.deepEqual(
    all.records.map((r) => r.id),
    [...all.records.map((r) => r.id)].sort((x, y) => x - y),
    'by id',
  );
  assert.deepEqual(byId.get(sms.id), {
    id: sms.id,
    displayName: 'Listed SMS',
    farePrice: 0.065,
    productName: 'SMS',
    productId: 7,
    replyFarePrice: 0.01,
    channel: 'SMS',
    connector: 'simulator',
    fallbackRouteId: null,
  });
  assert.deepEqual(
    { channel: byId.get(rcs.id).channel, fallbackRouteId: byId.get(rcs.id).fallbackRouteId, farePrice: byId.get(rcs.id).farePrice },
    {
      channel: 'RCS',
      fallbackRouteId: sms.id,
      farePrice: 0.08,
    },
  );
  const page = await list('/admin/routes?skip=1&limit=1');
  assert.deepEqual({ n: page.records.length, total: page.total }, { n: 1, total: all.total });

  const a = await account({ name: 'Granted' });
  assert.deepEqual(await list(`/admin/accounts/${a.id}/routes`), { records: [], total: 0 });
  await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: rcs.id });
  await gw.admin('POST', `/admin/accounts/${a.id}/routes`, { routeId: sms.id });
  const granted = await list(`/admin/accounts/${a.id}/routes`);
  assert.deepEqual(granted, { records: [byId.get(sms.id), byId.get(rcs.id)], total: 2 });
  assertError(await gw.admin('GET', '/admin/accounts/999999/routes'), 404, 'Account 999999');
});

test('deactivate: the keys are refused at once on both interfaces (as a revoked key is); activate: accepted again, revoked keys stay revoked', async () => {
  const alice = await gw.customer();
  const spare = await issue(alice.accountId);
  const bob = await gw.customer();
  // Both keys are in the key cache now.
  assertAccepted(alice.key, await both(alice.key));
  assertAccepted(spare.key, await both(spare.key));

  const off = await deactivate(alice.accountId);
  assert.equal(off.status, 200);
  assert.deepEqual({ id: off.body.id, active: off.body.active, balance: off.body.balance }, { id: alice.accountId, active: false, balance: 100 });
  for (const key of [alice.key, spare.key]) assertRefused(await both(key), /account of this API key is deactivated/);
  const send = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: ['5511988887777'], message: 'refused' });
  assert.equal(send.status, 401);
  assert.equal((await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11988887777', Content: 'refused' })).status, 401);
  assertAccepted(bob.key, await both(bob.key));
  assert.equal((await gw.admin('GET', `/admin/accounts/${alice.accountId}`)).body.active, false);
  // Again: no change, the first deactivation time kept.
  const when = (await list(`/admin/accounts?status=deactivated&limit=1000`)).records.find((a) => a.id === alice.accountId).deactivatedAt;
  assert.equal((await deactivate(alice.accountId)).status, 200);
  assert.equal((await list(`/admin/accounts?status=deactivated&limit=1000`)).records.find((a) => a.id === alice.accountId).deactivatedAt, when);
  // A key issued while deactivated is refused too.
  const late = await issue(alice.accountId);
  assertRefused(await both(late.key), /deactivated/);
  // The operator still manages it.
  assert.equal((await gw.admin('POST', `/admin/accounts/${alice.accountId}/credits`, { amount: 1 })).status, 200);

  await gw.admin('DELETE', `/admin/api-keys/${spare.id}`);
  const on = await activate(alice.accountId);
  assert.equal(on.status, 200);
  assert.equal(on.body.active, true);
  assertAccepted(alice.key, await both(alice.key));
  assertAccepted(late.key, await both(late.key));
  const revoked = await both(spare.key);
  assert.equal(revoked.gateway.status, 401);
  assert.match(revoked.gateway.body.message, /invalid or has been revoked/);
  assert.equal((await activate(alice.accountId)).status, 200, 'again: no change');
  assert.equal((await list(`/admin/accounts?limit=1000`)).records.find((a) => a.id === alice.accountId).deactivatedAt, null);

  assertError(await deactivate(999999), 404, 'Account 999999');
  assertError(await activate(999999), 404, 'Account 999999');
});

test('an IP-restricted key of a deactivated account: an address outside the list learns nothing of the account', async () => {
  const carol = await gw.customer({ allowedIps: ['10.1.2.3'] });
  await deactivate(carol.accountId);
  const res = await gw.call(carol.key, 'GET', '/balance');
  assert.equal(res.status, 401);
  assert.doesNotMatch(res.body.message, /deactivated/);
  assert.match(res.body.message, /not authorized/);
});

test("a reseller's deactivation stops its child users' keys too; the children keep their own flag and work again with the reseller", async () => {
  const reseller: Customer = await gw.customer({ role: 'RESELLER', balance: 500 });
  const created = await gw.call(reseller.key, 'POST', '/child-users', {
    fullName: 'Loja Filha Ltda',
    email: `filha${Date.now()}@example.com.br`,
    phoneNumber: '(11) 99999-8888',
    document: '529.982.247-25',
    limit: 10,
    ownerCredentialFullName: 'Maria Silva',
    ownerCredentialEmail: 'maria@example.com.br',
    ownerCredentialPhoneNumber: '+55 21 98888-7777',
    password: 'correct horse battery',
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const childId = created.body.object.id as number;
  const childKey = (await gw.call(reseller.key, 'POST', `/child-users/${childId}/api-keys`)).body.object.key as string;
  assertAccepted(childKey, await both(childKey));
  const listed = (await list('/admin/accounts?limit=1000')).records.find((a) => a.id === childId);
  assert.equal(listed.parentId, reseller.accountId);

  await deactivate(reseller.accountId);
  assertRefused(await both(reseller.key), /account of this API key is deactivated/);
  assertRefused(await both(childKey), /reseller account this account belongs to is deactivated/);
  assert.equal((await gw.admin('GET', `/admin/accounts/${childId}`)).body.active, true, "the child's own flag is untouched");
  await activate(reseller.accountId);
  assertAccepted(childKey, await both(childKey));

  // The child alone: the reseller goes on.
  await deactivate(childId);
  assertRefused(await both(childKey), /account of this API key is deactivated/);
  assertAccepted(reseller.key, await both(reseller.key));
  const move = await gw.call(reseller.key, 'POST', `/child-users/${childId}/credits`, { amount: 1 });
  assert.equal(move.status, 200, 'the reseller still manages its deactivated child');
  await activate(childId);
  assertAccepted(childKey, await both(childKey));
});

test('what a deactivated account had accepted is still sent: scheduled and queued messages are delivered', async () => {
  const dave = await gw.customer();
  const at = new Date(Date.now() + 1500);
  const scheduled = await gw.call(dave.key, 'POST', '/messages/sms/send', {
    receivers: ['5511988880001', '5511988884444'],
    message: 'later',
    scheduleDate: at.toISOString(),
  });
  assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
  const now = await gw.call(dave.key, 'POST', '/messages/sms/send', { receivers: ['5511988885555'], message: 'now' });
  assert.equal(now.status, 200);
  const requestIds = [scheduled.headers['x-request-id'] as string, now.headers['x-request-id'] as string];
  const before = (await gw.admin('GET', `/admin/accounts/${dave.accountId}`)).body.balance;
  assert.equal((await deactivate(dave.accountId)).status, 200);

  const db = gw.core.db.kysely;
  const messages = () =>
    db.selectFrom('messages').select(['receiver', 'status', 'sent_at']).where('request_id', 'in', requestIds).orderBy('receiver').execute();
  const done = await gw.eventually(
    messages,
    (rows) => rows.every((m) => m.status === 'DELIVERED' || m.status === 'UNDELIVERED'),
    'delivery after deactivation',
  );
  assert.deepEqual(
    done.map((m) => [m.receiver, m.status]),
    [
      ['5511988880001', 'UNDELIVERED'],
      ['5511988884444', 'DELIVERED'],
      ['5511988885555', 'DELIVERED'],
    ],
  );
  for (const m of done.filter((x) => x.receiver !== '5511988885555')) assert.ok(Number(m.sent_at) >= at.getTime() - 5, 'sent at its time, not before');
  assert.equal((await gw.admin('GET', `/admin/accounts/${dave.accountId}`)).body.balance, before, 'nothing refunded, nothing charged again');
  assert.equal((await gw.call(dave.key, 'GET', '/reports/messages/sent')).status, 401, 'its reports stay closed to the key');
});

test('the new operations are in the OpenAPI document with a summary', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  for (const [path, method] of [
    ['/admin/accounts', 'get'],
    ['/admin/accounts/{id}/keys', 'get'],
    ['/admin/routes', 'get'],
    ['/admin/accounts/{id}/routes', 'get'],
    ['/admin/accounts/{id}/deactivate', 'post'],
    ['/admin/accounts/{id}/activate', 'post'],
  ]) {
    const op = doc.paths[path as string]?.[method as string];
    assert.ok(op, `${method} ${path}`);
    assert.equal(typeof op.summary, 'string', `${method} ${path}`);
  }
});
