/**
 * npm run bench: throughput of POST /messages/sms/send (one receiver) on
 * SQLite with every accepted request durable (synchronous=FULL), against a
 * bare Fastify endpoint measured in the same run. Load comes from this
 * process (autocannon); the servers run as child processes.
 *
 * A third figure shows how much of the gap is the HTTP layer itself: the
 * same gateway, same route, same API key, loaded with a body that its schema
 * refuses (a 400 envelope before the handler runs: no database work, nothing
 * dispatched). It is measured before any message is accepted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { cpuOf, peakRssMb } from './proc.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TOKEN = 'bench-operator-token-0000000000';
/** Extra node flags for the servers, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

interface Server {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

function start(script: string, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [...NODE_ARGS, '--import', 'tsx', script], { env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg?.startsWith('gateway listening') && entry.address) {
        resolve({ base: entry.address, pid: child.pid ?? 0, stop: async () => { child.kill('SIGTERM'); await exited; } });
      }
    });
  });
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as { id: number; key: string };
}

async function load(base: string, headers: Record<string, string>, body: string) {
  const result = await autocannon({ url: `${base}/messages/sms/send`, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections: CONNECTIONS, duration: SECONDS });
  return { rps: result.requests.average, ok: result['2xx'], non2xx: result.non2xx, errors: result.errors, p99: result.latency.p99 };
}

const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
const body = JSON.stringify({ receivers: [5511999998888], message: 'Benchmark message', route: 1 });

const bare = await start('bench/bare-server.ts', {});
await load(bare.base, {}, body); // warm-up
const bareCpu0 = cpuOf(bare.pid);
const baseline = await load(bare.base, {}, body);
const bareCpuPerRequest = ((cpuOf(bare.pid) - bareCpu0) / Math.max(1, baseline.ok)) * 1e6;
await bare.stop();

const gw = await start('src/server.ts', { GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'false', SIMULATOR_DELIVERY_MS: '100' });
const admin = { authorization: `Bearer ${TOKEN}` };
const account = await post(gw.base, '/admin/accounts', { name: 'Bench', balance: 100_000_000 }, admin);
const route = await post(gw.base, '/admin/routes', { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' }, admin);
await post(gw.base, `/admin/accounts/${account.id}/routes`, { routeId: route.id }, admin);
const { key } = await post(gw.base, `/admin/accounts/${account.id}/api-keys`, {}, admin);
const headers = { 'x-api-key': key };
const refused = await load(gw.base, headers, JSON.stringify({ receivers: [5511999998888], message: '', route: 1 }));
await load(gw.base, headers, body); // warm-up
const cpu0 = cpuOf(gw.pid);
const real = await load(gw.base, headers, body);
const cpuPerRequest = ((cpuOf(gw.pid) - cpu0) / Math.max(1, real.ok)) * 1e6;

// Dispatch rate: messages handed to the simulator per second, from the carriers' timestamps.
const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
const waitDrained = async () => {
  for (let i = 0; i < 600; i++) {
    const open = db.prepare("select count(*) as n from messages where status in ('QUEUED','SENDING','SCHEDULED')").get() as { n: number };
    if (open.n === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
};
await waitDrained();
const span = db.prepare('select count(*) as n, min(sent_at) as first, max(sent_at) as last from messages where sent_at is not null').get() as { n: number; first: number; last: number };
const dispatchRate = span.n / Math.max(1, (span.last - span.first) / 1000);
const rss = peakRssMb(gw.pid);
db.close();
await gw.stop();
rmSync(dataDir, { recursive: true, force: true });

const fmt = (n: number) => n.toFixed(0).padStart(8);
process.stdout.write(
  [
    `POST /messages/sms/send, ${CONNECTIONS} connections, ${SECONDS}s each, SQLite synchronous=FULL`,
    `  bare Fastify endpoint (baseline): ${fmt(baseline.rps)} req/s  p99 ${baseline.p99} ms`,
    `  gateway (durable accept):         ${fmt(real.rps)} req/s  p99 ${real.p99} ms  (${real.ok} accepted, ${real.non2xx} non-2xx, ${real.errors} errors)`,
    `  ratio gateway / baseline:         ${(real.rps / baseline.rps).toFixed(2)}  (target >= 0.70)`,
    `  gateway refusing at validation:   ${fmt(refused.rps)} req/s  ratio ${(refused.rps / baseline.rps).toFixed(2)}  (key check, schema validation, 400 error envelope; no database work: ${refused.non2xx} non-2xx)`,
    `  gateway CPU per accepted request: ${fmt(cpuPerRequest)} µs (accept and dispatch, all threads; less noisy than the rates on a shared machine)`,
    `  bare endpoint CPU per request:    ${fmt(bareCpuPerRequest)} µs (ratio of CPU costs ${(bareCpuPerRequest / cpuPerRequest).toFixed(2)})`,
    `  dispatch rate to the simulator:   ${fmt(dispatchRate)} msg/s (${span.n} messages)`,
    `  gateway peak RSS:                 ${rss.toFixed(0)} MB`,
    '',
  ].join('\n'),
);
