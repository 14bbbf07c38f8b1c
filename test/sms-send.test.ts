import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 100, farePrice: '0.10' });
});
after(() => gw.close());

const sent = async (key: string, query = '') => (await gw.call(key, 'GET', `/reports/messages/sent${query}`)).body;

test('a send is accepted, charged, dispatched and delivered', async () => {
  const res = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [5511999998888, '5511999997777'], message: 'Hello', route: alice.routeId });
  assert.equal(res.status, 200);
  assert.deepEqual({ ...res.body, message: undefined }, { hasError: false, message: undefined, totalRecords: 0, errors: [], object: null });
  const requestId = res.headers['x-request-id'] as string;
  assert.match(requestId, /^[0-9a-f-]{36}$/);
  const report = await gw.eventually(() => sent(alice.key, `?requestId=${requestId}`), (b) => b.object.length === 2 && b.object.every((m: any) => m.status === 'DELIVERED'), 'delivery');
  assert.equal(report.totalRecords, 2);
  const balance = await gw.call(alice.key, 'GET', '/balance');
  assert.deepEqual(balance.body, { hasError: false, message: null, totalRecords: 0, errors: [], object: { balance: 99.8 }, o: null });
});
