import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf, UUID } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 100, farePrice: '0.10' });
});
after(() => gw.close());

const sentFor = async (requestId: string) => (await messagesOf(gw, alice.accountId)).filter((m) => m.request_id === requestId);

test('POST /send with PascalCase fields: accepted, charged, delivered, in the gateway reports', async () => {
  const before = await balanceOf(gw, alice.accountId);
  const res = await legacy(gw, alice.key, 'POST', '/send', { Sender: 'ERP', Receivers: '11999998888,11988887777', Content: 'Olá' });
  assert.equal(res.status, 200);
  assert.equal(res.body.Success, true);
  assert.deepEqual(Object.keys(res.body), ['Success', 'Object', 'Message']);
  assert.match(res.body.Object.requestUniqueId, UUID);
  assert.equal(res.headers['x-request-id'], res.body.Object.requestUniqueId);
  assert.match(res.body.Message, /2 destinatário/);
  const id = res.body.Object.requestUniqueId as string;
  const report = await gw.eventually(
    () => gw.call(alice.key, 'GET', `/reports/messages/sent?requestId=${id}`),
    (r) => r.body.object.length === 2 && r.body.object.every((m: any) => m.status === 'DELIVERED'),
    'delivery of the legacy send',
  );
  assert.deepEqual(report.body.object.map((m: any) => m.receiver).sort(), ['5511988887777', '5511999998888']);
  const requests = await gw.call(alice.key, 'GET', `/api/reports/messages/requests?requestId=${id}`);
  assert.equal(requests.body.object[0].requestCount, 2);
  assert.equal(Math.round((before - (await balanceOf(gw, alice.accountId))) * 100) / 100, 0.2);
  const rows = await sentFor(id);
  assert.ok(rows.every((m) => m.source === 'legacy' && m.sender === 'ERP'));
});

test('POST /send with lowercase fields', async () => {
  const res = await legacy(gw, alice.key, 'POST', '/send', { sender: 'x', receivers: '11999990011', content: 'lower' });
  assert.equal(res.status, 200);
  assert.equal((await sentFor(res.body.Object.requestUniqueId))[0]?.content, 'lower');
});

test('receivers tolerate spaces, +, 55, brackets and lists, and are de-duplicated', async () => {
  const res = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '[+55 (11) 99999-1111, 5511999991111 , 11 99999 1111,(21)98888-2222]', Content: 'x' });
  assert.equal(res.status, 200);
  assert.deepEqual((await sentFor(res.body.Object.requestUniqueId)).map((m) => m.receiver).sort(), ['5511999991111', '5521988882222']);
  const list = await legacy(gw, alice.key, 'POST', '/send', { RECEIVERS: ['11999991111', 21988882222], CONTENT: 'x' });
  assert.equal(list.status, 200);
  assert.equal((await sentFor(list.body.Object.requestUniqueId)).length, 2);
});

test('GET /send takes Sender, Receivers and Content from the query, in any case', async () => {
  const res = await legacy(gw, alice.key, 'GET', `/send?sender=web&receivers=11999993333&content=${encodeURIComponent('via GET')}`);
  assert.equal(res.status, 200);
  const [m] = await sentFor(res.body.Object.requestUniqueId);
  assert.equal(m?.content, 'via GET');
  assert.equal(m?.sender, 'web');
  const missing = await legacy(gw, alice.key, 'GET', '/send?Receivers=11999993333');
  assert.equal(missing.status, 400);
  assert.match(missing.body.Message, /Content/);
});

test('at most 100 receivers after de-duplication', async () => {
  const hundred = Array.from({ length: 100 }, (_, i) => `1198${String(i).padStart(7, '0')}`);
  const ok = await legacy(gw, alice.key, 'POST', '/send', { Receivers: [...hundred, hundred[0]].join(','), Content: 'x' });
  assert.equal(ok.status, 200, ok.raw);
  const tooMany = await legacy(gw, alice.key, 'POST', '/send', { Receivers: [...hundred, '11970000000'].join(','), Content: 'x' });
  assert.equal(tooMany.status, 400);
  assert.deepEqual({ ...tooMany.body, Message: '' }, { Success: false, Object: null, Message: '' });
  assert.match(tooMany.body.Message, /100/);
});

