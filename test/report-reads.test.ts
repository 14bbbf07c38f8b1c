import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { AccountLanes } from '../src/common/account-lanes.ts';
import { startGateway, type Customer, type TestGateway } from './helpers.ts';
import { legacy } from './legacy/legacy-helpers.ts';

/*
 * Reports read on a connection of their own (docs/architecture.md
 * "Reports"): however long one account's report scans, the queue and the
 * connections every account's sends need are not the ones it waits in or
 * holds; and accounts take turns on it.
 */

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway({}, { dispatch: false });
  alice = await gw.customer();
});
after(() => gw.close());

test('reports answer while every connection sends need is held, and show what was accepted just before', async () => {
  const sent = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: ['5511999990001'], message: 'before the hold' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  // SQLite: the one writer connection, in a write transaction; PostgreSQL: all 10 of its pool.
  const held = gw.core.db.dialect === 'sqlite' ? 1 : 10;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let begun = 0;
  const holders = Array.from({ length: held }, () =>
    gw.core.db.kysely.transaction().execute(async (tx) => {
      await sql`select 1`.execute(tx);
      begun++;
      await gate;
    }),
  );
  try {
    while (begun < held) await new Promise((r) => setTimeout(r, 5));
    const reads = Promise.all([
      gw.call(alice.key, 'GET', '/reports/messages/sent'),
      gw.call(alice.key, 'GET', '/reports/messages/requests'),
      legacy(gw, alice.key, 'GET', '/detailedreporting'),
    ]);
    // Only a bound on a failure: before, these waited for the holders to end.
    const stuck = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 10_000).unref());
    const answers = await Promise.race([reads, stuck]);
    assert.notEqual(answers, 'stuck', 'the reports waited for the connection sends use');
    const [report, requests, detailed] = answers as Awaited<typeof reads>;
    assert.equal(report.status, 200);
    assert.deepEqual(
      report.body.object.map((m: { content: string }) => m.content),
      ['before the hold'],
    );
    assert.equal(requests.status, 200);
    assert.equal(detailed.status, 200, detailed.raw);
  } finally {
    release();
    await Promise.all(holders);
  }
});

/** A task that runs until told to end. */
function gated() {
  let end: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { end, work: () => done };
}

test('accounts take turns for the slots: a dozen of one account hold another back by one, not by the dozen', async () => {
  const lanes = new AccountLanes(1);
  const order: string[] = [];
  const tasks = new Map<string, ReturnType<typeof gated>>();
  const submit = (account: number, name: string) => {
    const task = gated();
    tasks.set(name, task);
    return lanes.run(account, async () => {
      order.push(name);
      await task.work();
    });
  };
  const runs = [...Array.from({ length: 12 }, (_, i) => submit(1, `a${i}`)), submit(2, 'b0'), submit(2, 'b1'), submit(3, 'c0')];
  const step = async () => {
    await new Promise((r) => setImmediate(r));
    tasks.get(order.at(-1) as string)?.end();
  };
  while (order.length < 15) await step();
  await step();
  await Promise.all(runs);
  assert.deepEqual(
    order.slice(0, 7),
    ['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3'],
    'after the one running, each account in turn, the one served longest ago first',
  );
  assert.equal(order.length, 15);
});

test('with several slots, one account alone may use them all; a newcomer takes the next free one', async () => {
  const lanes = new AccountLanes(3);
  let running = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const started: string[] = [];
  const submit = (account: number, name: string) =>
    lanes.run(account, async () => {
      started.push(name);
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    });
  const runs = Array.from({ length: 6 }, (_, i) => submit(1, `a${i}`));
  await new Promise((r) => setImmediate(r));
  assert.equal(started.length, 3, 'three slots, three of the one account running');
  runs.push(submit(2, 'b0'));
  gates.shift()?.();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(started[3], 'b0', 'the freed slot goes to the account that waited for its turn');
  while (started.length < 7 || running > 0) {
    gates.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(runs);
  assert.equal(most, 3);
});
