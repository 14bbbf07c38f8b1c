import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, legacyApp, messagesOf } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;
let now = Date.now();
/** The legacy interface over the same core, with a clock the tests move past the 30-second window. */
let clocked: FastifyInstance;
let sendId = '';
let contextId = '';

const later = () => {
  now += 31_000;
};

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10', replyFarePrice: '0.02' });
  clocked = await legacyApp(gw.core, { clock: () => now });
  const send = await legacy(gw, alice.key, 'POST', '/send', { Sender: 'loja', Receivers: '11999998888,11999990001', Content: 'Pedido enviado' });
  sendId = send.body.Object.requestUniqueId;
  await legacy(gw, alice.key, 'POST', '/sendingcontextrules', { Name: 'NPS', Message: 'Recomendaria?', PositiveContext: 'sim', PositiveResponse: 'Obrigado!' });
  const ctx = await legacy(gw, alice.key, 'POST', '/sendcontextmessage', { Receivers: '11977771234', ContextRuleName: 'NPS' });
  contextId = ctx.headers['x-request-id'] as string;
  await gw.eventually(
    () => messagesOf(gw, alice.accountId),
    (ms) => ms.length === 3 && ms.every((m) => m.status === 'DELIVERED' || m.status === 'UNDELIVERED'),
    'final statuses',
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: '5511977771234', text: 'Sim' });
  await gw.eventually(
    () => messagesOf(gw, alice.accountId),
    (ms) => ms.length === 4 && ms.every((m) => m.status === 'DELIVERED' || m.status === 'UNDELIVERED'),
    'automatic answer delivered',
  );
});
after(async () => {
  await clocked.close();
  await gw.close();
});

test('one call per 30 s per key and report: inside the window 202 with Success false and the seconds left', async () => {
  const first = await legacy(gw, alice.key, 'GET', '/detailedreporting');
  assert.equal(first.status, 200);
  const second = await legacy(gw, alice.key, 'GET', '/detailedreporting');
  assert.equal(second.status, 202);
  assert.deepEqual({ ...second.body, Message: '' }, { Success: false, Object: null, Message: '' });
  assert.match(second.body.Message, /Aguarde \d+ segundo/);
  assert.ok(Number(second.headers['retry-after']) > 0);
  // Another report, or another key, has its own window.
  assert.equal((await legacy(gw, alice.key, 'POST', '/replyreporting', {})).status, 200);
  const otherKey = await gw.admin('POST', `/admin/accounts/${alice.accountId}/api-keys`, {});
  assert.equal((await legacy(gw, otherKey.body.key, 'GET', '/detailedreporting')).status, 200);
  // A refused call does not use the window.
  assert.equal((await legacy(gw, alice.key, 'GET', '/contextreporting?StartDate=hoje')).status, 400);
  assert.equal((await legacy(gw, alice.key, 'GET', '/contextreporting')).status, 200);
  // After the window the report answers again.
  assert.equal((await legacy(clocked, alice.key, 'GET', '/consolidatedreporting')).status, 200);
  assert.equal((await legacy(clocked, alice.key, 'GET', '/consolidatedreporting')).status, 202);
  later();
  assert.equal((await legacy(clocked, alice.key, 'GET', '/consolidatedreporting')).status, 200);
});

test('/detailedreporting: one row per message, filters Delivered, Receiver, RequestUniqueId, dates', async () => {
  later();
  const all = await legacy(clocked, alice.key, 'GET', '/detailedreporting');
  assert.equal(all.status, 200, all.raw);
  assert.equal(all.body.Object.length, 4);
  const row = all.body.Object.find((m: any) => m.Receiver === '5511999998888');
  assert.equal(row.RequestUniqueId, sendId);
  assert.equal(row.Sender, 'loja');
  assert.equal(row.Status, 'DELIVERED');
  assert.equal(row.Delivered, true);
  assert.equal(row.Credits, 1);
  assert.equal(row.Cost, 0.1);
  assert.match(row.CreatedDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/);
  later();
  const delivered = await legacy(clocked, alice.key, 'POST', '/detailedreporting', { delivered: 'true' });
  assert.equal(delivered.body.Object.length, 3);
  later();
  const notDelivered = await legacy(clocked, alice.key, 'GET', '/detailedreporting?Delivered=false');
  assert.deepEqual(
    notDelivered.body.Object.map((m: any) => [m.Receiver, m.Status]),
    [['5511999990001', 'UNDELIVERED']],
  );
  later();
  const byReceiver = await legacy(clocked, alice.key, 'GET', '/detailedreporting?receiver=(11)99999-8888');
  assert.equal(byReceiver.body.Object.length, 1);
  later();
  const byRequest = await legacy(clocked, alice.key, 'GET', `/detailedreporting?RequestUniqueId=${sendId}`);
  assert.equal(byRequest.body.Object.length, 2);
  later();
  const old = await legacy(clocked, alice.key, 'GET', '/detailedreporting?StartDate=01/01/2020&EndDate=31/01/2020');
  assert.deepEqual(old.body.Object, []);
  later();
  assert.equal((await legacy(clocked, alice.key, 'GET', '/detailedreporting?Delivered=talvez')).status, 400);
  assert.equal((await legacy(clocked, alice.key, 'GET', '/detailedreporting?StartDate=2025-02-01&EndDate=2025-01-01')).status, 400);
  assert.equal((await legacy(clocked, alice.key, 'GET', '/detailedreporting?StartDate=2020-01-01&EndDate=2025-01-01')).status, 400);
});

