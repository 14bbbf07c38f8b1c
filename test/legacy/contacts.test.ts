import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf, balanceOf } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
});
after(() => gw.close());

test('/contactgroup: create, add and remove numbers, list all and one, delete', async () => {
  const created = await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'VIP', Description: 'Melhores clientes' });
  assert.equal(created.status, 200, created.raw);
  assert.deepEqual({ ...created.body.Object, Id: 0 }, { Id: 0, Name: 'VIP', Description: 'Melhores clientes', TotalContacts: 0, LastUsed: null });
  const dup = await legacy(gw, alice.key, 'POST', '/contactgroup', { name: 'vip' });
  assert.equal(dup.status, 400);
  assert.match(dup.body.Message, /Já existe/);
  assert.equal((await legacy(gw, alice.key, 'POST', '/contactgroup', { Description: 'x' })).status, 400);

  const add = await legacy(gw, alice.key, 'PUT', '/contactgroup', {
    GroupName: 'VIP',
    Action: 'add_number',
    ContactName: 'Ana',
    ContactPhone: '(11) 95555-1111',
  });
  assert.equal(add.status, 200, add.raw);
  assert.match(add.body.Message, /5511955551111/);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/contactgroup', { groupname: 'VIP', action: 'add_number', contactphone: '11955552222' })).status, 200);
  const again = await legacy(gw, alice.key, 'PUT', '/contactgroup/VIP', { Action: 'add_number', ContactPhone: '5511955552222' });
  assert.equal(again.status, 200);
  assert.match(again.body.Message, /já está/);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'VIP', Action: 'replace', ContactPhone: '11955552222' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'VIP', Action: 'add_number', ContactPhone: 'abc' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'Nada', Action: 'add_number', ContactPhone: '11955552222' })).status, 404);

  const all = await legacy(gw, alice.key, 'GET', '/contactgroup');
  assert.equal(all.body.Object.length, 1);
  assert.equal(all.body.Object[0].TotalContacts, 2);
  const byPath = await legacy(gw, alice.key, 'GET', '/contactgroup/VIP');
  const byQuery = await legacy(gw, alice.key, 'GET', `/contactgroup?id=${created.body.Object.Id}`);
  assert.deepEqual(byPath.body.Object, all.body.Object);
  assert.deepEqual(byQuery.body.Object, all.body.Object);
  assert.equal((await legacy(gw, alice.key, 'GET', '/contactgroup/Outro')).status, 404);
  await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Ação' });
  assert.equal((await legacy(gw, alice.key, 'GET', `/contactgroup?id=${encodeURIComponent('AÇÃO')}`)).body.Object[0].Name, 'Ação');
  assert.equal((await legacy(gw, alice.key, 'DELETE', `/contactgroup/${encodeURIComponent('ação')}`)).status, 200);

  // The same groups as the gateway's GET /contacts.
  const gateway = await gw.call(alice.key, 'GET', '/contacts');
  assert.deepEqual(
    gateway.body.object.map((g: any) => [g.name, g.validContacts]),
    [['VIP', 2]],
  );

  const removed = await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'VIP', Action: 'remove_number', ContactPhone: '11955552222' });
  assert.equal(removed.status, 200);
  assert.equal((await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'VIP', Action: 'remove_number', ContactPhone: '11955552222' })).status, 404);

  assert.equal((await legacy(gw, alice.key, 'DELETE', '/contactgroup?id=VIP')).status, 200);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/contactgroup/VIP')).status, 404);
  assert.deepEqual((await legacy(gw, alice.key, 'GET', '/contactgroup')).body.Object, []);
});

test('/sendcontactmessage sends to every phone of the group and sets LastUsed', async () => {
  await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Equipe' });
  for (const phone of ['11966661111', '11966662222'])
    await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'Equipe', Action: 'add_number', ContactPhone: phone });
  const res = await legacy(gw, alice.key, 'POST', '/sendcontactmessage', { sender: 'RH', content: 'Reunião às 10h', groupname: 'equipe' });
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.Object, null);
  const requestId = res.headers['x-request-id'] as string;
  const sent = (await messagesOf(gw, alice.accountId)).filter((m) => m.request_id === requestId);
  assert.deepEqual(sent.map((m) => m.receiver).sort(), ['5511966661111', '5511966662222']);
  const [group] = (await legacy(gw, alice.key, 'GET', '/contactgroup/Equipe')).body.Object;
  assert.match(group.LastUsed, /^\d{4}-\d{2}-\d{2}T/);

  await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Vazio' });
  const cases: [unknown, RegExp][] = [
    [{ GroupName: 'Equipe' }, /Content/],
    [{ GroupName: 'Equipe', Content: ' ' }, /Content/],
    [{ Content: 'x' }, /GroupName/],
    [{ Content: 'x', GroupName: 'Fantasma' }, /Fantasma/],
    [{ Content: 'x', GroupName: 'Vazio' }, /não tem contatos/],
  ];
  for (const [payload, text] of cases) {
    const r = await legacy(gw, alice.key, 'POST', '/sendcontactmessage', payload);
    assert.equal(r.status, 400, JSON.stringify(payload));
    assert.match(r.body.Message, text);
  }
});

