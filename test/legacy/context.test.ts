import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;

const RULE = {
  Name: 'Confirmação',
  Message: 'Confirma sua consulta amanhã? Responda SIM ou NÃO',
  PositiveContext: 'sim, confirmo, s',
  PositiveResponse: 'Consulta confirmada. Obrigado!',
  NegativeContext: ['não', 'cancelar'],
  NegativeResponse: 'Consulta cancelada.',
  DefaultResponse: 'Não entendi. Responda SIM ou NÃO.',
};

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10', replyFarePrice: '0.02' });
  const res = await legacy(gw, alice.key, 'POST', '/sendingcontextrules', RULE);
  assert.equal(res.status, 200, res.raw);
});
after(() => gw.close());

/** Sends the context message to one phone and waits until it was delivered (a reply is matched to a delivered message). */
async function contextSend(phone: string, extra: Record<string, unknown> = {}) {
  const res = await legacy(gw, alice.key, 'POST', '/sendcontextmessage', { Receivers: phone, ContextRuleName: RULE.Name, ...extra });
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.Object, null);
  const requestId = res.headers['x-request-id'] as string;
  await gw.eventually(
    () => messagesOf(gw, alice.accountId),
    (ms) => ms.some((m) => m.request_id === requestId && m.status === 'DELIVERED'),
    'context send delivered',
  );
  return requestId;
}

const answersTo = async (phone: string) => (await messagesOf(gw, alice.accountId)).filter((m) => m.receiver === phone && m.source === 'reply');

test('rules: create, replace by name, list all and one (path and query), 404, delete', async () => {
  const created = await legacy(gw, alice.key, 'POST', '/sendingcontextrules', {
    name: 'Pesquisa',
    message: 'Gostou?',
    positiveContext: 'sim',
    positiveResponse: 'Valeu',
  });
  assert.equal(created.status, 200);
  assert.match(created.body.Message, /criada/);
  assert.equal(created.body.Object.PositiveContext, 'sim');
  const updated = await legacy(gw, alice.key, 'POST', '/sendingcontextrules', {
    Name: 'pesquisa',
    Message: 'Gostou do atendimento?',
    PositiveContext: 'sim,gostei',
  });
  assert.match(updated.body.Message, /atualizada/);
  assert.equal(updated.body.Object.Id, created.body.Object.Id);
  assert.equal(updated.body.Object.PositiveContext, 'sim,gostei');
  const all = await legacy(gw, alice.key, 'GET', '/sendingcontextrules');
  assert.deepEqual(all.body.Object.map((r: any) => r.Name).sort(), ['Confirmação', 'Pesquisa']);
  const byPath = await legacy(gw, alice.key, 'GET', `/sendingcontextrules/${encodeURIComponent('Pesquisa')}`);
  const byQuery = await legacy(gw, alice.key, 'GET', '/sendingcontextrules?id=Pesquisa');
  assert.deepEqual(byPath.body.Object, byQuery.body.Object);
  assert.equal(byPath.body.Object.length, 1);
  // Case-insensitive beyond ASCII (SQLite's lower() is not).
  assert.equal((await legacy(gw, alice.key, 'GET', `/sendingcontextrules?id=${encodeURIComponent('CONFIRMAÇÃO')}`)).body.Object[0].Name, 'Confirmação');
  assert.equal((await legacy(gw, alice.key, 'GET', '/sendingcontextrules/Nenhuma')).status, 404);
  assert.equal((await legacy(gw, alice.key, 'POST', '/sendingcontextrules', { Name: 'x' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'POST', '/sendingcontextrules', { Name: ' ', Message: 'x' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/sendingcontextrules?id=Pesquisa')).status, 200);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/sendingcontextrules/Pesquisa')).status, 404);
  // Another account does not see the rules.
  const bob = await gw.customer();
  assert.deepEqual((await legacy(gw, bob.key, 'GET', '/sendingcontextrules')).body.Object, []);
});

test('400 for /sendcontextmessage: no receiver, no or unknown ContextRuleName, insufficient credits', async () => {
  const cases: [unknown, RegExp][] = [
    [{ ContextRuleName: RULE.Name }, /Receivers/],
    [{ Receivers: '', ContextRuleName: RULE.Name }, /Receivers/],
    [{ Receivers: '11999998888' }, /ContextRuleName/],
    [{ Receivers: '11999998888', ContextRuleName: '' }, /ContextRuleName/],
    [{ Receivers: '11999998888', ContextRuleName: 'Inexistente' }, /Inexistente/],
  ];
  for (const [payload, text] of cases) {
    const res = await legacy(gw, alice.key, 'POST', '/sendcontextmessage', payload);
    assert.equal(res.status, 400, JSON.stringify(payload));
    assert.match(res.body.Message, text);
  }
  const poor = await gw.customer({ balance: 0 });
  await legacy(gw, poor.key, 'POST', '/sendingcontextrules', RULE);
  const broke = await legacy(gw, poor.key, 'POST', '/sendcontextmessage', { Receivers: '11999998888', ContextRuleName: RULE.Name });
  assert.equal(broke.status, 400);
  assert.match(broke.body.Message, /Créditos insuficientes/);
});

test('end to end: the reply SIM is answered automatically with the positive response, charged', async () => {
  const phone = '5511977774321';
  await contextSend(phone.slice(2));
  const before = await balanceOf(gw, alice.accountId);
  const inbound = await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'SIM' });
  assert.equal(inbound.status, 202);
  const [answer] = await gw.eventually(
    () => answersTo(phone),
    (a) => a.length === 1,
    'automatic answer',
  );
  assert.equal(answer?.content, RULE.PositiveResponse);
  assert.equal(answer?.cost, 100_000);
  // Charged: the reply (0.02) and the automatic answer (0.10).
  assert.equal(Math.round((before - (await balanceOf(gw, alice.accountId))) * 100) / 100, 0.12);
  await gw.eventually(
    () => answersTo(phone),
    (a) => a[0]?.status === 'DELIVERED',
    'answer delivered',
  );
  // The conversation is over: another reply gets no answer.
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'sim' });
  await gw.eventually(
    () => gw.core.db.kysely.selectFrom('replies').select('id').where('sender', '=', phone).execute(),
    (r) => r.length === 2,
    'second reply stored',
  );
  assert.equal((await answersTo(phone)).length, 1);
});

