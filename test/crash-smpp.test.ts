/**
 * kill -9 of a gateway process sending over a real SMPP bind to the SMSC
 * simulator (which journals every submit in arrival order and keeps every
 * receipt until a deliver_sm_resp acknowledges it):
 * - each receiver's messages reach the SMSC in the order they were accepted,
 *   though the dead process held some of them leased (handed off at accept,
 *   queued behind a rate limit in its connection), and none whose carrier
 *   answer the dead process had recorded is sent again (read from the
 *   database after the kill: how many were still unrecorded at that moment
 *   depends on the disk, not on the gateway);
 * - a receipt that arrived but was not written when the process died is not
 *   lost: it was not acknowledged, so the SMSC delivers it again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import type { SmscSimulator } from '../tools/smsc-sim/server.ts';
import { smscWithCarriersFile } from './carriers-file.ts';
import { freshDatabase, type TestDatabase } from './helpers.ts';
import { http, spawnGateway, until, type GatewayProcess } from './process.ts';

const TOKEN = 'crash-smpp-operator-token-0000';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
interface Rig {
  sim: SmscSimulator;
  db: TestDatabase;
  env: Record<string, string>;
  close(): Promise<void>;
}

async function rig(connection: Record<string, unknown>, env: Record<string, string> = {}): Promise<Rig> {
  const smsc = await smscWithCarriersFile(connection);
  const db = await freshDatabase();
  return {
    sim: smsc.sim,
    db,
    env: { ...db.env, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'false', ...smsc.env, ...env },
    close: async () => {
      await smsc.close();
      await db.drop();
    },
  };
}

/** An account with a route on the SMPP connection; its API key and route id. */
async function customer(gw: GatewayProcess): Promise<{ key: string; route: number }> {
  const account = await http(gw.base, 'POST', '/admin/accounts', { name: 'Crash', balance: 1000 }, ADMIN);
  const route = await http(
    gw.base,
    'POST',
    '/admin/routes',
    { displayName: 'SMPP', productName: 'SMS', productId: 1, farePrice: '0.05', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' },
    ADMIN,
  );
  await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, ADMIN);
  const key = (await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, ADMIN)).body.key as string;
  return { key, route: route.body.id as number };
}