test('400 for /send: no JSON object, no or invalid receivers, empty Content, text over 2,000 characters', async () => {
  const cases: [unknown, RegExp][] = [
    [undefined, /objeto JSON/],
    [[], /objeto JSON/],
    ['"text"', /objeto JSON/],
    [{ Content: 'x' }, /Receivers/],
    [{ Receivers: '', Content: 'x' }, /Receivers/],
    [{ Receivers: ' , ', Content: 'x' }, /Receivers/],
    [{ Receivers: '11999998888' }, /Content/],
    [{ Receivers: '11999998888', Content: '' }, /Content/],
    [{ Receivers: '11999998888', Content: '   ' }, /Content/],
    [{ Receivers: '11999998888,abc,123', Content: 'x' }, /abc, 123/],
    [{ Receivers: { a: 1 }, Content: 'x' }, /Receivers/],
    [{ Receivers: '11999998888', Content: 'x'.repeat(2001) }, /2000/],
    // Said once, by its own text: not also "invalid value" for the list form the text is not.
    [{ Receivers: '1'.repeat(20_001), Content: 'x' }, /^O campo Receivers aceita no máximo 20000 caracteres\.$/],
  ];
  for (const [payload, text] of cases) {
    const res = await legacy(gw, alice.key, 'POST', '/send', payload);
    assert.equal(res.status, 400, `${JSON.stringify(payload)} -> ${res.raw}`);
    assert.equal(res.body.Success, false);
    assert.equal(res.body.Object, null);
    assert.match(res.body.Message, text, JSON.stringify(payload));
  }
  const badJson = await legacy(gw, alice.key, 'POST', '/send', '{"Receivers":', { 'content-type': 'application/json' });
  assert.equal(badJson.status, 400);
  assert.match(badJson.body.Message, /JSON/);
});

test('a long text is charged one credit per 153 characters', async () => {
  const res = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11999994444', Content: 'a'.repeat(200) });
  assert.equal(res.status, 200);
  assert.match(res.body.Message, /2 crédito/);
});

test('credits: at least 1 credit, and a request the balance cannot cover is refused whole', async () => {
  const poor = await gw.customer({ balance: '0.05', farePrice: '0.10' });
  const none = await legacy(gw, poor.key, 'POST', '/send', { Receivers: '11999998888', Content: 'x' });
  assert.equal(none.status, 400);
  assert.match(none.body.Message, /Créditos insuficientes/);
  const some = await gw.customer({ balance: '0.15', farePrice: '0.10' });
  const two = await legacy(gw, some.key, 'POST', '/send', { Receivers: '11999998888,11999997777', Content: 'x' });
  assert.equal(two.status, 400);
  assert.match(two.body.Message, /Créditos insuficientes/);
  assert.equal((await messagesOf(gw, some.accountId)).length, 0);
  assert.equal(await balanceOf(gw, some.accountId), 0.15);
  const one = await legacy(gw, some.key, 'POST', '/send', { Receivers: '11999998888', Content: 'x' });
  assert.equal(one.status, 200);
});

test('401 with an empty body: no key, wrong key, revoked key, deactivated account', async () => {
  const body = { Receivers: '11999998888', Content: 'x' };
  for (const key of [null, '', 'not-a-key', '00000000-0000-4000-8000-000000000000']) {
    const res = await legacy(gw, key, 'POST', '/send', body);
    assert.equal(res.status, 401, String(key));
    assert.equal(res.raw, '');
  }
  const bob = await gw.customer();
  await gw.admin('DELETE', `/admin/api-keys/${bob.keyId}`);
  const revoked = await legacy(gw, bob.key, 'POST', '/send', body);
  assert.equal(revoked.status, 401);
  assert.equal(revoked.raw, '');
  const carol = await gw.customer();
  await gw.core.db.kysely.updateTable('accounts').set({ active: 0 }).where('id', '=', carol.accountId).execute();
  gw.core.auth.invalidate();
  const deactivated = await legacy(gw, carol.key, 'POST', '/send', body);
  assert.equal(deactivated.status, 401);
  assert.equal(deactivated.raw, '');
  // The gateway's header is not the legacy one.
  const wrongHeader = await legacy(gw, null, 'POST', '/send', body, { 'x-api-key': alice.key });
  assert.equal(wrongHeader.status, 401);
});

test('an account without an SMS route gets a 400, not a 500', async () => {
  const acct = await gw.admin('POST', '/admin/accounts', { name: 'No route', balance: 10 });
  const key = await gw.admin('POST', `/admin/accounts/${acct.body.id}/api-keys`, {});
  const res = await legacy(gw, key.body.key, 'POST', '/send', { Receivers: '11999998888', Content: 'x' });
  assert.equal(res.status, 400);
  assert.match(res.body.Message, /rota/);
});
