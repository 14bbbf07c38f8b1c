import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, messagesOf } from './legacy-helpers.ts';

/**
 * Tenant isolation on the legacy interface: B uses A's names and ids on
 * every legacy operation that takes one; nothing of A shows or changes.
 */
let gw: TestGateway;
let A: Customer;
let B: Customer;
let scheduled = '';

const stateOfA = async () => ({
  rules: (await legacy(gw, A.key, 'GET', '/sendingcontextrules')).body.Object,
  groups: (await legacy(gw, A.key, 'GET', '/contactgroup')).body.Object,
  blocked: (await legacy(gw, A.key, 'GET', '/blacklist')).body.Object,
  credits: (await legacy(gw, A.key, 'GET', '/credits')).body.Object,
  messages: (await messagesOf(gw, A.accountId)).map((m) => [m.id, m.status]),
});

before(async () => {
  gw = await startGateway();
  A = await gw.customer({ balance: 10, role: 'RESELLER' });
  B = await gw.customer({ balance: 10, role: 'RESELLER' });
  await legacy(gw, A.key, 'POST', '/sendingcontextrules', { Name: 'Regra-A', Message: 'A-secret' });
  await legacy(gw, A.key, 'POST', '/contactgroup', { Name: 'Grupo-A' });
  await legacy(gw, A.key, 'PUT', '/contactgroup', { GroupName: 'Grupo-A', Action: 'add_number', ContactPhone: '11912340000' });
  await legacy(gw, A.key, 'POST', '/blacklist', { PhoneNumber: '11912349999' });
  const s = await legacy(gw, A.key, 'POST', '/schedule', {
    Receivers: '11912341111',
    Content: 'A-secret',
    ScheduleDate: DateTime.now().plus({ days: 1 }).toFormat('yyyy-MM-dd HH:mm:ss'),
  });
  scheduled = s.body.Object.requestUniqueId;
});
after(() => gw.close());

test('B cannot see, use, change or delete anything of A through the legacy interface', async () => {
  const before = await stateOfA();
  const attempts: [string, string, unknown, number][] = [
    ['GET', '/sendingcontextrules/Regra-A', undefined, 404],
    ['DELETE', '/sendingcontextrules?id=Regra-A', undefined, 404],
    ['POST', '/sendcontextmessage', { Receivers: '11900000000', ContextRuleName: 'Regra-A' }, 400],
    ['GET', '/contactgroup/Grupo-A', undefined, 404],
    ['PUT', '/contactgroup', { GroupName: 'Grupo-A', Action: 'add_number', ContactPhone: '11900000000' }, 404],
    ['DELETE', '/contactgroup/Grupo-A', undefined, 404],
    ['POST', '/sendcontactmessage', { GroupName: 'Grupo-A', Content: 'x' }, 400],
    ['GET', '/blacklist/11912349999', undefined, 404],
    ['DELETE', '/blacklist/11912349999', undefined, 404],
    ['POST', '/cancelrequest', { RequestUniqueId: scheduled }, 404],
    ['GET', `/credits/${A.accountId}`, undefined, 404],
    ['PUT', `/credits/${A.accountId}?Amount=1`, undefined, 404],
    ['GET', `/balancehistory?id=${A.accountId}`, undefined, 404],
  ];
  for (const [method, path, body, status] of attempts) {
    const res = await legacy(gw, B.key, method as 'GET', path, body);
    assert.equal(res.status, status, `${method} ${path}: ${res.raw}`);
    // (B's own input may be echoed; A's data may not.)
    assert.ok(!res.raw.includes('A-secret') && !res.raw.includes('5511912340000'), `${method} ${path} leaked: ${res.raw}`);
  }
  for (const report of ['/detailedreporting', '/replyreporting', '/contextreporting', '/consolidatedreporting']) {
    const res = await legacy(gw, B.key, 'GET', `${report}?RequestUniqueId=${scheduled}`);
    assert.deepEqual(res.body.Object, [], report);
  }
  assert.deepEqual(await stateOfA(), before);
});
