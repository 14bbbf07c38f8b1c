import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Database } from '../src/db/tables.ts';
import { blockPhone } from '../src/contacts/blocklist.ts';
import { ADMIN_TOKEN, startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer();
});
after(() => gw.close());

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Scrapes /metrics of a gateway with the operator token. */
async function scrape(g: TestGateway = gw) {
  const res = await g.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], PROMETHEUS_TEXT);
  const samples = parse(res.body);
  /** The value of the one sample with exactly these labels, or undefined. */
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = samples.filter((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()));
    assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} appears ${found.length} times`);
    return found[0]?.value;
  };
  return { text: res.body, samples, value };
}

test('GET /metrics needs the operator token: 401 {error} without it or with a wrong one', async () => {
  const wrong = [
    null,
    '',
    'Bearer',
    'Bearer ',
    `Bearer ${ADMIN_TOKEN}x`,
    `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
    `Bearer ${ADMIN_TOKEN.toUpperCase()}`,
    ADMIN_TOKEN,
    `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
    `Bearer ${alice.key}`,
    `Bearer ${'x'.repeat(10_000)}`,
  ];
  for (const authorization of wrong) {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: authorization === null ? {} : { authorization } });
    assert.equal(res.statusCode, 401, `${authorization}: ${res.body}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['error']);
    assert.match(body.error, /Operator token required/);
    assert.ok(!res.body.includes('gateway_'), 'no figures without the token');
  }
  // An API key is not the operator token either.
  assert.equal((await gw.call(alice.key, 'GET', '/metrics')).status, 401);
});

test('GET /metrics with the token: 200, Prometheus text format, process and gateway metrics', async () => {
  const { text, value, samples } = await scrape();
  assert.ok(text.endsWith('\n'));
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    assert.ok(
      samples.some((s) => s.name === name),
      `default metric ${name}`,
    );
  }
  for (const name of [
    'gateway_http_requests_total',
    'gateway_http_request_duration_seconds',
    'gateway_messages_accepted_total',
    'gateway_carrier_submits_total',
    'gateway_carrier_receipts_total',
    'gateway_inbound_messages_total',
    'gateway_carrier_ready',
    'gateway_carrier_free_window',
    'gateway_outbox_messages',
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'), name);
  }
  assert.equal(value('gateway_carrier_ready', { connector: 'simulator' }), 1);
  assert.equal(value('gateway_carrier_free_window', { connector: 'simulator' }), gw.core.simulator.capacity());
  // Known label sets start at 0.
  assert.equal(value('gateway_messages_accepted_total', { channel: 'RCS' }), 0);
  assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'failed' }), 0);
  assert.equal(value('gateway_inbound_messages_total', { connector: 'simulator' }), 0);
  // The operator calls of gw.customer(), by route template.
  assert.equal(value('gateway_http_requests_total', { method: 'POST', route: '/admin/accounts', status: '201' }), 1);
  assert.equal(value('gateway_http_requests_total', { method: 'POST', route: '/admin/accounts/:id/routes', status: '204' }), 1);
  assert.ok(!text.includes(`route="/admin/accounts/${alice.accountId}/routes"`), 'never the raw URL');
});

test('/metrics is in the OpenAPI document, behind the operator token', async () => {
  const res = await gw.call(null, 'GET', '/openapi.json');
  assert.equal(res.status, 200);
  const metrics = res.body.paths['/metrics'].get;
  assert.deepEqual(metrics.security, [{ operatorToken: [] }]);
  assert.ok(metrics.responses['200'].content['text/plain']);
  assert.ok(metrics.responses['401']);
});

