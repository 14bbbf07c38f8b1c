/**
 * Two gateways: A sends through an SMPP client connection (its carriers
 * file) bound to B's SMPP server; B sends through its built-in simulator.
 * A message sent over HTTP to A is delivered by B, and B's receipt comes
 * back to A as deliver_sm, so A's sent report says DELIVERED.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGateway } from '../helpers.ts';
import { smppGateway } from './helpers.ts';

test('gateway A -> SMPP -> gateway B -> simulator; the receipt flows back to A as DELIVERED', async () => {
  const b = await smppGateway();
  const dir = mkdtempSync(join(tmpdir(), 'gw-a-carriers-'));
  const file = join(dir, 'carriers.json');
  process.env.TEST_GW_B_PASSWORD = b.password;
  writeFileSync(
    file,
    JSON.stringify({
      smpp: [
        {
          name: 'gateway-b',
          host: '127.0.0.1',
          port: b.server.port,
          systemId: b.systemId,
          passwordEnv: 'TEST_GW_B_PASSWORD',
          sourceAddr: 'ACME',
          reconnectMinMs: 20,
          reconnectMaxMs: 200,
        },
      ],
    }),
  );
  const a = await startGateway({ GATEWAY_CARRIERS_FILE: file });
  try {
    const account = await a.admin('POST', '/admin/accounts', { name: 'Sender', balance: 10 });
    const route = await a.admin('POST', '/admin/routes', {
      displayName: 'Via gateway B',
      productName: 'SMS',
      productId: 1,
      farePrice: '0.05',
      replyFarePrice: '0',
      channel: 'SMS',
      connector: 'gateway-b',
    });
    await a.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id });
    const key = await a.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {});
    await a.eventually(
      async () => a.core.carriers.get('gateway-b')?.ready() ?? false,
      (ready) => ready,
      "A's bind to B",
    );
    const text = `Hello through two gateways, long enough to need two parts: ${'x'.repeat(120)}`;
    const sent = await a.call(key.body.key, 'POST', '/messages/sms/send', { receivers: [5511999990400], message: text, route: route.body.id });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));

    const report = await a.eventually(
      () => a.call(key.body.key, 'GET', '/reports/messages/sent'),
      (r) => r.body.object?.[0]?.status === 'DELIVERED',
      "A's message DELIVERED",
    );
    assert.equal(report.body.object[0].content, text);
    // B has it as one message of its customer, submitted over SMPP, delivered by its simulator.
    const atB = await b.gw.call(b.customer.key, 'GET', '/reports/messages/sent');
    assert.equal(atB.body.object.length, 1);
    assert.equal(atB.body.object[0].content, text);
    assert.equal(atB.body.object[0].status, 'DELIVERED');
    const carrierId = await a.core.db.kysely.selectFrom('messages').select('carrier_id').executeTakeFirstOrThrow();
    assert.equal(carrierId.carrier_id, atB.body.object[0].id, "A's carrier id is B's message id");
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
    delete process.env.TEST_GW_B_PASSWORD;
  }
});
