import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Carrier, CarrierEvents, OutboundMessage, SubmitResult } from '../src/carriers/carrier.ts';
import { chooseLeg, receiverPick, type Leg } from '../src/routing/legs.ts';
import { acceptJob, type AcceptInput, type AcceptResult, type Handoff } from '../src/messaging/accept.ts';
import { startGateway, type TestGateway } from './helpers.ts';

/*
 * Routing legs (docs/carriers.md, "Routing legs"): the selection function,
 * messages landing on the connection their leg names, the operator API and
 * CLI. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */

/** A carrier that accepts every message at once and remembers the receivers it was given. */
class RecordingCarrier implements Carrier {
  readonly submitted: string[] = [];
  constructor(
    readonly name: string,
    readonly channels: ReadonlyArray<'SMS' | 'RCS'> = ['SMS'],
  ) {}
  async start(_events: CarrierEvents): Promise<void> {}
  async stop(): Promise<void> {}
  ready(): boolean {
    return true;
  }
  capacity(): number {
    return 1000;
  }
  async submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void> {
    for (const m of messages) {
      this.submitted.push(m.receiver);
      onResult(m.id, { ok: true, carrierIds: [`${this.name}-${m.id}`] });
    }
  }
}

const leg = (connector: string, prefixes: string[], priority: number, weight = 1): Leg => ({ connector, prefixes, priority, weight });
const receiversFrom = (start: number, n: number) => Array.from({ length: n }, (_, i) => String(start + i));

test('chooseLeg: matching prefixes, the first matching priority, null without a match', () => {
  const legs = [leg('sp', ['5511', '55219'], 1), leg('rest-br', ['55'], 2), leg('any', [], 3)];
  assert.equal(chooseLeg(legs, '5511999998888', 0.5)?.connector, 'sp');
  assert.equal(chooseLeg(legs, '5521999998888', 0.5)?.connector, 'sp');
  assert.equal(chooseLeg(legs, '5521899998888', 0.5)?.connector, 'rest-br');
  assert.equal(chooseLeg(legs, '14155550100', 0.5)?.connector, 'any');
  // Priority, not list order nor prefix length, decides.
  assert.equal(chooseLeg([leg('long', ['55119'], 2), leg('short', ['55'], 1)], '5511999998888', 0)?.connector, 'short');
  assert.equal(chooseLeg([leg('br', ['55'], 1)], '14155550100', 0.3), null);
  assert.equal(chooseLeg([], '5511999998888', 0.3), null);
  // Weights lay end to end: [0, 1) for a, [1, 4) for b.
  const split = [leg('a', [], 1, 1), leg('b', [], 1, 3), leg('c', [], 2, 100)];
  assert.equal(chooseLeg(split, '5511', 0)?.connector, 'a');
  assert.equal(chooseLeg(split, '5511', 0.2499)?.connector, 'a');
  assert.equal(chooseLeg(split, '5511', 0.25)?.connector, 'b');
  assert.equal(chooseLeg(split, '5511', 0.9999)?.connector, 'b');
});

test('weights split 10,000 receivers within 10% of their shares; a receiver always gets the same leg', () => {
  for (const weights of [
    [1, 1],
    [1, 3],
    [2, 3, 5],
  ]) {
    const legs = weights.map((w, i) => leg(`c${i}`, [], 1, w));
    const total = weights.reduce((a, b) => a + b, 0);
    const counts = new Map<string, number>();
    const receivers = receiversFrom(5511900000000, 10_000);
    for (const r of receivers) {
      const chosen = chooseLeg(legs, r, receiverPick(r))?.connector ?? 'none';
      counts.set(chosen, (counts.get(chosen) ?? 0) + 1);
    }
    weights.forEach((w, i) => {
      const expected = (10_000 * w) / total;
      const got = counts.get(`c${i}`) ?? 0;
      assert.ok(Math.abs(got - expected) <= expected * 0.1, `weights ${weights}: leg ${i} got ${got}, expected ${expected}`);
    });
    for (const r of receivers.slice(0, 100)) assert.equal(receiverPick(r), receiverPick(r));
  }
  for (const r of receiversFrom(5511900000000, 1000)) {
    const p = receiverPick(r);
    assert.ok(p >= 0 && p < 1);
  }
});