test('one SMS sent and delivered: accepted, HTTP, submit and receipt counters, carrier gauges, empty outbox', async () => {
  // A gateway of its own, so that every count is exact.
  const own = await startGateway();
  try {
    const customer = await own.customer();
    const res = await own.call(customer.key, 'POST', '/messages/sms/send', {
      receivers: [5511999998888],
      message: 'Hello from the gateway!',
      route: customer.routeId,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const requestId = res.headers['x-request-id'] as string;
    await own.eventually(
      () => own.call(customer.key, 'GET', `/reports/messages/sent?requestId=${requestId}`),
      (r) => r.body.object?.length === 1 && r.body.object[0].status === 'DELIVERED',
      'the message delivered',
    );

    const { text, value } = await scrape(own);
    assert.match(text, /^gateway_messages_accepted_total\{channel="SMS"\} 1$/m);
    assert.equal(value('gateway_messages_accepted_total', { channel: 'SMS' }), 1);
    assert.equal(value('gateway_messages_accepted_total', { channel: 'RCS' }), 0);
    assert.equal(value('gateway_http_requests_total', { method: 'POST', route: '/messages/sms/send', status: '200' }), 1);
    assert.equal(value('gateway_http_request_duration_seconds_count', { method: 'POST', route: '/messages/sms/send' }), 1);
    assert.equal(value('gateway_http_request_duration_seconds_bucket', { method: 'POST', route: '/messages/sms/send', le: '+Inf' }), 1);
    assert.ok((value('gateway_http_request_duration_seconds_sum', { method: 'POST', route: '/messages/sms/send' }) ?? -1) > 0);
    assert.ok(
      (value('gateway_http_requests_total', { method: 'GET', route: '/reports/messages/sent', status: '200' }) ?? 0) >= 1,
      'the report polls, by template',
    );
    assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'accepted' }), 1);
    assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'retry' }), 0);
    assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'failed' }), 0);
    assert.equal(value('gateway_carrier_receipts_total', { connector: 'simulator', status: 'DELIVERED' }), 1);
    assert.equal(value('gateway_carrier_receipts_total', { connector: 'simulator', status: 'UNDELIVERED' }), 0);
    assert.match(text, /^gateway_carrier_ready\{connector="simulator"\} 1$/m);
    assert.equal(value('gateway_carrier_free_window', { connector: 'simulator' }), own.core.simulator.capacity());
    for (const status of ['QUEUED', 'SCHEDULED', 'SENDING']) assert.equal(value('gateway_outbox_messages', { connector: 'simulator', status }), 0, status);

    // A reply from the phone.
    assert.equal((await own.admin('POST', '/admin/simulator/inbound', { from: '5511999998888', text: 'thanks' })).status, 202);
    await own.eventually(
      () => own.call(customer.key, 'GET', '/reports/messages/received'),
      (r) => r.body.totalRecords === 1,
      'the reply',
    );
    assert.equal((await scrape(own)).value('gateway_inbound_messages_total', { connector: 'simulator' }), 1);
  } finally {
    await own.close();
  }
});

test('refused and blocked messages: a failed submit and a receipt per outcome; blocked receivers are not accepted', async () => {
  const own = await startGateway();
  try {
    const customer = await own.customer();
    assert.equal(await blockPhone(own.core.db.kysely, customer.accountId, '5511987659999'), true);
    // ...0001 undelivered, ...0003 rejected by the carrier (a failed submit), ...7777 delivered, ...9999 on the blocklist.
    const res = await own.call(customer.key, 'POST', '/messages/sms/send', {
      receivers: ['5511987650001', '5511987650003', '5511987657777', '5511987659999'],
      message: 'x',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.message, /^Accepted 3 message\(s\)/);
    const requestId = res.headers['x-request-id'] as string;
    await own.eventually(
      () => own.call(customer.key, 'GET', `/reports/messages/sent?requestId=${requestId}`),
      (r) => r.body.object?.length === 4 && r.body.object.every((m: any) => ['DELIVERED', 'UNDELIVERED', 'FAILED', 'BLOCKED'].includes(m.status)),
      'final statuses',
    );
    const { value } = await scrape(own);
    assert.equal(value('gateway_messages_accepted_total', { channel: 'SMS' }), 3);
    assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'accepted' }), 2);
    assert.equal(value('gateway_carrier_submits_total', { connector: 'simulator', result: 'failed' }), 1);
    assert.equal(value('gateway_carrier_receipts_total', { connector: 'simulator', status: 'DELIVERED' }), 1);
    assert.equal(value('gateway_carrier_receipts_total', { connector: 'simulator', status: 'UNDELIVERED' }), 1);
  } finally {
    await own.close();
  }
});