test('/replyreporting: the reply with the text it answers', async () => {
  later();
  const res = await legacy(clocked, alice.key, 'GET', '/replyreporting');
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.Object.length, 1);
  const [r] = res.body.Object;
  assert.equal(r.PhoneNumber, '5511977771234');
  assert.equal(r.ReceivedContent, 'Sim');
  assert.equal(r.SentContent, 'Recomendaria?');
  assert.equal(r.RequestUniqueId, contextId);
  later();
  assert.deepEqual((await legacy(clocked, alice.key, 'GET', '/replyreporting?PhoneNumber=11900000000')).body.Object, []);
});

test('/contextreporting: the context send, the reply and the automatic answer', async () => {
  later();
  const res = await legacy(clocked, alice.key, 'POST', '/contextreporting', { ContextRuleName: 'NPS' });
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.Object.length, 1);
  const [c] = res.body.Object;
  assert.equal(c.RequestUniqueId, contextId);
  assert.equal(c.Receiver, '5511977771234');
  assert.equal(c.Status, 'POSITIVE');
  assert.equal(c.ReceivedContent, 'Sim');
  assert.equal(c.ResponseContent, 'Obrigado!');
});

test('/consolidatedreporting: per day by default, per month with group=true', async () => {
  later();
  const daily = await legacy(clocked, alice.key, 'GET', '/consolidatedreporting');
  assert.equal(daily.status, 200, daily.raw);
  const today = DateTime.now().setZone('America/Sao_Paulo').toFormat('yyyy-MM-dd');
  assert.deepEqual(daily.body.Object, [
    { Period: today, Messages: 4, Delivered: 3, Undelivered: 1, Pending: 0, Failed: 0, Cancelled: 0, Blocked: 0, Credits: 4, Cost: 0.4, Replies: 1 },
  ]);
  later();
  const monthly = await legacy(clocked, alice.key, 'GET', '/consolidatedreporting?group=true');
  assert.deepEqual(
    monthly.body.Object.map((p: any) => [p.Period, p.Messages]),
    [[today.slice(0, 7), 4]],
  );
  later();
  assert.equal((await legacy(clocked, alice.key, 'GET', '/consolidatedreporting?group=maybe')).status, 400);
});

test('/consolidatedreporting counts what stayed charged: a receipt failure yes, a rejection at submit no', async () => {
  const carol = await gw.customer({ balance: 10, farePrice: '0.10' });
  await legacy(gw, carol.key, 'POST', '/send', { Receivers: '11999990003,11999997777', Content: 'Oi' });
  await gw.eventually(
    () => messagesOf(gw, carol.accountId),
    (ms) => ms.length === 2 && ms.some((m) => m.status === 'FAILED') && ms.some((m) => m.status === 'DELIVERED'),
    'one rejected at submit, one delivered',
  );
  // What a carrier's REJECTD receipt leaves: the message was sent (and stays charged), then failed.
  await gw.core.db.kysely
    .updateTable('messages')
    .set({ status: 'FAILED', status_details: 'stat:REJECTD err:002' })
    .where('account_id', '=', carol.accountId)
    .where('status', '=', 'DELIVERED')
    .execute();
  later();
  const daily = await legacy(clocked, carol.key, 'GET', '/consolidatedreporting');
  const today = DateTime.now().setZone('America/Sao_Paulo').toFormat('yyyy-MM-dd');
  assert.deepEqual(daily.body.Object, [
    { Period: today, Messages: 2, Delivered: 0, Undelivered: 0, Pending: 0, Failed: 2, Cancelled: 0, Blocked: 0, Credits: 1, Cost: 0.1, Replies: 0 },
  ]);
  const balance = await gw.core.db.kysely.selectFrom('accounts').select('balance').where('id', '=', carol.accountId).executeTakeFirstOrThrow();
  assert.equal(balance.balance, 9_900_000, 'the balance agrees: only the message the carrier took is charged');
});

test("reports only show the account's own data", async () => {
  const bob = await gw.customer();
  assert.deepEqual((await legacy(gw, bob.key, 'GET', '/detailedreporting')).body.Object, []);
  assert.deepEqual((await legacy(gw, bob.key, 'GET', '/replyreporting')).body.Object, []);
  assert.deepEqual((await legacy(gw, bob.key, 'GET', '/contextreporting')).body.Object, []);
  assert.deepEqual((await legacy(gw, bob.key, 'GET', '/consolidatedreporting')).body.Object, []);
});
