import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';
import { isOptOut, normalizeKeyword, DEFAULT_OPT_OUT_KEYWORDS } from '../src/events/optout.ts';
import type { StoredReply } from '../src/messaging/replies.ts';

/**
 * Opt-out end to end: a reply that is only an opt-out keyword puts the
 * sender on the blocklist of the account it answered; later sends to that
 * number are BLOCKED and not charged.
 */

let gw: TestGateway;
let alice: Customer;
/** Replies whose hooks have all run (this hook is the last one). */
const handled: StoredReply[] = [];

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 100, farePrice: '0.10', replyFarePrice: '0' });
  gw.core.onReply.push(async (reply) => {
    handled.push(reply);
  });
});
after(() => gw.close());

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;

async function deliver(key: string, to: string, message = 'Promo') {
  const res = await gw.call(key, 'POST', '/messages/sms/send', { receivers: [to], message });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const requestId = res.headers['x-request-id'] as string;
  await gw.eventually(
    () => gw.call(key, 'GET', `/reports/messages/sent?requestId=${requestId}`),
    (r) => r.body.object[0]?.status === 'DELIVERED',
    'delivery',
  );
  return requestId;
}

/** Sends an inbound text and waits until every reply hook ran for it. */
async function inbound(from: string, text: string) {
  const count = handled.filter((r) => r.sender === from && r.content === text).length;
  assert.equal((await gw.admin('POST', '/admin/simulator/inbound', { from, text })).status, 202);
  await gw.eventually(
    async () => handled.filter((r) => r.sender === from && r.content === text).length,
    (n) => n > count,
    `the hooks for "${text}"`,
  );
}

const blocked = async (accountId: number, to: string) =>
  (await gw.core.db.kysely.selectFrom('blocklist').select('phone').where('account_id', '=', accountId).where('phone', '=', to).execute()).length === 1;
const balance = async (key: string) => (await gw.call(key, 'GET', '/balance')).body.object.balance as number;

test('"Sair" puts the sender on the blocklist; later sends are BLOCKED and not charged', async () => {
  const to = phone(1);
  await deliver(alice.key, to);
  await inbound(to, 'Sair');
  assert.equal(await blocked(alice.accountId, to), true);

  const before = await balance(alice.key);
  const res = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [to], message: 'Another promo' });
  assert.equal(res.status, 200);
  const report = await gw.call(alice.key, 'GET', `/reports/messages/sent?requestId=${res.headers['x-request-id'] as string}`);
  assert.equal(report.body.object[0].status, 'BLOCKED');
  assert.equal(await balance(alice.key), before);

  // A second opt-out changes nothing.
  await inbound(to, 'SAIR');
  assert.equal(await blocked(alice.accountId, to), true);
});

test('case, accents, spaces and punctuation do not matter; other texts do not opt out', async () => {
  const cases: [string, boolean][] = [
    [' pArAr ', true],
    ['Cancelár', true],
    ['stop!', true],
    ['S A I R', true],
    ['Sair agora', false],
    ['Não', false],
    ['obrigado', false],
  ];
  for (const [i, [text, expected]] of cases.entries()) {
    const to = phone(10 + i);
    await deliver(alice.key, to);
    await inbound(to, text);
    assert.equal(await blocked(alice.accountId, to), expected, `"${text}"`);
  }
  assert.equal(normalizeKeyword(' Çancélàr! '), 'cancelar');
  assert.equal(isOptOut('', DEFAULT_OPT_OUT_KEYWORDS), false);
});

test('opt-out is per account: the account the reply answered', async () => {
  const bob = await gw.customer({ balance: 10 });
  const to = phone(30);
  await deliver(bob.key, to);
  await deliver(alice.key, to);
  await inbound(to, 'stop');
  assert.equal(await blocked(alice.accountId, to), true);
  assert.equal(await blocked(bob.accountId, to), false);
  await deliver(bob.key, to, 'Bob may still write');
});

test('keywords per account through the operator API', async () => {
  const carol = await gw.customer({ balance: 10 });
  const url = `/admin/accounts/${carol.accountId}/opt-out-keywords`;
  assert.deepEqual((await gw.admin('GET', url)).body, { keywords: ['SAIR', 'PARAR', 'CANCELAR', 'STOP'] });
  const set = await gw.admin('PUT', url, { keywords: ['Descadastrar', 'DESCADASTRAR', ' remover '] });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body, { keywords: ['Descadastrar', 'remover'] });
  assert.deepEqual((await gw.admin('GET', url)).body, set.body);

  await deliver(carol.key, phone(40));
  await inbound(phone(40), 'sair');
  assert.equal(await blocked(carol.accountId, phone(40)), false, 'the defaults no longer apply');
  await deliver(carol.key, phone(41));
  await inbound(phone(41), 'descadastrar');
  assert.equal(await blocked(carol.accountId, phone(41)), true);

  // An empty list turns opt-out by keyword off.
  assert.deepEqual((await gw.admin('PUT', url, { keywords: [] })).body, { keywords: [] });
  await deliver(carol.key, phone(42));
  await inbound(phone(42), 'descadastrar');
  assert.equal(await blocked(carol.accountId, phone(42)), false);
});

test('opt-out keywords: bad input 400, unknown account 404, no token 401', async () => {
  const url = `/admin/accounts/${alice.accountId}/opt-out-keywords`;
  for (const body of [
    {},
    { keywords: 'SAIR' },
    { keywords: ['!!!'] },
    { keywords: [''] },
    { keywords: [5] },
    { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) },
  ]) {
    const res = await gw.admin('PUT', url, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(typeof res.body.error, 'string');
  }
  assert.deepEqual((await gw.admin('GET', url)).body.keywords, ['SAIR', 'PARAR', 'CANCELAR', 'STOP']);
  assert.equal((await gw.admin('PUT', '/admin/accounts/999999/opt-out-keywords', { keywords: ['x'] })).status, 404);
  assert.equal((await gw.admin('GET', '/admin/accounts/999999/opt-out-keywords')).status, 404);
  assert.equal((await gw.app.inject({ method: 'PUT', url, payload: { keywords: ['x'] } })).statusCode, 401);
});

test('a text nobody was sent blocks nothing', async () => {
  const to = phone(50);
  await inbound(to, 'SAIR');
  const rows = await gw.core.db.kysely.selectFrom('blocklist').select('account_id').where('phone', '=', to).execute();
  assert.equal(rows.length, 0);
});