test('a message scheduled in the future is in the outbox gauge, database-wide; counters are per process', async () => {
  const later = new Date(Date.now() + 86_400_000).toISOString();
  const res = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [5511999998888], message: 'later', scheduleDate: later });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await gw.core.settle();
  const { text, value } = await scrape();
  assert.match(text, /^gateway_outbox_messages\{connector="simulator",status="SCHEDULED"\} 1$/m);
  assert.equal(value('gateway_outbox_messages', { connector: 'simulator', status: 'QUEUED' }), 0);
  assert.equal(value('gateway_outbox_messages', { connector: 'simulator', status: 'SENDING' }), 0);
  assert.equal(value('gateway_messages_accepted_total', { channel: 'SMS' }), 1, 'a scheduled message is accepted too');

  // A second process on the same database (no dispatcher, so its carrier is not started):
  // the same outbox, its own counters.
  const second = await startGateway({}, { dispatch: false }, gw.db);
  try {
    const other = await scrape(second);
    assert.equal(other.value('gateway_outbox_messages', { connector: 'simulator', status: 'SCHEDULED' }), 1);
    assert.equal(other.value('gateway_messages_accepted_total', { channel: 'SMS' }), 0);
    assert.equal(other.value('gateway_carrier_ready', { connector: 'simulator' }), 0);
    assert.equal(other.value('gateway_http_requests_total', { method: 'POST', route: '/messages/sms/send', status: '200' }), undefined);
  } finally {
    await second.close();
  }

  assert.equal((await gw.call(alice.key, 'POST', '/messages/request/cancel', { requestId: res.headers['x-request-id'] })).status, 200);
  assert.equal((await scrape()).value('gateway_outbox_messages', { connector: 'simulator', status: 'SCHEDULED' }), 0);
});

test('requests to unknown paths are counted as route "unmatched", never by their path', async () => {
  const before = await scrape();
  const unmatched = (s: Awaited<ReturnType<typeof scrape>>, method: string, status: string) =>
    s.value('gateway_http_requests_total', { method, route: 'unmatched', status }) ?? 0;
  assert.equal((await gw.call(alice.key, 'GET', '/no/such/path/5511999998888')).status, 404);
  assert.equal((await gw.call(alice.key, 'GET', '/no/such/path/5511999998889?x=1')).status, 404);
  assert.equal((await gw.admin('GET', '/admin/no-such-operation')).status, 404);
  assert.equal((await gw.call(null, 'DELETE', '/api/v2/no-such-thing')).status, 404);
  const after = await scrape();
  assert.equal(unmatched(after, 'GET', '404') - unmatched(before, 'GET', '404'), 3);
  assert.equal(unmatched(after, 'DELETE', '404') - unmatched(before, 'DELETE', '404'), 1);
  assert.equal(
    after.value('gateway_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched' }),
    unmatched(after, 'GET', '404') + unmatched(after, 'GET', '401'),
  );
  for (const raw of ['no/such', 'no-such', '5511999998889']) assert.ok(!after.text.includes(raw), `${raw} must not appear in the metrics`);
  // Every route label is a template or "unmatched".
  const routes = new Set(after.samples.filter((s) => s.name.startsWith('gateway_http_')).map((s) => s.labels.route));
  for (const route of routes) assert.ok(route === 'unmatched' || (route?.startsWith('/') && !/\/\d+(\/|$)/.test(route)), `route label ${route}`);
});

test('the scrape answers when the outbox cannot be counted: the gauge is left out, a warning logged', async () => {
  const db = gw.core.db;
  const working = db.kysely;
  const warnings: unknown[][] = [];
  const warn = gw.core.log.warn;
  db.kysely = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => ({
        init: async () => {},
        acquireConnection: async () => {
          throw new Error('database down');
        },
        beginTransaction: async () => {},
        commitTransaction: async () => {},
        rollbackTransaction: async () => {},
        releaseConnection: async () => {},
        destroy: async () => {},
      }),
      createIntrospector: (k) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  gw.core.log.warn = ((...args: unknown[]) => {
    warnings.push(args);
  }) as typeof warn;
  try {
    const { text, value, samples } = await scrape();
    assert.ok(!samples.some((s) => s.name === 'gateway_outbox_messages'), 'no outbox samples');
    assert.equal(value('gateway_carrier_ready', { connector: 'simulator' }), 1);
    assert.ok(text.includes('gateway_http_requests_total'));
    // (Other loops of the core may log too while the database is swapped: only the metrics' warning is looked at.)
    const outbox = warnings.filter((w) => String(w[1]).includes('gateway_outbox_messages'));
    assert.equal(outbox.length, 1, JSON.stringify(warnings));
    assert.match(String((outbox[0]?.[0] as { err: Error } | undefined)?.err.message), /database down/);
  } finally {
    db.kysely = working;
    gw.core.log.warn = warn;
  }
  assert.equal((await scrape()).value('gateway_outbox_messages', { connector: 'simulator', status: 'SCHEDULED' }), 0, 'back once the database answers');
});
