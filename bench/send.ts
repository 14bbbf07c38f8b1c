/**
 * npm run bench: throughput of POST /messages/sms/send (one receiver) on
 * SQLite with every accepted request durable (synchronous=FULL), against a
 * bare Fastify endpoint measured in the same run. Load comes from this
 * process (autocannon); the servers run as child processes.
 *
 * Two more figures put the ratio in context:
 * - the durable floor (floor-server.ts): the bare endpoint plus only the
 *   rows an accept writes, group-committed and fsynced before the answer,
 *   as the gateway does. What durability alone costs on this machine.
 * - the gateway refusing at validation: the same gateway, route and key,
 *   loaded with a body its schema refuses (a 400 before the handler runs:
 *   no database work). The HTTP layer's own share of the gap.
 * And the CPU budget: on this machine, at the target rate, what CPU a
 * request is left for the server once the load generator has had its share.
 *
 * 128 connections: every durable answer waits for an fsync (about a
 * millisecond here), so with few requests in flight the rate measures that
 * wait (Little's law: rate = requests in flight / latency), not throughput.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { cpuOf, peakRssMb } from './proc.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const TARGET = 0.7;
const TOKEN = 'bench-operator-token-0000000000';
/** Extra node flags for the servers, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

interface Server {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

function start(script: string, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [...NODE_ARGS, '--import', 'tsx', script], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg?.startsWith('gateway listening') && entry.address) {
        // Listening: the rest (an access log line a request) is drained unread, not parsed on the load generator's cores.
        lines.close();
        child.stdout.resume();
        resolve({
          base: entry.address,
          pid: child.pid ?? 0,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
  });
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as { id: number; key: string };
}

/** Loads a server for SECONDS; CPU a request (µs) of the server (all its threads) and of the load generator (this process). */
async function load(server: Server, headers: Record<string, string>, body: string) {
  const cpu0 = cpuOf(server.pid);
  const own0 = process.cpuUsage();
  const result = await autocannon({
    url: `${server.base}/messages/sms/send`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  const own = process.cpuUsage(own0);
  const answered = Math.max(1, result['2xx'] + result.non2xx);
  return {
    rps: result.requests.average,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    p99: result.latency.p99,
    cpu: ((cpuOf(server.pid) - cpu0) / answered) * 1e6,
    loadCpu: (own.user + own.system) / answered,
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
const floorDir = mkdtempSync(join(tmpdir(), 'gw-bench-floor-'));
const body = JSON.stringify({ receivers: [5511999998888], message: 'Benchmark message', route: 1 });

const bare = await start('bench/bare-server.ts', {});
await load(bare, {}, body); // warm-up
const baseline = await load(bare, {}, body);
await bare.stop();

const floorServer = await start('bench/floor-server.ts', { GATEWAY_DATA_DIR: floorDir });
await load(floorServer, {}, body); // warm-up
const floor = await load(floorServer, {}, body);
await floorServer.stop();
rmSync(floorDir, { recursive: true, force: true });

const gw = await start('src/server.ts', { GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'false', SIMULATOR_DELIVERY_MS: '100' });
const admin = { authorization: `Bearer ${TOKEN}` };
const account = await post(gw.base, '/admin/accounts', { name: 'Bench', balance: 100_000_000 }, admin);
const route = await post(
  gw.base,
  '/admin/routes',
  { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
  admin,
);
await post(gw.base, `/admin/accounts/${account.id}/routes`, { routeId: route.id }, admin);
const { key } = await post(gw.base, `/admin/accounts/${account.id}/api-keys`, {}, admin);
const headers = { 'x-api-key': key };
const refused = await load(gw, headers, JSON.stringify({ receivers: [5511999998888], message: '', route: 1 }));
await load(gw, headers, body); // warm-up
const real = await load(gw, headers, body);

// Dispatch rate: messages handed to the simulator per second, from the carriers' timestamps.
const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
const waitDrained = async () => {
  for (let i = 0; i < 600; i++) {
    // An existence check, not a count: a count would read every open row each time, on the cores the gateway uses to drain them.
    if (db.prepare("select 1 from messages where status in ('QUEUED','SENDING','SCHEDULED') limit 1").get() === undefined) return;
    await new Promise((r) => setTimeout(r, 100));
  }
};
await waitDrained();
const span = db.prepare('select count(*) as n, min(sent_at) as first, max(sent_at) as last from messages where sent_at is not null').get() as {
  n: number;
  first: number;
  last: number;
};
const dispatchRate = span.n / Math.max(1, (span.last - span.first) / 1000);
const rss = peakRssMb(gw.pid);
db.close();
await gw.stop();
rmSync(dataDir, { recursive: true, force: true });

// At TARGET x the baseline's rate, the load generator takes its CPU a request; the cores left over, shared by that many requests, are the server's budget.
const cores = availableParallelism();
const targetRate = TARGET * baseline.rps;
const loadCpu = Math.min(baseline.loadCpu, real.loadCpu); // the smaller: the larger budget
const budget = (cores * 1e6 - targetRate * loadCpu) / targetRate;

const fmt = (n: number) => n.toFixed(0).padStart(8);
const ratio = (r: { rps: number }) => (r.rps / baseline.rps).toFixed(2);
const cpu = (r: { cpu: number }) => `${r.cpu.toFixed(0).padStart(4)} µs CPU a request`;
process.stdout.write(
  [
    `POST /messages/sms/send, ${CONNECTIONS} connections, ${SECONDS}s each, SQLite synchronous=FULL, ${cores} cores shared with the load generator`,
    `  bare Fastify endpoint (baseline):  ${fmt(baseline.rps)} req/s  p99 ${String(baseline.p99).padStart(3)} ms  ${cpu(baseline)}`,
    `  durable floor (floor-server.ts):   ${fmt(floor.rps)} req/s  p99 ${String(floor.p99).padStart(3)} ms  ${cpu(floor)}  ratio ${ratio(floor)}`,
    `  gateway (durable accept):          ${fmt(real.rps)} req/s  p99 ${String(real.p99).padStart(3)} ms  ${cpu(real)}  ratio ${ratio(real)}  (target >= ${TARGET.toFixed(2)})`,
    `      ${real.ok} accepted, ${real.non2xx} non-2xx, ${real.errors} errors; CPU includes dispatching them to the simulator (same process)`,
    `  gateway refusing at validation:    ${fmt(refused.rps)} req/s  p99 ${String(refused.p99).padStart(3)} ms  ${cpu(refused)}  ratio ${ratio(refused)}  (key check, schema, 400 envelope; ${refused.non2xx} non-2xx)`,
    `  CPU budget at the target: at ${fmt(targetRate).trim()} req/s the load generator takes ${loadCpu.toFixed(0)} µs a request, leaving ${budget.toFixed(0)} µs a request`,
    `      of the ${cores} cores for the server, all threads (durable floor: ${floor.cpu.toFixed(0)} µs, gateway: ${real.cpu.toFixed(0)} µs)`,
    `  dispatch rate to the simulator:    ${fmt(dispatchRate)} msg/s (${span.n} messages)`,
    `  gateway peak RSS:                  ${fmt(rss)} MB`,
    '',
  ].join('\n'),
);
