import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
  bob = await gw.customer({ balance: 10 });
});
after(() => gw.close());

const create = (key: string, body: unknown) => gw.call(key, 'POST', '/api-tokens/create', body);
const validate = (key: string, body: unknown) => gw.call(key, 'POST', '/api-tokens/validate', body);

/** The code as the phone received it: the text of the message the gateway sent. */
async function codeOf(requestId: string): Promise<string> {
  const row = await gw.core.db.kysely.selectFrom('messages').select('content').where('request_id', '=', requestId).executeTakeFirstOrThrow();
  const code = /(\d{6})$/.exec(row.content)?.[1];
  assert.ok(code, `a 6-digit code in "${row.content}"`);
  return code;
}

test('create sends "{prefix}: {code}" by SMS, charges it, and answers the token message (code masked)', async () => {
  const res = await create(alice.key, { prefix: 'Acme', phoneNumber: '5511987650010', expireInMinutes: 5, route: alice.routeId });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.object, { content: 'Acme: ******', receivers: ['5511987650010'], sender: 'SMS Simulator' });
  const code = await codeOf(res.headers['x-request-id'] as string);
  const balance = await gw.call(alice.key, 'GET', '/balance');
  assert.equal(balance.body.object.balance, 9.9);

  const ok = await validate(alice.key, { token: code, phoneNumber: '5511987650010' });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body.object, { valid: true, phoneNumber: '5511987650010' });
  const again = await validate(alice.key, { token: code, phoneNumber: '5511987650010' });
  assert.equal(again.status, 400);
  assert.match(again.body.errors[0], /already used/);
});

test('each refusal is its own 400: unknown, wrong phone, phone required, expired, locked', async () => {
  assert.match((await validate(alice.key, { token: '000000' })).body.errors[0], /not valid/);

  const secure = await create(alice.key, { phoneNumber: '5511987650011', enforceSecureValidation: true });
  const code = await codeOf(secure.headers['x-request-id'] as string);
  const noPhone = await validate(alice.key, { token: code });
  assert.equal(noPhone.status, 400);
  assert.match(noPhone.body.errors[0], /phoneNumber/);
  const wrong = await validate(alice.key, { token: code, phoneNumber: '5511987650099' });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.errors[0], /not sent to this phone/);

  const expiring = await create(alice.key, { phoneNumber: '5511987650012', expireInMinutes: 1 });
  const expiringCode = await codeOf(expiring.headers['x-request-id'] as string);
  await gw.core.db.kysely.updateTable('tokens' as never).set({ expires_at: Date.now() - 1 } as never).where('phone' as never, '=', '5511987650012' as never).execute();
  assert.match((await validate(alice.key, { token: expiringCode, phoneNumber: '5511987650012' })).body.errors[0], /expired/);

  const locking = await create(alice.key, { phoneNumber: '5511987650013' });
  const lockingCode = await codeOf(locking.headers['x-request-id'] as string);
  for (let i = 0; i < 5; i++) await validate(alice.key, { token: lockingCode === '999999' ? '999998' : '999999', phoneNumber: '5511987650013' });
  const locked = await validate(alice.key, { token: lockingCode, phoneNumber: '5511987650013' });
  assert.equal(locked.status, 400);
  assert.match(locked.body.errors[0], /locked/);
});

test('creation is limited per phone: the sixth in ten minutes is a 429 and is not charged', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await create(alice.key, { phoneNumber: '5511987650020' })).status, 200);
  const before = (await gw.call(alice.key, 'GET', '/balance')).body.object.balance;
  const limited = await create(alice.key, { phoneNumber: '5511987650020' });
  assert.equal(limited.status, 429);
  assert.equal(limited.body.hasError, true);
  assert.equal((await gw.call(alice.key, 'GET', '/balance')).body.object.balance, before);
});

test("bad input is a 400; another account cannot validate a code", async () => {
  assert.equal((await create(alice.key, {})).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: 'abc' })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', expireInMinutes: 0 })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', expireInMinutes: 24 * 60 + 1 })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', route: 999999 })).status, 404);
  assert.equal((await validate(alice.key, { token: true })).status, 400);
  assert.equal((await create('not-a-key', { phoneNumber: '5511987650030' })).status, 401);

  const mine = await create(alice.key, { phoneNumber: '5511987650031' });
  const code = await codeOf(mine.headers['x-request-id'] as string);
  assert.equal((await validate(bob.key, { token: code, phoneNumber: '5511987650031' })).status, 400);
  assert.equal((await validate(alice.key, { token: code, phoneNumber: '5511987650031' })).status, 200, 'still valid for its owner');
});

test('the legacy /tokenmanager shares the store: created on the gateway, validated on the legacy interface', async () => {
  const res = await create(alice.key, { phoneNumber: '5511987650040' });
  const code = await codeOf(res.headers['x-request-id'] as string);
  const legacy = await gw.app.inject({ method: 'PUT', url: '/api/v2/tokenmanager', headers: { 'auth-key': alice.key }, payload: { TokenCode: code, PhoneNumber: '11987650040' } });
  assert.equal(legacy.statusCode, 200);
  assert.equal(legacy.json().Success, true);
  assert.equal((await validate(alice.key, { token: code, phoneNumber: '5511987650040' })).status, 400, 'single use across interfaces');
});
