import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { freshDatabase } from './helpers.ts';
import { http, spawnGateway } from './process.ts';
import { openDatabase } from '../src/db/database.ts';

const TOKEN = 'crash-test-operator-token-000';
const FINAL = new Set(['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED']);

/**
 * Kills the gateway with SIGKILL while sends are being accepted and
 * dispatched, restarts it, and checks the promises of the outbox: nothing
 * accepted is lost, everything reaches a final status, nothing recorded as
 * sent is sent again, and the money adds up.
 */
test('SIGKILL during accept and dispatch loses nothing and sends nothing twice', async () => {
  const db = await freshDatabase();
  const journal = join(db.env.GATEWAY_DATA_DIR ?? '', 'carrier-journal.log');
  const env = {
    ...db.env,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    SIMULATOR_DELIVERY_MS: '30',
    SIMULATOR_JOURNAL: journal,
    DISPATCH_LEASE_MS: '2000',
    DISPATCH_BATCH: '20',
  };
  const admin = { authorization: `Bearer ${TOKEN}` };

  let gw = await spawnGateway(env);
  const account = await http(gw.base, 'POST', '/admin/accounts', { name: 'Crash', balance: 1000 }, admin);
  const route = await http(
    gw.base,
    'POST',
    '/admin/routes',
    { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.07', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
    admin,
  );
  await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin);
  const key = (await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, admin)).body.key as string;

  // Many concurrent senders; the process dies while they are still going.
  const acknowledged = new Set<string>();
  let sent = 0;
  let stop = false;
  const sender = async (worker: number) => {
    for (let i = 0; !stop; i++) {
      const receivers = [5511900000000 + worker * 10000 + i, 5511900000000 + worker * 10000 + i + 5000];
      try {
        const res = await http(
          gw.base,
          'POST',
          '/messages/sms/send',
          { receivers, message: `crash ${worker}/${i}`, route: route.body.id },
          { 'x-api-key': key },
        );
        if (res.status === 200) acknowledged.add(res.headers.get('x-request-id') ?? '');
        sent++;
      } catch {
        return; // connection refused: the process is gone
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, w) => sender(w));
  while (acknowledged.size < 150) await new Promise((r) => setTimeout(r, 10));
  await gw.kill();
  stop = true;
  await Promise.all(workers);
  assert.ok(sent >= 150);

  gw = await spawnGateway(env);
  const store = await openDatabase({
    dataDir: db.env.GATEWAY_DATA_DIR ?? '',
    databaseUrl: db.env.DATABASE_URL,
    ...(db.pgSchema ? { pgSchema: db.pgSchema } : {}),
  });
  try {
    // Every acknowledged request is there, with its two messages.
    const requests = await store.kysely.selectFrom('requests').select(['id']).execute();
    const stored = new Set(requests.map((r) => r.id));
    for (const id of acknowledged) assert.ok(stored.has(id), `acknowledged request ${id} was lost`);
    const perRequest = await store.kysely.selectFrom('messages').select(['request_id']).execute();
    assert.equal(perRequest.length, requests.length * 2);

    // Everything reaches a final status after the restart.
    const deadline = Date.now() + 60_000;
    let open = -1;
    while (Date.now() < deadline) {
      const rows = await store.kysely.selectFrom('messages').select('status').execute();
      open = rows.filter((r) => !FINAL.has(r.status)).length;
      if (open === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(open, 0, 'messages still without a final status');

    // The carrier's own log: a message submitted twice must not have had its first carrier id recorded.
    assert.ok(existsSync(journal));
    const submits = new Map<string, string[]>();
    for (const line of readFileSync(journal, 'utf8').trim().split('\n')) {
      const [messageId = '', carrierId = ''] = line.split(' ');
      submits.set(messageId, [...(submits.get(messageId) ?? []), carrierId]);
    }
    const recorded = new Set((await store.kysely.selectFrom('carrier_ids').select('carrier_id').execute()).map((r) => r.carrier_id));
    for (const [messageId, carrierIds] of submits) {
      const earlier = carrierIds.slice(0, -1);
      for (const c of earlier) assert.ok(!recorded.has(c), `message ${messageId} was sent again after its carrier id ${c} was recorded`);
    }
    const messages = await store.kysely.selectFrom('messages').select(['id', 'carrier_id', 'status', 'cost']).execute();
    for (const m of messages) if (m.status !== 'FAILED') assert.ok(submits.has(m.id), `message ${m.id} is ${m.status} but the carrier never saw it`);

    // Money: balance = credits - charges of what was accepted, and the ledger agrees.
    const acc = await store.kysely.selectFrom('accounts').select('balance').where('id', '=', account.body.id).executeTakeFirstOrThrow();
    const charged = messages.filter((m) => m.status !== 'FAILED').reduce((s, m) => s + m.cost, 0);
    assert.equal(acc.balance, 1000_000_000 - charged);
    const ledger = await store.kysely.selectFrom('ledger').select('amount').where('account_id', '=', account.body.id).execute();
    assert.equal(
      ledger.reduce((s, l) => s + l.amount, 0),
      acc.balance,
    );
  } finally {
    await store.close();
    await gw.stop();
    await db.drop();
  }
});
