import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { freshDatabase, type TestDatabase } from './helpers.ts';
import { until } from './process.ts';
import { loadConfig } from '../src/config.ts';
import { createCore, type Core } from '../src/core.ts';
import { buildApp } from '../src/app.ts';

/**
 * The access log (src/http/access-log.ts): one line per request with its
 * method, route pattern, status, duration, account and request id, read
 * from the pino output itself; no key, token or query string in it.
 */

const TOKEN = 'access-log-operator-token-000001';
const SECRET = 's3cr3t-in-the-query-string';
let db: TestDatabase;
let core: Core;
let app: FastifyInstance;
after(async () => {
  await app?.close();
  await core?.close();
  await db?.drop();
});

test('one line per request: method, route pattern, status, duration, account id, request id; never a secret', async () => {
  const output: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  db = await freshDatabase();
  const config = loadConfig({ ...db.env, GATEWAY_DEMO: 'false', LOG_LEVEL: 'info' });
  core = await createCore(config, pino({ level: 'info' }, sink), { dispatch: false, ...(db.pgSchema ? { pgSchema: db.pgSchema } : {}) });
  app = await buildApp(core, { adminToken: TOKEN });
  const operator = { authorization: `Bearer ${TOKEN}` };

  const account = (await app.inject({ method: 'POST', url: '/admin/accounts', headers: operator, payload: { name: 'Logged', balance: 10 } })).json();
  const key = (await app.inject({ method: 'POST', url: `/admin/accounts/${account.id}/api-keys`, headers: operator, payload: {} })).json().key as string;
  const before = output.length;

  const balance = await app.inject({ method: 'GET', url: '/balance', headers: { 'x-api-key': key } });
  assert.equal(balance.statusCode, 200);
  const legacy = await app.inject({ method: 'GET', url: '/api/v2/credits', headers: { 'auth-key': key } });
  assert.equal(legacy.statusCode, 200);
  const wrong = await app.inject({ method: 'GET', url: `/balance?apiKey=${key}&token=${SECRET}`, headers: { 'x-api-key': 'not-a-key' } });
  assert.equal(wrong.statusCode, 401);
  // No route: the gateway asks for a key first (401).
  const nowhere = await app.inject({ method: 'GET', url: `/nowhere/${key}?secret=${SECRET}` });
  assert.equal(nowhere.statusCode, 401);
  const admin = await app.inject({ method: 'GET', url: `/admin/accounts/${account.id}`, headers: operator });
  assert.equal(admin.statusCode, 200);
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200);

  // onResponse runs once the answer is out: wait for the six lines.
  const requests = () =>
    output
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((e) => e.msg === 'request');
  const lines = await until('six access log lines', requests, (l) => l.length >= 6, 5000);
  const strip = ({ method, route, status, accountId, operator }: Record<string, unknown>) => ({ method, route, status, accountId, operator });
  assert.deepEqual(lines.map(strip), [
    { method: 'GET', route: '/balance', status: 200, accountId: account.id, operator: undefined },
    { method: 'GET', route: '/api/v2/credits', status: 200, accountId: account.id, operator: undefined },
    { method: 'GET', route: '/balance', status: 401, accountId: undefined, operator: undefined },
    { method: 'GET', route: null, status: 401, accountId: undefined, operator: undefined },
    { method: 'GET', route: '/admin/accounts/:id', status: 200, accountId: undefined, operator: true },
    { method: 'GET', route: '/healthz', status: 200, accountId: undefined, operator: undefined },
  ]);
  for (const line of lines) {
    assert.equal(line.level, 30, 'info');
    assert.equal(typeof line.durationMs, 'number');
    assert.ok(line.durationMs >= 0);
    assert.match(line.reqId, /^[0-9a-f-]{36}$/, 'the request id');
  }
  assert.equal(new Set(lines.map((l) => l.reqId)).size, 6, 'one id per request');

  const everything = output.join('\n');
  assert.ok(!everything.includes(key), 'the API key appears nowhere');
  assert.ok(!everything.includes(TOKEN), 'nor the operator token');
  assert.ok(!everything.includes(SECRET), 'nor a query string');
  assert.ok(!everything.includes('nowhere'), 'nor the path of an unmatched request');
  assert.ok(!/incoming request|request completed/.test(everything), "Fastify's own request lines are off");
});
