/**
 * The gateway as a child process with its SMPP server; a customer streams
 * submit_sm (a window of 50); the gateway is killed with SIGKILL while they
 * stream, and started again: every message answered with submit_sm_resp
 * ESME_ROK reaches the carrier (the simulator's journal).
 */
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { freshDatabase } from '../helpers.ts';
import { freePort, http, spawnGateway, until } from '../process.ts';
import { Client } from './helpers.ts';

const TOKEN = 'smpp-crash-operator-token-0000';

const journalIds = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ')[0] ?? '')
    : [];

test('SIGKILL while a customer streams submit_sm: every message answered ESME_ROK reaches the carrier after the restart', async () => {
  const db = await freshDatabase();
  const journal = join(db.env.GATEWAY_DATA_DIR ?? '', 'carrier-journal.log');
  const port = await freePort();
  const env = {
    ...db.env,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    SIMULATOR_DELIVERY_MS: '30',
    SIMULATOR_JOURNAL: journal,
    DISPATCH_LEASE_MS: '2000',
    SMPP_PORT: String(port),
  };
  const admin = { authorization: `Bearer ${TOKEN}` };
  let gw = await spawnGateway(env);
  try {
    const account = await http(gw.base, 'POST', '/admin/accounts', { name: 'Streamer', balance: 10_000 }, admin);
    const route = await http(
      gw.base,
      'POST',
      '/admin/routes',
      { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
      admin,
    );
    await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin);
    const credential = await http(
      gw.base,
      'POST',
      `/admin/accounts/${account.body.id}/smpp-credentials`,
      { systemId: 'streamer', password: 'stream01', routeId: route.body.id, windowSize: 50 },
      admin,
    );
    assert.equal(credential.status, 201);

    const client = await Client.connect(port);
    assert.equal((await client.bind('transmitter', 'streamer', 'stream01')).command_status, 0);
    const acknowledged: string[] = [];
    let n = 0;
    let stopped = false;
    // A window of 50 kept full until the process dies.
    const stream = async (): Promise<void> => {
      while (!stopped && !client.closed) {
        // Ending in 5: the simulator takes every one (0001-0003 are its failures).
        const receiver = String(5511900000005 + 10 * n++);
        const resp = await client.submit({ destination_addr: receiver, short_message: Buffer.from(`stream ${receiver}`) }).catch(() => null);
        if (resp?.command_status === 0) acknowledged.push(resp.message_id as string);
      }
    };
    const streams = Array.from({ length: 50 }, () => stream());
    await until(
      '300 submits answered',
      () => acknowledged.length,
      (k) => k >= 300,
    );
    await gw.kill();
    stopped = true;
    await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 2000))]);
    client.close();
    const answered = [...acknowledged];

    gw = await spawnGateway(env);
    await until(
      'every answered message in the carrier journal',
      () => {
        const ids = new Set(journalIds(journal));
        return { journal: ids.size, answered: answered.length, missing: answered.filter((id) => !ids.has(id)).slice(0, 5) };
      },
      (v) => v.missing.length === 0,
      60_000,
    );
  } finally {
    await gw.stop().catch(() => undefined);
    await db.drop();
  }
});