let gw: TestGateway;
const alpha = new RecordingCarrier('alpha');
const beta = new RecordingCarrier('beta');
const rcsOnly = new RecordingCarrier('rcs-only', ['RCS']);

before(async () => {
  gw = await startGateway({ GATEWAY_DEMO: 'false' }, { extraCarriers: [alpha, beta, rcsOnly] });
});
after(async () => gw?.close());

async function send(key: string, route: number, receivers: string[]) {
  const res = await gw.call(key, 'POST', '/messages/sms/send', { receivers: receivers.map(Number), message: 'legs', route });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.hasError, false, JSON.stringify(res.body));
}

/** Waits until every message of the account left the outbox; the connector of each, by receiver. */
async function connectors(accountId: number): Promise<Map<string, string>> {
  const rows = await gw.eventually(
    () => gw.core.db.kysely.selectFrom('messages').select(['id', 'receiver', 'connector', 'status']).where('account_id', '=', accountId).execute(),
    (rows) => rows.every((r) => r.status !== 'QUEUED' && r.status !== 'SENDING'),
    'every message sent',
  );
  return new Map(rows.map((r) => [r.receiver, r.connector]));
}

test('prefixes pick the leg: messages go through its connection; no match: the route connector; the operator sees the connection', async () => {
  const customer = await gw.customer({ balance: 1000 });
  const put = await gw.admin('PUT', `/admin/routes/${customer.routeId}/legs`, {
    legs: [
      { connector: 'alpha', prefixes: ['5511', '552199'] },
      { connector: 'beta', prefixes: ['5521'] },
    ],
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual(put.body, {
    routeId: customer.routeId,
    legs: [
      { connector: 'alpha', prefixes: ['5511', '552199'], priority: 1, weight: 1 },
      { connector: 'beta', prefixes: ['5521'], priority: 2, weight: 1 },
    ],
  });
  assert.deepEqual((await gw.admin('GET', `/admin/routes/${customer.routeId}/legs`)).body, put.body);

  // 552199... matches alpha (priority 1) before beta.
  await send(customer.key, customer.routeId, ['5511988880001', '5521988880002', '5521998880004', '5531988880005']);
  const byReceiver = await connectors(customer.accountId);
  assert.deepEqual(Object.fromEntries(byReceiver), {
    '5511988880001': 'alpha',
    '5521988880002': 'beta',
    '5521998880004': 'alpha',
    '5531988880005': 'simulator',
  });
  assert.ok(alpha.submitted.includes('5511988880001') && alpha.submitted.includes('5521998880004'));
  assert.ok(beta.submitted.includes('5521988880002'));

  // The operator sees the connection of each message; the customer's report still shows the route's name.
  const row = await gw.core.db.kysely.selectFrom('messages').select('id').where('receiver', '=', '5521988880002').executeTakeFirstOrThrow();
  const message = await gw.admin('GET', `/admin/messages/${row.id}`);
  assert.equal(message.status, 200, JSON.stringify(message.body));
  assert.equal(message.body.connector, 'beta');
  assert.equal(message.body.routeId, customer.routeId);
  assert.equal(message.body.receiver, '5521988880002');
  assert.equal(message.body.status, 'SENT');
  const report = await gw.call(customer.key, 'GET', '/reports/messages/sent');
  assert.equal(report.status, 200);
  assert.ok(report.body.object.length >= 4);
  for (const m of report.body.object) assert.equal(m.route, 'SMS Simulator');
  const missing = await gw.admin('GET', '/admin/messages/019ac0e1-4b2a-7c3d-8e9f-0a1b2c3d4e5f');
  assert.equal(missing.status, 404);
  assert.match(missing.body.error, /was not found/);
});

test('equal-priority legs split the receivers by weight, as chooseLeg says; a change applies to the next send', async () => {
  const customer = await gw.customer({ balance: 1000 });
  const legs = [
    { connector: 'alpha', prefixes: [], priority: 1, weight: 1 },
    { connector: 'beta', prefixes: [], priority: 1, weight: 3 },
  ];
  assert.equal((await gw.admin('PUT', `/admin/routes/${customer.routeId}/legs`, { legs })).status, 200);
  const receivers = receiversFrom(5511970000000, 400);
  for (let i = 0; i < receivers.length; i += 100) await send(customer.key, customer.routeId, receivers.slice(i, i + 100));
  const byReceiver = await connectors(customer.accountId);
  const counts = { alpha: 0, beta: 0 };
  for (const r of receivers) {
    const expected = chooseLeg(legs, r, receiverPick(r))?.connector;
    assert.equal(byReceiver.get(r), expected, r);
    counts[expected as 'alpha' | 'beta']++;
  }
  assert.ok(counts.alpha > 60 && counts.beta > 240, JSON.stringify(counts));

  // Replaced: seen by this process's next send at once; an empty list removes them.
  assert.equal((await gw.admin('PUT', `/admin/routes/${customer.routeId}/legs`, { legs: [{ connector: 'alpha' }] })).status, 200);
  await send(customer.key, customer.routeId, ['5511960000001']);
  assert.equal((await connectors(customer.accountId)).get('5511960000001'), 'alpha');
  const cleared = await gw.admin('PUT', `/admin/routes/${customer.routeId}/legs`, { legs: [] });
  assert.deepEqual(cleared.body, { routeId: customer.routeId, legs: [] });
  await send(customer.key, customer.routeId, ['5511960000002']);
  assert.equal((await connectors(customer.accountId)).get('5511960000002'), 'simulator');
});

test('a route without legs sends through its connector, as before', async () => {
  const customer = await gw.customer({ balance: 1000 });
  assert.deepEqual((await gw.admin('GET', `/admin/routes/${customer.routeId}/legs`)).body, { routeId: customer.routeId, legs: [] });
  await send(customer.key, customer.routeId, ['5511950000001', '5521950000002']);
  const byReceiver = await connectors(customer.accountId);
  assert.deepEqual([...byReceiver.values()], ['simulator', 'simulator']);
});

test('PUT legs: 400 naming the problem (operator envelope), 404 for an unknown route', async () => {
  const customer = await gw.customer({ balance: 1000 });
  const url = `/admin/routes/${customer.routeId}/legs`;
  const cases: [unknown, RegExp][] = [
    [{ legs: [{ connector: 'vivo' }] }, /legs\[0\]\.connector: no carrier connection named "vivo"/],
    [{ legs: [{ connector: 'alpha' }, { connector: 'rcs-only' }] }, /legs\[1\]\.connector: connection "rcs-only" does not carry SMS/],
    [{ legs: [{ connector: 'alpha', prefixes: ['55a1'] }] }, /prefixes/],
    [{ legs: [{ connector: 'alpha', prefixes: ['+5511'] }] }, /prefixes/],
    [{ legs: [{ connector: 'alpha', weight: 0 }] }, /weight/],
    [{ legs: [{ connector: 'alpha', weight: 1.5 }] }, /weight/],
    [{ legs: [{ connector: 'alpha', priority: -1 }] }, /priority/],
    [{ legs: [{ connector: 'alpha', extra: 1 }] }, /extra|additional/],
    [{}, /legs/],
  ];
  for (const [body, message] of cases) {
    const res = await gw.admin('PUT', url, body);
    assert.equal(res.status, 400, JSON.stringify({ body, answer: res.body }));
    assert.deepEqual(Object.keys(res.body), ['error']);
    assert.match(res.body.error, message, JSON.stringify(body));
  }
  // Nothing was stored by the refused lists.
  assert.deepEqual((await gw.admin('GET', url)).body.legs, []);
  for (const res of [
    await gw.admin('PUT', '/admin/routes/999999/legs', { legs: [{ connector: 'alpha' }] }),
    await gw.admin('GET', '/admin/routes/999999/legs'),
  ]) {
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'Route 999999 was not found.');
  }
  assert.equal((await gw.admin('GET', '/admin/routes/x/legs')).status, 400);
});

test('CLI route legs: set, show, clear, and refuse a bad leg', () => {
  const env = { ...gw.db.env, GATEWAY_DEMO: 'false' };
  const run = (...args: string[]) => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    return { code: res.status, out: res.stdout, err: res.stderr };
  };
  const route = JSON.parse(run('route', 'create', '--name', 'CLI legs', '--price', '0.05', '--reply-price', '0').out);
  const set = run('route', 'legs', '--route', String(route.id), '--leg', 'simulator:5511,55219', '--leg', 'simulator::3:1', '--json');
  assert.equal(set.code, 0, set.err);
  assert.deepEqual(JSON.parse(set.out).records, [
    { connector: 'simulator', prefixes: ['5511', '55219'], priority: 1, weight: 1 },
    { connector: 'simulator', prefixes: [], priority: 1, weight: 3 },
  ]);
  const shown = run('route', 'legs', '--route', String(route.id));
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, /CONNECTOR\s+PREFIXES\s+PRIORITY\s+WEIGHT/);
  assert.match(shown.out, /simulator\s+5511,55219\s+1\s+1/);
  assert.match(shown.out, /simulator\s+any\s+1\s+3/);
  const bad = run('route', 'legs', '--route', String(route.id), '--leg', 'vivo:5511');
  assert.equal(bad.code, 65);
  assert.match(bad.err, /no carrier connection named "vivo"/);
  const badWeight = run('route', 'legs', '--route', String(route.id), '--leg', 'simulator::x');
  assert.equal(badWeight.code, 65);
  assert.match(badWeight.err, /weight must be a whole number/);
  const cleared = run('route', 'legs', '--route', String(route.id), '--clear', '--json');
  assert.equal(cleared.code, 0, cleared.err);
  assert.deepEqual(JSON.parse(cleared.out).records, []);
  assert.equal(run('route', 'legs', '--route', '999999').code, 65);
});

