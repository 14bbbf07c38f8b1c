import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDatabase, startGateway } from './helpers.ts';

/**
 * Two gateway processes on one database (PostgreSQL's deployment; on SQLite
 * two connections to one file): both dispatch the same backlog, and every
 * message reaches the carrier exactly once.
 */
test('two dispatchers sharing a database never send a message twice', async (t) => {
  const db = await freshDatabase();
  const dir = db.env.GATEWAY_DATA_DIR ?? '';
  const journals = [join(dir, 'carrier-a.log'), join(dir, 'carrier-b.log')];
  // The first one accepts while the second is not running yet, so a backlog builds.
  const a = await startGateway({ SIMULATOR_JOURNAL: journals[0] ?? '', DISPATCH_BATCH: '7' }, { dispatch: false }, db);
  const customer = await a.customer({ balance: 10_000, farePrice: '0.01' });
  let expected = 0;
  // A backlog large enough that the second is running well before the first could drain it alone.
  for (let i = 0; i < 40; i++) {
    const receivers = Array.from({ length: 50 }, (_, k) => 5511970000010 + i * 100 + k);
    const res = await a.call(customer.key, 'POST', '/messages/sms/send', { receivers, message: `m${i}`, route: customer.routeId });
    assert.equal(res.status, 200);
    expected += receivers.length;
  }
  await a.close();

  const one = await startGateway({ SIMULATOR_JOURNAL: journals[0] ?? '', DISPATCH_BATCH: '7' }, {}, db);
  const two = await startGateway({ SIMULATOR_JOURNAL: journals[1] ?? '', DISPATCH_BATCH: '7' }, {}, db);
  try {
    await one.eventually(
      async () => (await one.call(customer.key, 'GET', '/reports/messages/sent?limit=1&statuses=QUEUED,SENDING,SENT')).body.totalRecords as number,
      (open) => open === 0,
      'all messages delivered',
      // 2,000 messages in claims of 7: minutes on a loaded machine are no failure; a message sent twice is.
      180_000,
    );
    const seen = new Map<string, number>();
    for (const file of journals) {
      // A dispatcher that happened to claim nothing wrote no journal.
      if (!existsSync(file)) continue;
      const lines = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
      t.diagnostic(`${file}: ${lines.length} submits`);
      for (const line of lines) {
        const id = line.split(' ')[0] ?? '';
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
    }
    assert.equal(seen.size, expected);
    const twice = [...seen].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'messages sent more than once');
  } finally {
    await two.close();
    await one.close();
    await db.drop();
  }
});