test('kill -9 with messages leased in a rate-limited bind: every receiver gets its messages in order, all of them', async () => {
  // 20 submits a second and a small window: most of what is accepted waits, leased, in the dead process's connection.
  // The lease is long: recovering it by waiting for it to run out is what must not happen.
  const r = await rig({ windowSize: 5, maxSubmitsPerSecond: 20 }, { DISPATCH_LEASE_MS: '60000' });
  let gw = await spawnGateway(r.env);
  try {
    const { key, route } = await customer(gw);
    const receivers = [5511987651111, 5511987652222, 5511987653333, 5511987654444, 5511987655555].map(String);
    const perReceiver = 20;
    // One request per sequence number, all receivers in it: accepted in this order.
    for (let n = 1; n <= perReceiver; n++) {
      const res = await http(gw.base, 'POST', '/messages/sms/send', { receivers, message: `seq ${n}`, route }, { 'x-api-key': key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    await until(
      'some submits at the SMSC',
      () => r.sim.stats.submits.length,
      (n) => n >= 10,
    );
    await gw.kill();
    const beforeKill = r.sim.stats.submits.length;
    assert.ok(beforeKill < receivers.length * perReceiver, 'the kill came while messages were still waiting');
    // What the dead process had recorded as sent (its carrier's answer committed): never to be sent again.
    const recorded = await recordedSent(r.db);

    gw = await spawnGateway(r.env);
    const all = await until(
      'every message at the SMSC',
      () => r.sim.messages(),
      (ms) => receivers.every((to) => new Set(ms.filter((m) => m.receiver === to).map((m) => m.text)).size === perReceiver),
      // Far less than the lease: waiting for it would be the bug.
      40_000,
    );
    for (const to of receivers) {
      const seen = all.filter((m) => m.receiver === to).map((m) => Number(m.text.replace('seq ', '')));
      // A message the dead process had submitted without recording it may come again; never one after a later one.
      const firsts = seen.filter((n, i) => seen.indexOf(n) === i);
      assert.deepEqual(
        firsts,
        Array.from({ length: perReceiver }, (_, i) => i + 1),
        `order for ${to}: ${seen.join(',')}`,
      );
      for (let i = 1; i < seen.length; i++) {
        assert.ok(
          (seen[i] ?? 0) >= (seen[i - 1] ?? 0) || seen.indexOf(seen[i] ?? 0) < i,
          `receiver ${to} got ${seen[i]} after ${seen[i - 1]}: ${seen.join(',')}`,
        );
      }
    }
    // Sent twice only what the dead process had submitted without recording the answer (its window, and answers
    // not yet committed when it died); never a message whose answer it had recorded.
    const sentKey = (m: { receiver: string; text: string }) => `${m.receiver}|${m.text}`;
    const twice = all.filter((m, i) => all.findIndex((o) => sentKey(o) === sentKey(m)) !== i).map(sentKey);
    assert.deepEqual(
      twice.filter((k) => recorded.has(k)),
      [],
      'a message recorded as sent was sent again',
    );
    assert.ok(twice.length <= beforeKill - recorded.size, `${twice.length} sent twice, of ${beforeKill - recorded.size} submitted and not recorded`);
  } finally {
    await gw.stop();
    await r.close();
  }
});

/** `receiver|text` of the messages whose carrier answer is recorded (read from the database after the process died). */
async function recordedSent(db: TestDatabase): Promise<Set<string>> {
  const query = "select receiver, content from messages where status not in ('QUEUED', 'SCHEDULED', 'SENDING')";
  let rows: { receiver: string; content: string }[];
  if (db.pgSchema) {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      rows = (await client.query(query.replace('from messages', `from ${db.pgSchema}.messages`))).rows;
    } finally {
      await client.end();
    }
  } else {
    const file = new SQLite(join(db.env.GATEWAY_DATA_DIR ?? '', 'gateway.sqlite'), { readonly: true });
    try {
      rows = file.prepare(query).all() as { receiver: string; content: string }[];
    } finally {
      file.close();
    }
  }
  return new Set(rows.map((r) => `${r.receiver}|${r.content}`));
}

/** Blocks every write to the gateway's messages until released (another connection holding the write lock). */
async function blockWrites(db: TestDatabase): Promise<() => Promise<void>> {
  if (db.pgSchema) {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${db.pgSchema}.messages IN EXCLUSIVE MODE`);
    return async () => {
      await client.query('ROLLBACK');
      await client.end();
    };
  }
  const file = new SQLite(join(db.env.GATEWAY_DATA_DIR ?? '', 'gateway.sqlite'));
  file.exec('BEGIN IMMEDIATE');
  return async () => {
    file.exec('ROLLBACK');
    file.close();
  };
}

async function receiptsCounted(gw: GatewayProcess): Promise<number> {
  const res = await fetch(`${gw.base}/metrics`, { headers: ADMIN });
  const text = await res.text();
  return [...text.matchAll(/^gateway_carrier_receipts_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

test("kill -9 between a receipt's arrival and its commit: the receipt is not lost (the SMSC had no answer and sends it again)", async () => {
  const r = await rig({ windowSize: 10 });
  let gw = await spawnGateway(r.env);
  try {
    const { key, route } = await customer(gw);
    r.sim.setMode({ holdReceipts: true });
    const res = await http(gw.base, 'POST', '/messages/sms/send', { receivers: [5511987650011], message: 'receipt after crash', route }, { 'x-api-key': key });
    assert.equal(res.status, 200);
    const sent = async () => (await http(gw.base, 'GET', '/reports/messages/sent', undefined, { 'x-api-key': key })).body.object as { status: string }[];
    await until('the message SENT', sent, (rows) => rows[0]?.status === 'SENT');

    // The receipt arrives while nothing can be written; the process dies before it could be.
    const release = await blockWrites(r.db);
    try {
      r.sim.setMode({ holdReceipts: false });
      await until(
        'the receipt at the gateway',
        () => receiptsCounted(gw),
        (n) => n >= 1,
      );
      await gw.kill();
    } finally {
      await release();
    }
    assert.equal(r.sim.stats.receiptsSent, 0, 'the gateway acknowledged a receipt it had not written');

    gw = await spawnGateway(r.env);
    const rows = await until('the message DELIVERED', sent, (rows) => rows[0]?.status === 'DELIVERED', 30_000);
    assert.equal(rows.length, 1);
    assert.equal(r.sim.stats.submits.length, 1, 'sent once');
  } finally {
    await gw.stop();
    await r.close();
  }
});
