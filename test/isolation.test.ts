/**
 * The tenant-isolation suite: account A has sent
 * immediate, scheduled and batch requests, received a reply and owns a
 * contact group and a route; account B then uses A's ids against every
 * customer endpoint. Nothing of A may appear in any of B's answers, and
 * nothing of A may change.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let A: Customer;
let B: Customer;

type Res = { status: number; body: any };

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const REQUESTS_PATHS = ['/api/reports/messages/requests', '/reports/messages/requests'];
const CANCEL_PATHS = ['/api/messages/request/cancel', '/messages/request/cancel'];

/** A's identifiers and texts; none may show up in an answer to B. */
const a = { group: 0, immediate: '', scheduled: '', batch: '', messageIds: [] as string[] };
const A_TEXTS = ['A-secret', 'a-tag', 'a-custom', phone(1), phone(2), phone(3), phone(4), phone(5)];
const b = { group: 0, request: '' };

let snapshotA: unknown;
let balanceB = 0;

async function send(key: string, body: Record<string, unknown>, path = '/messages/sms/send'): Promise<string> {
  const res = await gw.call(key, 'POST', path, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
}
const get = (key: string, url: string) => gw.call(key, 'GET', url);

/** Everything a customer can see of its own account. */
async function stateOf(key: string) {
  const body = async (url: string) => {
    const res = await get(key, url);
    assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    balance: await body('/balance'),
    sent: await body('/reports/messages/sent?limit=1000'),
    received: await body('/reports/messages/received?limit=1000'),
    requests: await Promise.all(REQUESTS_PATHS.map((p) => body(`${p}?limit=1000`))),
    contacts: await body('/contacts'),
    routes: await body('/routes'),
  };
}

/** No identifier or text of A anywhere in an answer to B (except an id B itself sent, echoed back). */
function assertNothingOfA(res: Res, echoed?: string) {
  const text = JSON.stringify(res.body)
    .split(echoed ?? '\u0000')
    .join('<given>');
  for (const secret of [a.immediate, a.scheduled, a.batch, a.immediate.toUpperCase(), ...a.messageIds, ...A_TEXTS]) {
    assert.ok(!text.includes(secret), `B's answer shows A's ${secret}: ${text.slice(0, 500)}`);
  }
}

/** B's answer about A's id is the answer about an id nobody has: same status, same body but for the id. */
function assertLikeUnknown(mine: Res, unknown: Res, given: string, unknownGiven: string) {
  assert.equal(mine.status, unknown.status);
  assert.deepEqual(JSON.parse(JSON.stringify(mine.body).split(given).join('<id>')), JSON.parse(JSON.stringify(unknown.body).split(unknownGiven).join('<id>')));
}

function assertNotFound(res: Res) {
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
}

before(async () => {
  gw = await startGateway();
  A = await gw.customer({ balance: 100, farePrice: '0.10', replyFarePrice: '0.02' });
  B = await gw.customer({ balance: 100, farePrice: '0.10', replyFarePrice: '0.02' });

  const group = await gw.admin('POST', `/admin/accounts/${A.accountId}/contact-groups`, { name: 'A-secret group', numbers: [phone(4), phone(5)] });
  a.group = group.body.id;
  a.immediate = await send(A.key, { receivers: [phone(1)], message: 'A-secret immediate', tag: 'a-tag', custom: 'a-custom', route: A.routeId });
  a.scheduled = await send(A.key, {
    receivers: [phone(2)],
    contactGroups: [a.group],
    message: 'A-secret scheduled',
    tag: 'a-tag',
    custom: 'a-custom',
    scheduleDate: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const batch = await gw.call(A.key, 'POST', '/messages/sms/batch/send', { messages: [{ receiver: phone(3), message: 'A-secret batch' }], tag: 'a-tag' });
  assert.equal(batch.status, 200);
  a.batch = batch.body.object.requestId;
  await gw.eventually(
    () => get(A.key, '/reports/messages/sent?statuses=DELIVERED'),
    (res) => res.body.totalRecords === 2,
    "A's immediate messages to be delivered",
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone(1), text: 'A-secret reply' });
  await gw.eventually(
    () => get(A.key, '/reports/messages/received'),
    (res) => res.body.totalRecords === 1,
    "A's reply",
  );

  // B has data of its own, so an empty answer is not just an empty account.
  b.group = (await gw.admin('POST', `/admin/accounts/${B.accountId}/contact-groups`, { name: 'B group', numbers: [phone(20)] })).body.id;
  b.request = await send(B.key, { receivers: [phone(21)], message: 'B own', tag: 'b-tag' });
  await gw.eventually(
    () => get(B.key, '/reports/messages/sent?statuses=DELIVERED'),
    (res) => res.body.totalRecords === 1,
    "B's delivery",
  );

  snapshotA = await stateOf(A.key);
  a.messageIds = (snapshotA as Awaited<ReturnType<typeof stateOf>>).sent.object.map((m: any) => m.id);
  assert.equal(a.messageIds.length, 5, 'A has 5 messages');
  balanceB = (await get(B.key, '/balance')).body.object.balance;
});
after(() => gw.close());

// ----------------------------------------------------------- sending with A's ids

test("send: A's contact group id, as id or {id}, alone or with B's own: 404, nothing sent", async () => {
  const nobody = 999_999;
  for (const shape of [(id: number) => [id], (id: number) => [{ id }], (id: number) => [b.group, id], (id: number) => [{ id: b.group }, { id }]]) {
    const res = await gw.call(B.key, 'POST', '/messages/sms/send', { contactGroups: shape(a.group), message: 'B tries' });
    assertNotFound(res);
    assertNothingOfA(res);
    const unknown = await gw.call(B.key, 'POST', '/messages/sms/send', { contactGroups: shape(nobody), message: 'B tries' });
    assertLikeUnknown(res, unknown, String(a.group), String(nobody));
  }
});

test("send and batch send: A's route, not granted to B: 404", async () => {
  const res = await gw.call(B.key, 'POST', '/messages/sms/send', { receivers: [phone(22)], message: 'B tries', route: A.routeId });
  assertNotFound(res);
  assertNothingOfA(res);
  const unknown = await gw.call(B.key, 'POST', '/messages/sms/send', { receivers: [phone(22)], message: 'B tries', route: 999_999 });
  assertLikeUnknown(res, unknown, String(A.routeId), '999999');
  const asString = await gw.call(B.key, 'POST', '/messages/sms/send', { receivers: [phone(22)], message: 'B tries', route: String(A.routeId) });
  assertNotFound(asString);
  const batch = await gw.call(B.key, 'POST', '/messages/sms/batch/send', { messages: [{ receiver: phone(22), message: 'B tries' }], route: A.routeId });
  assertNotFound(batch);
  assertNothingOfA(batch);
});

// ------------------------------------------------------------ reports with A's ids

test("sent report: A's request ids, receivers, texts, tags: nothing; unfiltered: B's only", async () => {
  const filters = [
    ...[a.immediate, a.scheduled, a.batch, a.immediate.toUpperCase()].map((id) => `requestId=${id}`),
    `receiver=${phone(1)}`,
    `receiver=${phone(4)}`,
    'content=A-secret',
    'tag=a-tag',
    'custom=a-custom',
    'statuses=SCHEDULED',
  ];
  for (const f of filters) {
    const res = await get(B.key, `/reports/messages/sent?${f}`);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.totalRecords, res.body.object], [0, []], f);
    assertNothingOfA(res);
  }
  const all = await get(B.key, '/reports/messages/sent?limit=1000&startDate=2000-01-01');
  assert.deepEqual(
    all.body.object.map((m: any) => m.requestId),
    [b.request],
  );
  assert.equal(all.body.totalRecords, 1);
  assertNothingOfA(all);
});