test('/blacklist: add, list all and one (path and query), delete', async () => {
  const add = await legacy(gw, alice.key, 'POST', '/blacklist', { PhoneNumber: '(11) 97777-0000' });
  assert.equal(add.status, 200, add.raw);
  assert.match(add.body.Message, /5511977770000/);
  assert.match((await legacy(gw, alice.key, 'POST', '/blacklist', { phonenumber: 11977770000 })).body.Message, /já estava/);
  assert.equal((await legacy(gw, alice.key, 'POST', '/blacklist', { PhoneNumber: '12' })).status, 400);
  assert.equal((await legacy(gw, alice.key, 'POST', '/blacklist', {})).status, 400);

  const all = await legacy(gw, alice.key, 'GET', '/blacklist');
  assert.deepEqual(
    all.body.Object.map((b: any) => b.PhoneNumber),
    ['5511977770000'],
  );
  assert.equal((await legacy(gw, alice.key, 'GET', '/blacklist/11977770000')).body.Object.length, 1);
  assert.equal((await legacy(gw, alice.key, 'GET', '/blacklist?id=5511977770000')).body.Object.length, 1);
  assert.equal((await legacy(gw, alice.key, 'GET', '/blacklist/11977779999')).status, 404);

  assert.equal((await legacy(gw, alice.key, 'DELETE', '/blacklist', { PhoneNumber: '11977770000' })).status, 200);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/blacklist/11977770000')).status, 404);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/blacklist?id=abc')).status, 400);
});

test('blocked receivers are skipped (BLOCKED) and not charged, on both interfaces', async () => {
  const blocked = '5511988880000';
  await legacy(gw, alice.key, 'POST', '/blacklist', { PhoneNumber: blocked });
  const start = await balanceOf(gw, alice.accountId);

  const res = await legacy(gw, alice.key, 'POST', '/send', { Receivers: `${blocked.slice(2)},11988881111`, Content: 'oi' });
  assert.equal(res.status, 200);
  assert.match(res.body.Message, /1 destinatário\(s\), 1 crédito.*1 número/);
  const legacySent = (await messagesOf(gw, alice.accountId)).filter((m) => m.request_id === res.body.Object.requestUniqueId);
  assert.deepEqual(legacySent.map((m) => [m.receiver, m.status === 'BLOCKED', m.cost]).sort(), [
    [blocked, true, 0],
    ['5511988881111', false, 100_000],
  ]);

  const gateway = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [blocked, '5511988882222'], message: 'oi', route: alice.routeId });
  assert.equal(gateway.status, 200);
  const gatewaySent = (await messagesOf(gw, alice.accountId)).filter((m) => m.request_id === gateway.headers['x-request-id']);
  assert.deepEqual(gatewaySent.map((m) => [m.receiver, m.status === 'BLOCKED', m.cost]).sort(), [
    [blocked, true, 0],
    ['5511988882222', false, 100_000],
  ]);

  assert.equal(await balanceOf(gw, alice.accountId), Math.round((start - 0.2) * 1e6) / 1e6);
  // Every receiver blocked: nothing is charged, even at zero cost the send is accepted.
  const onlyBlocked = await legacy(gw, alice.key, 'POST', '/send', { Receivers: blocked, Content: 'oi' });
  assert.equal(onlyBlocked.status, 200);
  assert.match(onlyBlocked.body.Message, /0 destinatário/);
});

test('groups and blocklist are per account', async () => {
  const bob = await gw.customer();
  await legacy(gw, bob.key, 'POST', '/contactgroup', { Name: 'Só do Bob' });
  await legacy(gw, bob.key, 'POST', '/blacklist', { PhoneNumber: '11911112222' });
  assert.equal((await legacy(gw, alice.key, 'GET', '/contactgroup/Só do Bob')).status, 404);
  assert.equal((await legacy(gw, alice.key, 'GET', '/blacklist/11911112222')).status, 404);
  assert.equal((await legacy(gw, alice.key, 'DELETE', '/contactgroup?id=Só do Bob')).status, 404);
});
