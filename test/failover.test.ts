/**
 * Failover between the legs of a route (docs/carriers.md, "Failover"),
 * against two SMSC simulators over SMPP on loopback: the primary leg's SMSC
 * stopped mid-run, the primary answering a temporary error, and a permanent
 * error that must not fail over. Runs on SQLite, and on PostgreSQL with
 * TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { Status } from '../src/carriers/smpp/smpp-lib.ts';
import { STATUS_CLASSES, statusClass } from '../src/carriers/smpp/status-class.ts';
import { nextLeg } from '../src/routing/failover.ts';
import type { Leg } from '../src/routing/legs.ts';
import { startSmscSimulator, type OutcomeRule, type SmscSimulator } from '../tools/smsc-sim/server.ts';
import { startGateway, type Customer, type TestGateway } from './helpers.ts';

const PASSWORD_ENV = 'FAILOVER_TEST_PASSWORD';
process.env[PASSWORD_ENV] = 'secret1';

const leg = (connector: string, priority: number, prefixes: string[] = [], weight = 1): Leg => ({ connector, prefixes, priority, weight });

test('nextLeg: the matching legs after the one that failed, by priority then order; never back; none after the last', () => {
  const legs = [leg('a', 1), leg('b', 2), leg('c', 3, ['5511']), leg('d', 3)];
  assert.equal(nextLeg(legs, '5521999990000', 'a')?.connector, 'b');
  assert.equal(nextLeg(legs, '5521999990000', 'b')?.connector, 'd');
  assert.equal(nextLeg(legs, '5511999990000', 'b')?.connector === 'c' || nextLeg(legs, '5511999990000', 'b')?.connector === 'd', true);
  assert.equal(nextLeg(legs, '5521999990000', 'd'), null);
  // Not a leg of this receiver (the route's own connector carried it): nowhere to go.
  assert.equal(nextLeg(legs, '5521999990000', 'simulator'), null);
  assert.equal(nextLeg([leg('c', 1, ['5511']), leg('a', 2)], '5521999990000', 'c'), null);
  // Equal priority: the later one in the operator's order; the earlier is never chosen again.
  const equal = [leg('x', 1), leg('y', 1), leg('z', 2)];
  assert.equal(nextLeg(equal, '5521999990000', 'x')?.connector, 'y');
  assert.equal(nextLeg(equal, '5521999990000', 'y')?.connector, 'z');
});

test('the status table: throttling, bind, temporary and permanent answers', () => {
  assert.equal(statusClass(Status.RTHROTTLED), 'throttle');
  assert.equal(statusClass(Status.RMSGQFUL), 'throttle');
  assert.equal(statusClass(Status.RINVBNDSTS), 'bind');
  assert.equal(statusClass(Status.RSYSERR), 'temporary');
  assert.equal(statusClass(Status.RX_T_APPN), 'temporary');
  assert.equal(statusClass(Status.RINVDSTADR), 'permanent');
  assert.equal(statusClass(Status.RSUBMITFAIL), 'permanent');
  assert.equal(statusClass(0x400), 'permanent');
  for (const [code, { class: kind }] of STATUS_CLASSES) assert.notEqual(statusClass(code), 'permanent', `0x${code.toString(16)} ${kind}`);
});

interface Setup {
  primary: SmscSimulator;
  backup: SmscSimulator;
  gw: TestGateway;
  customer: Customer;
  close(): Promise<void>;
}

let current: Setup | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

/** Two simulators, a carriers file naming them `primary` and `backup`, a gateway, and a route whose legs are primary then backup. */
async function setup(primaryRules: OutcomeRule[] = []): Promise<Setup> {
  const primary = await startSmscSimulator({ systemId: 'gwtest', password: 'secret1', receiptDelayMs: 5, rules: primaryRules });
  const backup = await startSmscSimulator({ systemId: 'gwtest', password: 'secret1', receiptDelayMs: 5, rules: [] });
  const dir = mkdtempSync(join(tmpdir(), 'gw-failover-'));
  const file = join(dir, 'carriers.json');
  const connection = (name: string, port: number) => ({
    name,
    host: '127.0.0.1',
    port,
    systemId: 'gwtest',
    passwordEnv: PASSWORD_ENV,
    sourceAddr: 'ACME',
    windowSize: 5,
    reconnectMinMs: 50,
    reconnectMaxMs: 200,
    responseTimeoutMs: 1000,
    failoverAfterMs: 300,
  });
  writeFileSync(file, JSON.stringify({ smpp: [connection('primary', primary.port), connection('backup', backup.port)] }));
  // A lease of 3 s: failover looks every 600 ms. A shorter one (1 s: 500 ms of margin) was let go by its watchdog
  // whenever the gateway's start stalled the event loop that long, and the primary looked down long enough to fail over.
  const gw = await startGateway({ GATEWAY_CARRIERS_FILE: file, GATEWAY_DEMO: 'false', DISPATCH_POLL_MS: '20', CONNECTION_LEASE_MS: '3000' });
  const customer = await gw.customer({ balance: 100_000 });
  const legs = await gw.admin('PUT', `/admin/routes/${customer.routeId}/legs`, {
    legs: [
      { connector: 'primary', priority: 1 },
      { connector: 'backup', priority: 2 },
    ],
  });
  assert.equal(legs.status, 200, JSON.stringify(legs.body));
  return {
    primary,
    backup,
    gw,
    customer,
    close: async () => {
      await gw.close();
      await primary.close().catch(() => {});
      await backup.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function send(s: Setup, receivers: string[], message: string): Promise<void> {
  const res = await s.gw.call(s.customer.key, 'POST', '/messages/sms/send', { receivers: receivers.map(Number), message, route: s.customer.routeId });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** Waits until no message of the customer waits or is in flight; the rows. */
async function settled(s: Setup) {
  return s.gw.eventually(
    () =>
      s.gw.core.db.kysely
        .selectFrom('messages')
        .select(['receiver', 'content', 'status', 'connector', 'moved'])
        .where('account_id', '=', s.customer.accountId)
        .execute(),
    (rows) => rows.every((r) => !['QUEUED', 'SCHEDULED', 'SENDING'].includes(r.status)),
    'every message out of the outbox',
  );
}

const texts = (sim: SmscSimulator, receiver: string) =>
  sim
    .messages()
    .filter((m) => m.receiver === receiver)
    .map((m) => m.text);
const index = (text: string) => Number(text.slice(1));

test("a leg's SMSC stopped mid-run: its traffic moves to the next leg, nothing lost, each receiver's order kept", async () => {
  const s = await setup();
  current = s;
  const receivers = Array.from({ length: 12 }, (_, i) => String(5511970000000 + i));
  const rounds = 24;
  for (let i = 0; i < rounds; i++) {
    if (i === 8) await s.primary.close();
    await send(s, receivers, `m${String(i).padStart(2, '0')}`);
  }
  const rows = await settled(s);
  assert.equal(rows.length, receivers.length * rounds);
  for (const r of rows) assert.ok(r.status === 'SENT' || r.status === 'DELIVERED', `${r.receiver} ${r.content}: ${r.status}`);
  assert.ok(
    rows.some((r) => r.connector === 'backup' && r.moved === 1),
    'some messages were moved to the backup leg',
  );
  for (const receiver of receivers) {
    const first = texts(s.primary, receiver).map(index);
    const second = texts(s.backup, receiver).map(index);
    // Every message reached an SMSC.
    const all = new Set([...first, ...second]);
    for (let i = 0; i < rounds; i++) assert.ok(all.has(i), `${receiver}: m${i} never reached an SMSC (primary ${first}, backup ${second})`);
    // In order on each SMSC, and the backup takes up where the primary stopped (the one in flight at the stop may come twice).
    for (const list of [first, second])
      for (let i = 1; i < list.length; i++) assert.ok((list[i] as number) >= (list[i - 1] as number), `${receiver}: out of order ${list}`);
    if (first.length > 0 && second.length > 0)
      assert.ok((second[0] as number) >= (first[first.length - 1] as number), `${receiver}: primary ${first}, backup ${second}`);
  }
});

test('a temporary error moves the message (and its receiver) to the next leg; a permanent one fails it there', async () => {
  const s = await setup([
    { suffix: '01', submitStatus: Status.RSYSERR },
    { suffix: '02', submitStatus: Status.RINVDSTADR },
  ]);
  current = s;
  await send(s, ['5511960000001'], 'a1');
  await send(s, ['5511960000001'], 'a2');
  await send(s, ['5511960000002'], 'b1');
  await send(s, ['5511960000003'], 'c1');
  const rows = await settled(s);
  const by = (content: string) => rows.find((r) => r.content === content);
  assert.equal(by('a1')?.connector, 'backup');
  assert.equal(by('a1')?.moved, 1);
  assert.equal(by('a2')?.connector, 'backup');
  assert.ok(by('a1')?.status === 'SENT' || by('a1')?.status === 'DELIVERED');
  assert.deepEqual(texts(s.backup, '5511960000001'), ['a1', 'a2']);
  // Permanent: failed on the primary, never offered to the backup, refunded.
  assert.equal(by('b1')?.status, 'FAILED');
  assert.equal(by('b1')?.connector, 'primary');
  assert.deepEqual(texts(s.backup, '5511960000002'), []);
  // Untouched traffic stays on its leg.
  assert.equal(by('c1')?.connector, 'primary');
  assert.deepEqual(texts(s.primary, '5511960000003'), ['c1']);
});