test("received report: A's reply is not B's", async () => {
  for (const q of ['', `?sender=${phone(1)}`, '?content=secret', '?startDate=2000-01-01&limit=1000']) {
    const res = await get(B.key, `/reports/messages/received${q}`);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.totalRecords, res.body.object], [0, []], q);
    assertNothingOfA(res);
  }
});

test("requests report, both paths: A's request ids give nothing; unfiltered: B's only", async () => {
  for (const path of REQUESTS_PATHS) {
    for (const f of [a.immediate, a.scheduled, a.batch].map((id) => `requestId=${id}`).concat(['content=A-secret', 'tag=a-tag', 'custom=a-custom'])) {
      const res = await get(B.key, `${path}?${f}`);
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.totalRecords, res.body.object], [0, []], `${path}?${f}`);
      assertNothingOfA(res);
    }
    const all = await get(B.key, `${path}?limit=1000&startDate=2000-01-01`);
    assert.deepEqual(
      all.body.object.map((r: any) => [r.requestId, r.userId]),
      [[b.request, B.accountId]],
    );
    assertNothingOfA(all);
  }
});

// --------------------------------------------------------------- cancel A's requests

test("cancel, both paths: A's scheduled, sent and batch requests are 404 for B (not 400: no hint they exist)", async () => {
  for (const path of CANCEL_PATHS) {
    for (const id of [a.scheduled, a.scheduled.toUpperCase(), a.immediate, a.batch]) {
      const res = await gw.call(B.key, 'POST', path, { requestId: id });
      assertNotFound(res);
      assertNothingOfA(res, id.toLowerCase());
      const nobody = crypto.randomUUID();
      assertLikeUnknown(res, await gw.call(B.key, 'POST', path, { requestId: nobody }), id.toLowerCase(), nobody);
    }
  }
});

// ------------------------------------------------------------- account endpoints

test('contacts, routes and balance: B sees only its own', async () => {
  const contacts = await get(B.key, '/contacts');
  assert.deepEqual(
    contacts.body.object.map((g: any) => g.id),
    [b.group],
  );
  assertNothingOfA(contacts);
  const routes = await get(B.key, '/routes');
  assert.deepEqual(
    routes.body.object.map((r: any) => r.id),
    [B.routeId],
  );
  assert.notEqual(B.routeId, A.routeId);
  const balance = await get(B.key, '/balance');
  assert.equal(balance.body.object.balance, balanceB);
});

test("B's API key is not an operator token", async () => {
  for (const url of [`/admin/accounts/${A.accountId}`, `/admin/accounts/${B.accountId}`]) {
    const res = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${B.key}`, 'x-api-key': B.key } });
    assert.equal(res.statusCode, 401);
    assert.ok(!res.body.includes('balance'));
  }
});

// ------------------------------------------------------------------- the outcome

test('after all of the above, nothing of A changed and B paid nothing', async () => {
  assert.deepEqual(await stateOf(A.key), snapshotA);
  const scheduled = await get(A.key, `/reports/messages/sent?requestId=${a.scheduled}`);
  assert.deepEqual(
    scheduled.body.object.map((m: any) => m.status),
    ['SCHEDULED', 'SCHEDULED', 'SCHEDULED'],
    "A's scheduled messages are still scheduled",
  );
  assert.equal((await get(B.key, '/balance')).body.object.balance, balanceB);
  assert.equal((await get(B.key, '/reports/messages/sent')).body.totalRecords, 1, "B's failed attempts wrote nothing");
  assert.equal((await gw.call(A.key, 'POST', '/messages/request/cancel', { requestId: a.scheduled })).status, 200, 'A still owns its request');
});
