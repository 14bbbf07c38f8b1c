import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIALECT, freshDatabase } from './helpers.ts';
import { http, spawnGateway, until, type GatewayProcess } from './process.ts';

const TOKEN = 'cluster-test-operator-token-00';
const admin = { authorization: `Bearer ${TOKEN}` };

interface ClusterAnswer {
  processes: { id: string; role: string; pid: number; connectors: string[]; self: boolean }[];
  outbox: { connector: string; queued: number; scheduled: number; sending: number }[];
}

/**
 * GATEWAY_ROLE: an api process (HTTP only) and a dispatch process (carriers
 * and loops only) on one database, SQLite file or PostgreSQL schema. The api
 * process accepts and stores; the dispatch process sends what waits in the
 * outbox; a dispatch process killed with SIGKILL and replaced loses nothing.
 */
test(`an api process and a dispatch process work as one gateway (${DIALECT})`, async (t) => {
  const db = await freshDatabase();
  const dir = db.env.GATEWAY_DATA_DIR ?? '';
  const journals = [join(dir, 'carrier-1.log'), join(dir, 'carrier-2.log')];
  const env = { ...db.env, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'false', SIMULATOR_DELIVERY_MS: '30', DISPATCH_LEASE_MS: '2000', DISPATCH_BATCH: '10' };
  const running: GatewayProcess[] = [];
  const spawn = async (extra: Record<string, string>) => {
    const gw = await spawnGateway({ ...env, ...extra });
    running.push(gw);
    return gw;
  };
  try {
    const api = await spawn({ GATEWAY_ROLE: 'api' });
    const cluster = async (base = api.base) => (await http(base, 'GET', '/admin/cluster', undefined, admin)).body as ClusterAnswer;

    // Set up through the api process's operator API.
    const account = await http(api.base, 'POST', '/admin/accounts', { name: 'Cluster', balance: 1000 }, admin);
    const route = await http(
      api.base,
      'POST',
      '/admin/routes',
      { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
      admin,
    );
    await http(api.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin);
    const key = (await http(api.base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, admin)).body.key as string;
    const send = async (n: number, from: number) => {
      // Last digits never 0001-0003 or 0009 (the simulator's failures): every message is DELIVERED.
      const receivers = Array.from({ length: n }, (_, i) => 5511970001010 + from + i);
      const res = await http(api.base, 'POST', '/messages/sms/send', { receivers, message: `hi ${from}`, route: route.body.id }, { 'x-api-key': key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    const open = async () =>
      (await http(api.base, 'GET', '/reports/messages/sent?limit=1&statuses=QUEUED,SCHEDULED,SENDING,SENT', undefined, { 'x-api-key': key })).body
        .totalRecords as number;

    // The api process alone: it runs no carrier, and what it accepts waits in the outbox.
    await send(20, 0);
    let view = await cluster();
    assert.deepEqual(
      view.processes.map((p) => [p.role, p.connectors, p.self]),
      [['api', [], true]],
    );
    assert.deepEqual(
      view.outbox.find((o) => o.connector === 'simulator'),
      { connector: 'simulator', queued: 20, scheduled: 0, sending: 0 },
    );
    assert.equal((await http(api.base, 'GET', '/readyz')).status, 200);
    // No RBM event endpoint here (a dispatch process's): an unknown path, which the gateway interface answers 401 without a key.
    assert.ok([401, 404].includes((await http(api.base, 'POST', '/rbm/events/simulator', {})).status));

    // A dispatch process sends them; it serves no public or operator API.
    const first = await spawn({ GATEWAY_ROLE: 'dispatch', SIMULATOR_JOURNAL: journals[0] ?? '' });
    assert.equal((await http(first.base, 'GET', '/healthz')).status, 200);
    assert.equal((await http(first.base, 'GET', '/admin/cluster', undefined, admin)).status, 404);
    assert.equal((await http(first.base, 'POST', '/messages/sms/send', {}, { 'x-api-key': key })).status, 404);
    await until('the first 20 messages delivered', open, (n) => n === 0);
    view = await cluster();
    assert.deepEqual(view.processes.map((p) => p.role).sort(), ['api', 'dispatch']);
    const dispatcher = view.processes.find((p) => p.role === 'dispatch');
    assert.equal(dispatcher?.pid, first.child.pid);
    assert.ok(dispatcher?.connectors.includes('simulator'));

    // Killed while it has work, and another started: the outbox drains.
    await send(30, 100);
    await first.kill();
    await send(30, 200);
    const second = await spawn({ GATEWAY_ROLE: 'dispatch', SIMULATOR_JOURNAL: journals[1] ?? '' });
    await until('every message delivered after the restart', open, (n) => n === 0);
    view = await until(
      'the killed dispatch process gone from the cluster',
      () => cluster(),
      (v) => v.processes.length === 2,
    );
    assert.deepEqual(view.processes.map((p) => [p.role, p.pid]).sort(), [
      ['api', api.child.pid],
      ['dispatch', second.child.pid],
    ]);
    // The CLI shows the same (another process on the database).
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'cluster', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const json = cli('--json');
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as ClusterAnswer).processes.map((p) => p.role).sort(), ['api', 'dispatch']);
    const table = cli();
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^ROLE +HOST +PID/m);
    assert.match(table.stdout, new RegExp(`^dispatch .* ${second.child.pid} .*simulator`, 'm'));
    assert.match(table.stdout, /^2 processes$/m);
    assert.match(table.stdout, /^CONNECTOR +QUEUED +SCHEDULED +SENDING$/m);
    const delivered = await http(api.base, 'GET', '/reports/messages/sent?limit=1&statuses=DELIVERED', undefined, { 'x-api-key': key });
    assert.equal(delivered.body.totalRecords, 80);
    // Every message reached the carrier (some possibly twice: those the killed process had in flight).
    const seen = new Set<string>();
    for (const file of journals) {
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, 'utf8').trim().split('\n').filter(Boolean)) seen.add(line.split(' ')[0] ?? '');
    }
    t.diagnostic(`${seen.size} distinct messages at the carrier`);
    assert.equal(seen.size, 80);
  } finally {
    for (const gw of running.reverse()) if (gw.child.exitCode === null && gw.child.signalCode === null) await gw.stop();
    await db.drop();
  }
});
