import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf, UUID } from './legacy-helpers.ts';
import type { TokenTables } from '../../src/tokens/tables.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
});
after(() => gw.close());

const tokens = () => gw.core.db.kysely.withTables<TokenTables>();

/** Creates a token and reads the code from the SMS it sent. */
async function issue(body: Record<string, unknown>) {
  const res = await legacy(gw, alice.key, 'POST', '/tokenmanager', body);
  assert.equal(res.status, 200, res.raw);
  const sms = (await messagesOf(gw, alice.accountId)).find((m) => m.request_id === res.body.Object.RequestUniqueId);
  const code = /(\d{6})$/.exec(sms?.content ?? '')?.[1] ?? '';
  return { res, sms, code };
}

test('POST /tokenmanager sends "{prefix}: {code}", charged, stored hashed, 10 minutes by default', async () => {
  const start = await balanceOf(gw, alice.accountId);
  const { res, sms, code } = await issue({ PhoneNumber: '(11) 91234-5678', Prefix: 'Loja X' });
  assert.match(res.body.Object.RequestUniqueId, UUID);
  assert.equal(res.body.Object.PhoneNumber, '5511912345678');
  assert.match(sms?.content ?? '', /^Loja X: \d{6}$/);
  assert.equal(sms?.source, 'token');
  assert.equal(await balanceOf(gw, alice.accountId), Math.round((start - 0.1) * 1e6) / 1e6);
  const row = await tokens().selectFrom('tokens').selectAll().where('account_id', '=', alice.accountId).orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.notEqual(row.code_hash, code);
  assert.ok(!row.code_hash.includes(code));
  assert.equal(row.expires_at - row.created_at, 10 * 60_000);
  const bare = await issue({ phonenumber: '11912345679', expireinminutes: '1440' });
  assert.match(bare.sms?.content ?? '', /^\d{6}$/);
});

test('PUT /tokenmanager validates once; used, invalid and wrong phone are distinct 400s', async () => {
  const { code } = await issue({ PhoneNumber: '11911110000', Prefix: 'App' });
  const wrongPhone = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11911119999' });
  assert.equal(wrongPhone.status, 400);
  assert.match(wrongPhone.body.Message, /não foi enviado para este telefone/);
  const ok = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { tokencode: code, phonenumber: '+55 11 91111-0000' });
  assert.equal(ok.status, 200, ok.raw);
  assert.deepEqual(ok.body.Object, { Valid: true, PhoneNumber: '5511911110000' });
  const used = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11911110000' });
  assert.equal(used.status, 400);
  assert.match(used.body.Message, /já foi utilizado/);
  const invalid = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code === '000000' ? '000001' : '000000', PhoneNumber: '11911110000' });
  assert.equal(invalid.status, 400);
  assert.match(invalid.body.Message, /^Código inválido/);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/tokenmanager', { PhoneNumber: '11911110000' })).status, 400);
});

test('an expired token is refused as expired', async () => {
  const { res, code } = await issue({ PhoneNumber: '11922220000' });
  await tokens().updateTable('tokens').set({ expires_at: Date.now() - 1000 }).where('request_id', '=', res.body.Object.RequestUniqueId).execute();
  const expired = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11922220000' });
  assert.equal(expired.status, 400);
  assert.match(expired.body.Message, /expirado/);
});

test('five wrong guesses lock the token, even for the right code', async () => {
  const { code } = await issue({ PhoneNumber: '11933330000' });
  const wrong = code === '123456' ? '654321' : '123456';
  for (let i = 0; i < 5; i++) {
    const res = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: wrong, PhoneNumber: '11933330000' });
    assert.equal(res.status, 400);
  }
  const locked = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11933330000' });
  assert.equal(locked.status, 400);
  assert.match(locked.body.Message, /bloqueado/);
});

test('EnforceSecureValidation requires the phone; without it the code alone validates', async () => {
  const secure = await issue({ PhoneNumber: '11944440000', EnforceSecureValidation: true });
  const noPhone = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: secure.code });
  assert.equal(noPhone.status, 400);
  assert.match(noPhone.body.Message, /exige/);
  const loose = await issue({ PhoneNumber: '11944441111', EnforceSecureValidation: 'false' });
  const ok = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: Number(loose.code) });
  assert.equal(ok.status, 200, ok.raw);
});

test('creation errors: phone missing or invalid, expiry out of range, no credit', async () => {
  const cases: [unknown, RegExp][] = [
    [{}, /PhoneNumber/],
    [{ PhoneNumber: 'abc' }, /não é válido/],
    [{ PhoneNumber: '11955550000', ExpireInMinutes: 0 }, /1440/],
    [{ PhoneNumber: '11955550000', ExpireInMinutes: 1441 }, /1440/],
    [{ PhoneNumber: '11955550000', ExpireInMinutes: 'dez' }, /1440/],
  ];
  for (const [payload, text] of cases) {
    const res = await legacy(gw, alice.key, 'POST', '/tokenmanager', payload);
    assert.equal(res.status, 400, JSON.stringify(payload));
    assert.match(res.body.Message, text);
  }
  const poor = await gw.customer({ balance: 0 });
  const broke = await legacy(gw, poor.key, 'POST', '/tokenmanager', { PhoneNumber: '11955550000' });
  assert.equal(broke.status, 400);
  assert.match(broke.body.Message, /Créditos insuficientes/);
});

test('tokens are per account', async () => {
  const { code } = await issue({ PhoneNumber: '11966660000' });
  const bob = await gw.customer();
  const res = await legacy(gw, bob.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11966660000' });
  assert.equal(res.status, 400);
  assert.match(res.body.Message, /^Código inválido/);
});
