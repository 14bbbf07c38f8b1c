import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf, UUID } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
  await legacy(gw, alice.key, 'POST', '/sendingcontextrules', {
    Name: 'Lembrete',
    Message: 'Vem amanhã?',
    PositiveContext: 'sim',
    PositiveResponse: 'Até amanhã',
  });
  await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Clientes' });
  await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'Clientes', Action: 'add_number', ContactPhone: '11955551111' });
});
after(() => gw.close());

const tomorrow = (format = 'yyyy-MM-dd HH:mm:ss') => DateTime.now().setZone('America/Sao_Paulo').plus({ days: 1 }).toFormat(format);
const statusOf = async (requestId: string) => (await messagesOf(gw, alice.accountId)).filter((m) => m.request_id === requestId).map((m) => m.status);

test('POST /schedule: scheduled with a request id, cancelled with /cancelrequest and refunded', async () => {
  const start = await balanceOf(gw, alice.accountId);
  const res = await legacy(gw, alice.key, 'POST', '/schedule', { Receivers: '11999998888,11999997777', Content: 'Amanhã', ScheduleDate: tomorrow() });
  assert.equal(res.status, 200, res.raw);
  assert.match(res.body.Object.requestUniqueId, UUID);
  assert.match(res.body.Message, /agendada/);
  const id = res.body.Object.requestUniqueId as string;
  assert.deepEqual(await statusOf(id), ['SCHEDULED', 'SCHEDULED']);
  assert.equal(await balanceOf(gw, alice.accountId), Math.round((start - 0.2) * 100) / 100);

  const cancel = await legacy(gw, alice.key, 'POST', '/cancelrequest', { requestUniqueId: id });
  assert.equal(cancel.status, 200, cancel.raw);
  assert.equal(cancel.body.Object, null);
  assert.deepEqual(await statusOf(id), ['CANCELLED', 'CANCELLED']);
  assert.equal(await balanceOf(gw, alice.accountId), start);

  const again = await legacy(gw, alice.key, 'POST', '/cancelrequest', { RequestUniqueId: id });
  assert.equal(again.status, 400);
  assert.match(again.body.Message, /cancelada/);
});

test("/cancelrequest: unknown id 404, another account's id 404, malformed id 400", async () => {
  assert.equal((await legacy(gw, alice.key, 'POST', '/cancelrequest', { RequestUniqueId: '01900000-0000-7000-8000-000000000000' })).status, 404);
  const bob = await gw.customer();
  const theirs = await legacy(gw, bob.key, 'POST', '/schedule', { Receivers: '11999998888', Content: 'x', ScheduleDate: tomorrow() });
  assert.equal((await legacy(gw, alice.key, 'POST', '/cancelrequest', { RequestUniqueId: theirs.body.Object.requestUniqueId })).status, 404);
  assert.equal((await legacy(gw, alice.key, 'POST', '/cancelrequest', { RequestUniqueId: 'abc' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'POST', '/cancelrequest', {})).status, 400);
});

test('ScheduleDate: day-first and ISO forms accepted; missing, invalid and past refused', async () => {
  const dayFirst = await legacy(gw, alice.key, 'POST', '/schedule', { Receivers: '11999998888', Content: 'x', ScheduleDate: tomorrow('dd/MM/yyyy HH:mm') });
  assert.equal(dayFirst.status, 200, dayFirst.raw);
  const iso = await legacy(gw, alice.key, 'POST', '/schedule', {
    receivers: '11999998888',
    content: 'x',
    scheduledate: DateTime.now().plus({ hours: 3 }).toISO(),
  });
  assert.equal(iso.status, 200, iso.raw);
  const cases: [unknown, RegExp][] = [
    [{ Receivers: '11999998888', Content: 'x' }, /ScheduleDate/],
    [{ Receivers: '11999998888', Content: 'x', ScheduleDate: 'amanhã' }, /não é válida/],
    [{ Receivers: '11999998888', Content: 'x', ScheduleDate: '2020-01-01 10:00:00' }, /já passou/],
    [{ Receivers: '11999998888', Content: 'x', ScheduleDate: '2999-01-01 10:00:00' }, /longe demais/],
  ];
  for (const [payload, text] of cases) {
    const res = await legacy(gw, alice.key, 'POST', '/schedule', payload);
    assert.equal(res.status, 400, JSON.stringify(payload));
    assert.match(res.body.Message, text);
  }
});

test('/schedulecontextmessage and /schedulecontactmessage schedule the same sends', async () => {
  const ctx = await legacy(gw, alice.key, 'POST', '/schedulecontextmessage', {
    Receivers: '11999996666',
    ContextRuleName: 'lembrete',
    ScheduleDate: tomorrow(),
  });
  assert.equal(ctx.status, 200, ctx.raw);
  assert.deepEqual(await statusOf(ctx.body.Object.requestUniqueId), ['SCHEDULED']);
  const group = await legacy(gw, alice.key, 'POST', '/schedulecontactmessage', { GroupName: 'Clientes', Content: 'Promoção', ScheduleDate: tomorrow() });
  assert.equal(group.status, 200, group.raw);
  assert.deepEqual(await statusOf(group.body.Object.requestUniqueId), ['SCHEDULED']);
  const past = await legacy(gw, alice.key, 'POST', '/schedulecontactmessage', { GroupName: 'Clientes', Content: 'x', ScheduleDate: '01/01/2020 10:00' });
  assert.equal(past.status, 400);
  const noRule = await legacy(gw, alice.key, 'POST', '/schedulecontextmessage', {
    Receivers: '11999996666',
    ContextRuleName: 'nada',
    ScheduleDate: tomorrow(),
  });
  assert.equal(noRule.status, 400);
});

test('/send ignores a ScheduleDate (only the /schedule operations schedule)', async () => {
  const res = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11999995555', Content: 'agora', ScheduleDate: tomorrow() });
  assert.equal(res.status, 200);
  assert.notDeepEqual(await statusOf(res.body.Object.requestUniqueId), ['SCHEDULED']);
});