test('matching ignores case and accents: "Não, obrigado" gets the negative response', async () => {
  const phone = '5511977775555';
  await contextSend(phone.slice(2));
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'NAO, obrigado' });
  const [answer] = await gw.eventually(
    () => answersTo(phone),
    (a) => a.length === 1,
    'negative answer',
  );
  assert.equal(answer?.content, RULE.NegativeResponse);
});

test('an unclear reply gets the default response and the context keeps waiting', async () => {
  const phone = '5511977776666';
  await contextSend(phone.slice(2));
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'talvez' });
  await gw.eventually(
    () => answersTo(phone),
    (a) => a.length === 1 && a[0]?.status === 'DELIVERED',
    'default answer delivered',
  );
  assert.equal((await answersTo(phone))[0]?.content, RULE.DefaultResponse);
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'Confirmo!' });
  const answers = await gw.eventually(
    () => answersTo(phone),
    (a) => a.length === 2,
    'positive answer after default',
  );
  assert.equal(answers[1]?.content, RULE.PositiveResponse);
});

test('ForceContent replaces the rule message; a plain send afterwards ends the context', async () => {
  const phone = '5511977778888';
  const requestId = await contextSend(phone.slice(2), { forceContent: 'Texto forçado' });
  const sent = (await messagesOf(gw, alice.accountId)).find((m) => m.request_id === requestId);
  assert.equal(sent?.content, 'Texto forçado');
  const plain = await legacy(gw, alice.key, 'POST', '/send', { Receivers: phone.slice(2), Content: 'Outro assunto' });
  await gw.eventually(
    () => messagesOf(gw, alice.accountId),
    (ms) => ms.some((m) => m.request_id === plain.body.Object.requestUniqueId && m.status === 'DELIVERED'),
    'plain send delivered',
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone, text: 'sim' });
  await gw.eventually(
    () => gw.core.db.kysely.selectFrom('replies').select('id').where('sender', '=', phone).execute(),
    (r) => r.length === 1,
    'reply stored',
  );
  assert.equal((await answersTo(phone)).length, 0);
});
