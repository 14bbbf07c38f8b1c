import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy, legacyApp } from './legacy-helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 1000 });
});
after(() => gw.close());

test('unknown path: 404 in the envelope, with or without a key', async () => {
  for (const key of [alice.key, null]) {
    const res = await legacy(gw, key, 'POST', '/sendsms', { Receivers: '11999998888', Content: 'x' });
    assert.equal(res.status, 404);
    assert.equal(res.body.Success, false);
    assert.equal(res.body.Object, null);
    assert.match(res.body.Message, /não existe/);
  }
});

test('known path, wrong method: 405 in the envelope with Allow', async () => {
  const res = await legacy(gw, alice.key, 'DELETE', '/send');
  assert.equal(res.status, 405);
  assert.deepEqual({ ...res.body, Message: '' }, { Success: false, Object: null, Message: '' });
  assert.equal(res.headers.allow, 'GET, POST');
  assert.equal((await legacy(gw, alice.key, 'GET', '/sendcontextmessage')).status, 405);
  assert.equal((await legacy(gw, alice.key, 'PATCH', '/credits/12')).status, 405);
  assert.equal((await legacy(gw, null, 'PUT', '/cancelrequest')).status, 405);
});

test('429 in the envelope when a key sends too many requests', async () => {
  const app: FastifyInstance = await legacyApp(gw.core, { rateLimit: { capacity: 2, perSecond: 0.001 } });
  try {
    assert.equal((await legacy(app, alice.key, 'GET', '/credits')).status, 200);
    assert.equal((await legacy(app, alice.key, 'GET', '/credits')).status, 200);
    const limited = await legacy(app, alice.key, 'GET', '/credits');
    assert.equal(limited.status, 429);
    assert.deepEqual({ ...limited.body, Message: '' }, { Success: false, Object: null, Message: '' });
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const bob = await gw.customer();
    assert.equal((await legacy(app, bob.key, 'GET', '/credits')).status, 200);
  } finally {
    await app.close();
  }
});

test('JSON is read whatever the Content-Type, or without one; form fields too', async () => {
  const body = JSON.stringify({ Receivers: '11999998888', Content: 'x' });
  for (const type of ['text/plain', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded']) {
    const res = await legacy(gw, alice.key, 'POST', '/send', body, { 'content-type': type });
    assert.equal(res.status, 200, `${type}: ${res.raw}`);
  }
  const form = await legacy(gw, alice.key, 'POST', '/send', 'receivers=11999998888&content=Ol%C3%A1', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(form.status, 200, form.raw);
  const hostile = await legacy(gw, alice.key, 'POST', '/send', '__proto__[x]=1&constructor=2&Receivers=11999998888&Content=x', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  assert.equal(hostile.status, 200, hostile.raw);
  assert.equal(({} as Record<string, unknown>).x, undefined);
  const none = await gw.app.inject({ method: 'POST', url: '/api/v2/send', headers: { 'auth-key': alice.key }, payload: Buffer.from(body) });
  assert.equal(none.statusCode, 200, none.body);
});

test('the legacy operations are in the OpenAPI document', async () => {
  const doc = JSON.parse((await gw.app.inject({ method: 'GET', url: '/openapi.json' })).body);
  for (const path of [
    '/api/v2/send',
    '/api/v2/sendcontextmessage',
    '/api/v2/sendcontactmessage',
    '/api/v2/tokenmanager',
    '/api/v2/credits/{id}',
    '/api/v2/detailedreporting',
  ]) {
    assert.ok(doc.paths[path], path);
  }
  assert.ok(doc.paths['/api/v2/send'].post.parameters.some((p: any) => p.name === 'auth-key'));
  // The key is the legacy security scheme (header auth-key), which Swagger UI sends on "Try it out".
  assert.deepEqual(doc.paths['/api/v2/send'].post.security, [{ legacyAuthKey: [] }]);
  assert.deepEqual(doc.components.securitySchemes.legacyAuthKey, {
    type: 'apiKey',
    in: 'header',
    name: 'auth-key',
    description: doc.components.securitySchemes.legacyAuthKey.description,
  });
});

test('nothing a client sends produces a 500', async () => {
  const routes: [string, string][] = [
    ['POST', '/send'],
    ['GET', '/send'],
    ['POST', '/schedule'],
    ['POST', '/sendcontextmessage'],
    ['POST', '/schedulecontextmessage'],
    ['POST', '/sendcontactmessage'],
    ['POST', '/schedulecontactmessage'],
    ['POST', '/cancelrequest'],
    ['POST', '/tokenmanager'],
    ['PUT', '/tokenmanager'],
    ['GET', '/credits'],
    ['GET', '/credits/x'],
    ['PUT', '/credits/1'],
    ['GET', '/balancehistory'],
    ['POST', '/contactgroup'],
    ['GET', '/contactgroup/x'],
    ['PUT', '/contactgroup'],
    ['DELETE', '/contactgroup'],
    ['POST', '/blacklist'],
    ['GET', '/blacklist/x'],
    ['DELETE', '/blacklist'],
    ['POST', '/sendingcontextrules'],
    ['GET', '/sendingcontextrules/x'],
    ['DELETE', '/sendingcontextrules'],
    ['POST', '/detailedreporting'],
    ['POST', '/replyreporting'],
    ['POST', '/contextreporting'],
    ['POST', '/consolidatedreporting'],
  ];
  const long = 'x'.repeat(30_000);
  const payloads: unknown[] = [
    undefined,
    'null',
    '[]',
    '"text"',
    '123',
    'true',
    '{',
    '{"__proto__":{"a":1}}',
    {},
    { Receivers: null, Content: null },
    { Receivers: {}, Content: [] },
    { Receivers: [[1]], Content: { a: 1 } },
    { Receivers: '1'.repeat(5000), Content: long },
    { ScheduleDate: '9999-99-99 99:99:99', Receivers: '11999998888', Content: 'x' },
    { ScheduleDate: 12, GroupName: 1, ContextRuleName: true, Receivers: 11999998888, Content: 5 },
    { RequestUniqueId: [] },
    { PhoneNumber: -1, ExpireInMinutes: 1e308 },
    { TokenCode: {}, PhoneNumber: [] },
    { Amount: 'NaN' },
    { Amount: 1e300 },
    { Name: long, Message: long },
    { Action: 'add_number', ContactPhone: {}, GroupName: [] },
    { StartDate: '2024-13-45', EndDate: 'x', Delivered: [], Group: {}, Skip: -1, Limit: 1e9 },
  ];
  const queries = [
    '',
    '?__proto__=x&constructor=y&Receivers=11999998888',
    '?id=',
    '?id=%27%3B--',
    '?StartDate=0000-00-00',
    '?Amount=1e999',
    '?Limit=abc&Skip=-5',
    '?Receivers=1&Content=&Sender=',
  ];
  for (const [method, path] of routes) {
    for (const payload of method === 'GET' ? [undefined] : payloads) {
      for (const query of method === 'GET' || payload === undefined ? queries : ['']) {
        const res = await legacy(
          gw,
          alice.key,
          method as 'GET',
          `${path}${query}`,
          payload,
          typeof payload === 'string' ? { 'content-type': 'application/json' } : {},
        );
        assert.ok(res.status < 500, `${method} ${path}${query} ${JSON.stringify(payload)} -> ${res.status} ${res.raw}`);
        if (res.status !== 401) assert.deepEqual(Object.keys(res.body), ['Success', 'Object', 'Message'], `${method} ${path} ${res.raw}`);
      }
    }
  }
});
