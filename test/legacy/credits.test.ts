import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { legacy, balanceOf } from './legacy-helpers.ts';

let gw: TestGateway;
let reseller: Customer;
let childId: number;

before(async () => {
  gw = await startGateway();
  reseller = await gw.customer({ balance: 50, role: 'RESELLER' });
  const child = await createAccount(gw.core.db.kysely, {
    name: 'Filial Norte',
    role: 'CUSTOMER',
    timezone: 'America/Sao_Paulo',
    balance: 2_000_000,
    parentId: reseller.accountId,
  });
  childId = Number(child.id);
});
after(() => gw.close());

test('GET /credits: own balance as a bare number', async () => {
  const res = await legacy(gw, reseller.key, 'GET', '/credits');
  assert.equal(res.status, 200);
  assert.deepEqual({ ...res.body, Message: '' }, { Success: true, Object: 50, Message: '' });
});

test('GET /credits of a sub-account: id in the path or the query, by id or name', async () => {
  for (const path of [`/credits/${childId}`, `/credits?id=${childId}`, `/credits?ID=${encodeURIComponent('Filial Norte')}`]) {
    const res = await legacy(gw, reseller.key, 'GET', path);
    assert.equal(res.status, 200, path);
    assert.equal(res.body.Object, 2, path);
  }
  assert.equal((await legacy(gw, reseller.key, 'GET', '/credits/999999')).status, 404);
  const other = await gw.customer();
  assert.equal((await legacy(gw, other.key, 'GET', `/credits/${childId}`)).status, 404);
});

test('PUT /credits moves credits to the sub-account in one transaction, with ledger entries on both sides', async () => {
  const res = await legacy(gw, reseller.key, 'PUT', `/credits/${childId}?Amount=5`);
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.Object, 7);
  assert.equal(await balanceOf(gw, reseller.accountId), 45);
  assert.equal(await balanceOf(gw, childId), 7);
  const byQuery = await legacy(gw, reseller.key, 'PUT', `/credits?id=${childId}&amount=1.5`);
  assert.equal(byQuery.body.Object, 8.5);
  const back = await legacy(gw, reseller.key, 'PUT', `/credits/${childId}`, { Amount: -0.5 });
  assert.equal(back.status, 200, back.raw);
  assert.equal(back.body.Object, 8);
  assert.equal(await balanceOf(gw, reseller.accountId), 44);
  const ledger = await gw.core.db.kysely
    .selectFrom('ledger')
    .select(['account_id', 'amount', 'reason'])
    .where('reason', 'like', 'transfer%')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    ledger.map((l) => [Number(l.account_id), l.amount]),
    [
      [reseller.accountId, -5_000_000],
      [childId, 5_000_000],
      [reseller.accountId, -1_500_000],
      [childId, 1_500_000],
      [childId, -500_000],
      [reseller.accountId, 500_000],
    ],
  );
});

test('PUT /credits refusals: customer 403, unknown sub-account 404, bad amount 400, more than the balance 400', async () => {
  const customer = await gw.customer();
  const forbidden = await legacy(gw, customer.key, 'PUT', `/credits/${childId}?Amount=1`);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body.Success, false);
  assert.equal((await legacy(gw, reseller.key, 'PUT', '/credits/999999?Amount=1')).status, 404);
  for (const amount of ['0', 'abc', '1.1234567']) {
    assert.equal((await legacy(gw, reseller.key, 'PUT', `/credits/${childId}?Amount=${amount}`)).status, 400, amount);
  }
  assert.equal((await legacy(gw, reseller.key, 'PUT', `/credits/${childId}`)).status, 400);
  assert.equal((await legacy(gw, reseller.key, 'PUT', '/credits?Amount=1')).status, 400);
  const tooMuch = await legacy(gw, reseller.key, 'PUT', `/credits/${childId}?Amount=1000`);
  assert.equal(tooMuch.status, 400);
  assert.match(tooMuch.body.Message, /revenda não tem saldo/);
  const tooMuchBack = await legacy(gw, reseller.key, 'PUT', `/credits/${childId}?Amount=-1000`);
  assert.equal(tooMuchBack.status, 400);
  assert.match(tooMuchBack.body.Message, /subconta não tem saldo/);
});

test('/balancehistory lists ledger entries newest first with the balance after each', async () => {
  const res = await legacy(gw, reseller.key, 'GET', '/balancehistory');
  assert.equal(res.status, 200, res.raw);
  const entries = res.body.Object as { Amount: number; Balance: number; Reason: string }[];
  assert.equal(entries[0]?.Balance, await balanceOf(gw, reseller.accountId));
  assert.equal(entries.at(-1)?.Reason, 'opening balance');
  for (let i = 0; i + 1 < entries.length; i++) {
    const [newer, older] = [entries[i], entries[i + 1]];
    assert.equal(Math.round(((older?.Balance ?? 0) + (newer?.Amount ?? 0)) * 1e6) / 1e6, newer?.Balance);
  }
  const child = await legacy(gw, reseller.key, 'GET', `/balancehistory/${childId}`);
  assert.equal(child.body.Object[0].Balance, await balanceOf(gw, childId));
  const range = await legacy(gw, reseller.key, 'GET', '/balancehistory?StartDate=2001-01-01&EndDate=2001-01-31');
  assert.deepEqual(range.body.Object, []);
  assert.equal((await legacy(gw, reseller.key, 'GET', '/balancehistory?StartDate=ontem')).status, 400);
});
