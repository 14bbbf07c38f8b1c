import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from './helpers.ts';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

test('a malformed URL gets the envelope of the interface it was meant for', async () => {
  const legacy = await gw.app.inject({ url: '/api/v2/credits/%' });
  assert.equal(legacy.statusCode, 400);
  assert.equal(legacy.json().Success, false);
  const gateway = await gw.app.inject({ url: '/reports/messages/sent/%zz' });
  assert.equal(gateway.statusCode, 400);
  assert.equal(gateway.json().hasError, true);
  const admin = await gw.app.inject({ url: '/admin/accounts/%' });
  assert.equal(admin.statusCode, 400);
  assert.match(admin.json().error, /Malformed/);
});

test('health, readiness, OpenAPI and the rendered docs', async () => {
  assert.deepEqual((await gw.app.inject({ url: '/healthz' })).json(), { status: 'ok' });
  const ready = await gw.app.inject({ url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  assert.equal(ready.json().carriers.simulator, true);
  const doc = (await gw.app.inject({ url: '/openapi.json' })).json();
  assert.equal(doc.openapi, '3.0.3');
  for (const path of [
    '/messages/sms/send',
    '/messages/sms/batch/send',
    '/reports/messages/sent',
    '/reports/messages/received',
    '/api/reports/messages/requests',
    '/reports/messages/requests',
    '/api/messages/request/cancel',
    '/messages/request/cancel',
    '/contacts',
    '/routes',
    '/balance',
  ]) {
    assert.ok(doc.paths[path], `${path} is documented`);
  }
  const send = doc.paths['/messages/sms/send'].post;
  assert.ok(send.requestBody.content['application/json'].schema.properties.receivers, 'the send body schema is in the document');
  const docs = await gw.app.inject({ url: '/docs/' });
  assert.equal(docs.statusCode, 200);
  assert.match(docs.headers['content-type'] as string, /text\/html/);
});

test('no gateway key on a gateway path: 401 in the envelope', async () => {
  const res = await gw.call(null, 'GET', '/balance');
  assert.equal(res.status, 401);
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
});