test('accept with legs: only messages of the offering connection are handed off; a message left queued holds back its receiver on its own connection', async () => {
  const customer = await gw.customer({ balance: 1000 });
  const route = await gw.core.db.kysely.selectFrom('routes').selectAll().where('id', '=', customer.routeId).executeTakeFirstOrThrow();
  const item = (receiver: string, connector: string) => ({ receiver, content: 'legs', segments: 1, tag: null, custom: null, payload: null, connector });
  const input = (items: ReturnType<typeof item>[], handoff?: Handoff): AcceptInput => ({
    accountId: customer.accountId,
    route,
    source: 'gateway',
    content: 'legs',
    tag: null,
    custom: null,
    sender: null,
    scheduleAt: null,
    handoff,
    items,
  });
  // Connections of their own (no carrier runs them): nothing claims these messages while the test looks.
  const offer: Handoff = { connector: 'leg-x', owner: 'test-owner', leaseMs: 60_000, count: 10, holdBack: [] };
  const results = await gw.core.db.run(acceptJob, [
    input([item('5511940000001', 'leg-y')]),
    input([item('5511940000001', 'leg-x'), item('5511940000002', 'leg-y'), item('5511940000003', 'leg-x'), item('5511940000001', 'leg-y')], offer),
  ]);
  const [, offered] = results as AcceptResult[];
  const rows = await gw.core.db.kysely
    .selectFrom('messages')
    .select(['receiver', 'connector', 'status', 'lease_owner'])
    .where('request_id', '=', offered?.requestId ?? '')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.receiver, r.connector, r.status, r.lease_owner]),
    [
      // Its receiver's earlier message waits on leg-y, not on leg-x: handed off.
      ['5511940000001', 'leg-x', 'SENDING', 'test-owner'],
      ['5511940000002', 'leg-y', 'QUEUED', null],
      ['5511940000003', 'leg-x', 'SENDING', 'test-owner'],
      ['5511940000001', 'leg-y', 'QUEUED', null],
    ],
  );
  assert.deepEqual(
    offered?.handedOff.map(([index]) => index),
    [0, 2],
  );
  // These connections have no carrier: out of the way of the other tests' outbox.
  await gw.core.db.kysely.deleteFrom('messages').where('account_id', '=', customer.accountId).execute();
});
