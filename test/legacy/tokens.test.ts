import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf, UUID } from './legacy-helpers.ts';
import type { TokenTables } from '../../src/tokens/tables.ts';
import { GUESS_BUDGET, GUESS_WINDOW_MS } from '../../src/tokens/store.ts';
import { phones, wrongCode } from '../phone.ts';

let gw: TestGateway;
let alice: Customer;
let phone: ReturnType<typeof phones>;

before(async () => {
  gw = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1' });
  phone = phones(gw);
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
});
after(() => gw.close());

const tokens = () => gw.core.db.kysely.withTables<TokenTables>();

/** Creates a token and reads the code from the SMS the phone received. */
async function issue(body: Record<string, unknown>, key = alice.key) {
  const res = await legacy(gw, key, 'POST', '/tokenmanager', body);
  assert.equal(res.status, 200, res.raw);
  const requestId = res.body.Object.RequestUniqueId as string;
  const text = await phone.textOf(requestId);
  const code = /(\d{6})$/.exec(text)?.[1] ?? '';
  return { res, requestId, text, code };
}

test('POST /tokenmanager sends "{prefix}: {code}", charged, stored hashed, 10 minutes by default', async () => {
  const start = await balanceOf(gw, alice.accountId);
  const { res, requestId, text, code } = await issue({ PhoneNumber: '(11) 91234-5678', Prefix: 'Loja X' });
  assert.match(res.body.Object.RequestUniqueId, UUID);
  assert.equal(res.body.Object.PhoneNumber, '5511912345678');
  assert.match(text, /^Loja X: \d{6}$/);
  const sms = (await messagesOf(gw, alice.accountId)).find((m) => m.request_id === requestId);
  assert.equal(sms?.source, 'token');
  assert.equal(await balanceOf(gw, alice.accountId), Math.round((start - 0.1) * 1e6) / 1e6);
  const row = await tokens().selectFrom('tokens').selectAll().where('account_id', '=', alice.accountId).orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.notEqual(row.code_hash, code);
  assert.ok(!row.code_hash.includes(code));
  assert.equal(row.expires_at - row.created_at, 10 * 60_000);
  const bare = await issue({ phonenumber: '11912345679', expireinminutes: '1440' });
  assert.match(bare.text, /^\d{6}$/);
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
  await tokens()
    .updateTable('tokens')
    .set({ expires_at: Date.now() - 1000 })
    .where('request_id', '=', res.body.Object.RequestUniqueId)
    .execute();
  const expired = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11922220000' });
  assert.equal(expired.status, 400);
  assert.match(expired.body.Message, /expirado/);
});

test('five wrong guesses naming a phone lock every live token of that phone, even for the right code', async () => {
  const older = await issue({ PhoneNumber: '11933330000' });
  const newer = await issue({ PhoneNumber: '11933330000' });
  const taken = new Set([older.code, newer.code]);
  const guesses = Array.from({ length: 7 }, (_, i) => wrongCode(older.code, i)).filter((g) => !taken.has(g));
  for (let i = 0; i < 5; i++) {
    const res = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: guesses[i], PhoneNumber: '11933330000' });
    assert.equal(res.status, 400);
  }
  for (const { code } of [older, newer]) {
    const locked = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11933330000' });
    assert.equal(locked.status, 400);
    assert.match(locked.body.Message, /bloqueado/);
  }
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

/** A 429 in the legacy envelope with a Retry-After within the window. */
function assertGuessLimit(res: { status: number; body: any; headers: Record<string, unknown> }) {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assert.equal(res.body.Success, false);
  assert.equal(res.body.Object, null);
  const wait = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= GUESS_WINDOW_MS / 1000, `Retry-After: ${String(res.headers['retry-after'])}`);
  assert.match(res.body.Message, new RegExp(`Tentativas de validação erradas demais.*${wait} segundo`));
}

test('PUT /tokenmanager spends the same budget of wrong guesses as the gateway: then 429 with Retry-After, even for the right code', async () => {
  const carol = await gw.customer({ balance: 10 });
  const { code } = await issue({ PhoneNumber: '11977770000' }, carol.key);
  for (let i = 0; i < GUESS_BUDGET; i++) {
    const res =
      i % 2 === 0
        ? await legacy(gw, carol.key, 'PUT', '/tokenmanager', { TokenCode: wrongCode(code, i) })
        : await gw.call(carol.key, 'POST', '/api-tokens/validate', { token: wrongCode(code, i) });
    assert.equal(res.status, 400, `guess ${i + 1}`);
  }
  assertGuessLimit(await legacy(gw, carol.key, 'PUT', '/tokenmanager', { TokenCode: code }));
  assertGuessLimit(await legacy(gw, carol.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11977770000' }));
  assert.equal((await gw.call(carol.key, 'POST', '/api-tokens/validate', { token: code })).status, 429, 'and on the gateway');
  const row = await tokens().selectFrom('tokens').select('used_at').where('account_id', '=', carol.accountId).executeTakeFirstOrThrow();
  assert.equal(row.used_at, null);
});

test('legacy: the code is in no callback, and once the token is used every report shows it masked', async () => {
  const dave = await gw.customer({ balance: 10 });
  assert.equal((await gw.admin('PUT', `/admin/accounts/${dave.accountId}/callbacks`, { replyUrl: 'http://127.0.0.1:9/legacy-reply' })).status, 200);
  const { requestId, text, code } = await issue({ PhoneNumber: '11988880000', Prefix: 'Loja X' }, dave.key);
  assert.equal(text, `Loja X: ${code}`);
  await gw.eventually(
    async () => (await messagesOf(gw, dave.accountId)).find((m) => m.request_id === requestId),
    (m) => m?.status === 'DELIVERED',
    'the token SMS delivered',
  );
  const token = await tokens().selectFrom('tokens').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
  assert.ok(!JSON.stringify(token).includes(code));

  await gw.core.simulator.inbound('5511988880000', null, 'obrigado');
  const bodies = await gw.eventually(
    async () =>
      (await gw.core.db.kysely
        .selectFrom('webhook_deliveries' as never)
        .select('body' as never)
        .where('account_id' as never, '=', dave.accountId as never)
        .execute()) as { body: string }[],
    (rows) => rows.length === 1,
    'the reply callback',
  );
  assert.equal(JSON.parse(bodies[0]?.body ?? '{}').SentContent, 'Loja X: ******');

  const ok = await legacy(gw, dave.key, 'PUT', '/tokenmanager', { TokenCode: code, PhoneNumber: '11988880000' });
  assert.equal(ok.status, 200, 'the code validates');
  const detailed = await legacy(gw, dave.key, 'GET', `/detailedreporting?RequestUniqueId=${requestId}`);
  assert.equal(detailed.status, 200, detailed.raw);
  assert.equal(detailed.body.Object[0].Content, 'Loja X: ******');
  const replies = await legacy(gw, dave.key, 'GET', `/replyreporting?RequestUniqueId=${requestId}`);
  assert.equal(replies.status, 200, replies.raw);
  assert.equal(replies.body.Object[0].SentContent, 'Loja X: ******');
  assert.ok(!detailed.raw.includes(text) && !replies.raw.includes(text) && !bodies[0]?.body.includes(text));
});
