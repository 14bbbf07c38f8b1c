import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DIALECT, startGateway } from './helpers.ts';
import { claimDeliveriesJob, type DeliveryClaim } from '../src/events/claim.ts';

/**
 * One account's webhook endpoint that never answers keeps at most its share
 * of the deliverer's attempts (WEBHOOK_CONCURRENCY_PER_ACCOUNT), and behind
 * one account's backlog another's deliveries go in the next claim
 * (src/events/claim.ts, docs/webhooks.md "One account's endpoint").
 */
test(`an endpoint that never answers holds at most its account's share of the attempts; another account's webhooks go on (${DIALECT})`, async () => {
  const hanging: ServerResponse[] = [];
  let open = 0;
  let most = 0;
  const fast: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/slow') {
        open++;
        most = Math.max(most, open);
        res.on('close', () => open--);
        hanging.push(res);
        return;
      }
      fast.push(req.url ?? '');
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const gw = await startGateway({
    GATEWAY_FETCH_ALLOW: '127.0.0.1',
    WEBHOOK_CONCURRENCY: '4',
    WEBHOOK_TIMEOUT_MS: '60000',
    WEBHOOK_RETRY_BASE_MS: '1',
    WEBHOOK_POLL_MS: '20',
  });
  try {
    const slow = await gw.customer({ balance: 100 });
    const other = await gw.customer({ balance: 100 });
    const hook = (key: string, path: string) => gw.call(key, 'POST', '/webhooks', { url: `${base}${path}`, topics: ['message.status'] });
    assert.equal((await hook(slow.key, '/slow')).status, 200);
    assert.equal((await hook(other.key, '/fast')).status, 200);
    const campaign = Array.from({ length: 20 }, (_, i) => 5511960000000 + i);
    assert.equal((await gw.call(slow.key, 'POST', '/messages/sms/send', { receivers: campaign, message: 'sale' })).status, 200);
    await gw.eventually(
      async () => open,
      (n) => n === 2,
      "the slow endpoint holding its account's two attempts",
    );
    assert.equal((await gw.call(other.key, 'POST', '/messages/sms/send', { receivers: [5511960009999], message: 'code 1234' })).status, 200);
    await gw.eventually(
      async () => fast.length,
      (n) => n >= 1,
      "the other account's status webhook, while the slow endpoint holds its attempts",
    );
    assert.equal(most, 2, 'the slow endpoint never had more than its account share (half of WEBHOOK_CONCURRENCY)');
  } finally {
    for (const res of hanging) res.destroy();
    await gw.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test(`behind one account's backlog of due deliveries, another's goes in the next claim (${DIALECT})`, async () => {
  const gw = await startGateway({ WEBHOOK_POLL_MS: '60000' });
  try {
    const now = Date.now();
    const row = (id: string, accountId: number, dueAt: number) => ({
      id,
      account_id: accountId,
      format: 'legacy' as const,
      webhook_id: null,
      url: 'http://127.0.0.1:9/',
      event_type: 'message.status' as const,
      event_ref: `test:${id}`,
      body: '{}',
      status: 'PENDING' as const,
      attempts: 0,
      due_at: dueAt,
      lease_owner: null,
      last_http_status: null,
      last_error: null,
      created_at: dueAt,
      last_attempt_at: null,
      delivered_at: null,
    });
    const bulk = await gw.customer({ balance: 1 });
    const other = await gw.customer({ balance: 1 });
    const rows = Array.from({ length: 40 }, (_, i) => row(`bulk-${String(i).padStart(3, '0')}`, bulk.accountId, now - 60_000 + i));
    rows.push(row('other-1', other.accountId, now - 1000));
    await gw.core.db.kysely
      .insertInto('webhook_deliveries' as never)
      .values(rows as never)
      .execute();
    const claim: DeliveryClaim = { owner: 'test', now, leaseMs: 60_000, room: 4, perAccount: 4, inFlight: [], afterAccount: 0 };
    const [first] = await gw.core.db.run(claimDeliveriesJob, [claim]);
    assert.ok(first);
    const ids = first.rows.map((r) => r.id);
    assert.equal(ids.length, 4);
    assert.ok(ids.includes('other-1'), `the other account's delivery in the first claim, not after 40: ${ids.join(' ')}`);
    assert.deepEqual(
      ids.filter((id) => id !== 'other-1'),
      ['bulk-000', 'bulk-001', 'bulk-002'],
    );
    // An account at its limit of attempts in flight gets nothing more.
    const [second] = await gw.core.db.run(claimDeliveriesJob, [{ ...claim, inFlight: [[bulk.accountId, 4]], afterAccount: first.lastTurn ?? 0 }]);
    assert.deepEqual(second?.rows, []);
  } finally {
    await gw.close();
  }
});
