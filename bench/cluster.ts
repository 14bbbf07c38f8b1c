import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startSmscSimulator } from '../tools/smsc-sim/server.ts';
import { type Child, post, spawnChild } from './proc.ts';

const WINDOW = 100;
const SYSTEM_ID = 'bench';
const PASSWORD = 'benchpw';
const TEXT = 'Benchmark message';
const PER_REQUEST = 100;
const MESSAGES = Number(process.env.BENCH_CLUSTER_MESSAGES ?? 20_000);
const CONNECTIONS = 32;
const TOKEN = 'bench-operator-token-0000000000';
const PG_URL = process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL;

const listening = (e: Record<string, unknown>) =>
  typeof e.msg === 'string' && e.msg.startsWith('gateway listening') && typeof e.address === 'string' ? e.address : undefined;

let nextReceiver = 5511910000000;
const receiversOf = (n: number): number[] => Array.from({ length: n }, () => nextReceiver++);
function sendLoad(base: string, key: string, routeId: number, requests: number) {
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    amount: requests,
    requests: [
      {
        method: 'POST',
        path: '/messages/sms/send',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ receivers: receiversOf(PER_REQUEST), message: TEXT, route: routeId }) }),
      },
    ],
  });
}

/** What the bench reads of the gateway's database. */
interface Reader {
  waiting(): Promise<boolean>;
  sentSince(since: number): Promise<{ n: number; last: number; accepted: number }>;
  close(): Promise<void>;
}

function sqliteReader(dataDir: string): Reader {
  const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
  const any = db.prepare("select 1 from messages where status in ('QUEUED', 'SENDING') limit 1");
  const span = db.prepare('select count(sent_at) as n, max(sent_at) as last, count(*) as accepted from messages where created_at >= ?');
  return {
    waiting: async () => any.get() !== undefined,
    sentSince: async (since) => span.get(since) as { n: number; last: number; accepted: number },
    close: async () => void db.close(),
  };
}

async function pgReader(url: string, schema: string): Promise<Reader> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  return {
    waiting: async () => (await client.query("select 1 from messages where status in ('QUEUED', 'SENDING') limit 1")).rowCount !== 0,
    sentSince: async (since) => {
      const row = (await client.query('select count(sent_at) as n, max(sent_at) as last, count(*) as accepted from messages where created_at >= $1', [since]))
        .rows[0] as Record<string, string>;
      return { n: Number(row.n), last: Number(row.last), accepted: Number(row.accepted) };
    },
    close: () => client.end(),
  };
}

type Mode = 'all' | 'api+dispatch';

/** One run: fresh database, the processes of `mode`, warm-up, then MESSAGES messages; answers messages a second. */
async function run(smscPort: number, dialect: 'sqlite' | 'postgres', mode: Mode): Promise<{ rate: number; sent: number; accepted: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-cluster-'));
  const carriersFile = join(dataDir, 'carriers.json');
  writeFileSync(
    carriersFile,
    JSON.stringify({
      smpp: [
        { name: 'smsc', host: '127.0.0.1', port: smscPort, systemId: SYSTEM_ID, passwordEnv: 'BENCH_SMPP_PASSWORD', sourceAddr: 'ACME', windowSize: WINDOW },
      ],
    }),
  );
  const schema = `bench_cluster_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: pg.Client | null = null;
  if (dialect === 'postgres' && PG_URL) {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
  }
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ACCESS_LOG: 'false',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    GATEWAY_CARRIERS_FILE: carriersFile,
    BENCH_SMPP_PASSWORD: PASSWORD,
    ...(dialect === 'postgres' && PG_URL ? { DATABASE_URL: PG_URL, PGOPTIONS: `-c search_path=${schema}` } : {}),
  };
  const children: Child[] = [];
  let reader: Reader | null = null;
  try {
    // The api process first: it creates the database; then the dispatch process.
    const front = await spawnChild(['src/server.ts'], { ...env, GATEWAY_ROLE: mode === 'all' ? 'all' : 'api' }, listening);
    children.push(front);
    if (mode === 'api+dispatch') children.push(await spawnChild(['src/server.ts'], { ...env, GATEWAY_ROLE: 'dispatch' }, listening));
    const base = String(front.value);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const account = await post(base, '/admin/accounts', { name: 'Bench', balance: 100_000_000 }, auth);
    const route = await post(
      base,
      '/admin/routes',
      { displayName: 'SMPP', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' },
      auth,
    );
    await post(base, `/admin/accounts/${account.id}/routes`, { routeId: route.id }, auth);
    const { key } = await post(base, `/admin/accounts/${account.id}/api-keys`, {}, auth);
    reader = dialect === 'sqlite' ? sqliteReader(dataDir) : await pgReader(PG_URL ?? '', schema);
    const r = reader;
    const drained = async (limitMs: number) => {
      const deadline = Date.now() + limitMs;
      while (Date.now() < deadline) {
        if (!(await r.waiting())) return true;
        await new Promise((res) => setTimeout(res, 50));
      }
      return false;
    };
    // Warm-up (and the bind up): 4,000 messages (autocannon wants at least a request a connection).
    await sendLoad(base, key, route.id, 40);
    if (!(await drained(60_000))) throw new Error('the warm-up did not drain within 60 s');
    const start = Date.now();
    const api = await sendLoad(base, key, route.id, Math.round(MESSAGES / PER_REQUEST));
    if (api.non2xx > 0 || api.errors > 0) throw new Error(`${api.non2xx} non-2xx answers, ${api.errors} errors`);
    if (!(await drained(120_000))) throw new Error('the load did not drain within 120 s');
    const span = await r.sentSince(start);
    return { rate: span.n / ((span.last - start) / 1000), sent: span.n, accepted: span.accepted };
  } finally {
    await reader?.close();
    for (const c of children.reverse()) await c.stop();
    if (admin) {
      await admin.query(`drop schema ${schema} cascade`).catch(() => undefined);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const smsc = await spawnChild(['bench/cluster.ts', '--smsc'], {}, (e) => (typeof e.smsc === 'number' ? e.smsc : undefined));
  const lines = [
    `Cluster bench: API accept -> submit_sm_resp through one SMPP bind (window ${WINDOW}), ${MESSAGES} messages in requests of ${PER_REQUEST}, ${CONNECTIONS} connections`,
  ];
  try {
    const dialects: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
    for (const dialect of dialects) {
      const all = await run(Number(smsc.value), dialect, 'all');
      const pair = await run(Number(smsc.value), dialect, 'api+dispatch');
      const fmt = (n: number) => n.toFixed(0).padStart(6);
      lines.push(
        `  ${dialect === 'sqlite' ? 'SQLite (synchronous=FULL)' : 'PostgreSQL'}:`,
        `    one all process (baseline):   ${fmt(all.rate)} msg/s  (${all.sent}/${all.accepted} sent)`,
        `    api + dispatch processes:     ${fmt(pair.rate)} msg/s  (${pair.sent}/${pair.accepted} sent)`,
        `    ratio api+dispatch / all:     ${(pair.rate / all.rate).toFixed(2)}`,
      );
    }
    if (!PG_URL) lines.push('  (PostgreSQL: set DATABASE_URL or TEST_DATABASE_URL to measure it too)');
    lines.push(`  (took ${((performance.now() - t0) / 1000).toFixed(0)}s)`, '');
    process.stdout.write(lines.join('\n'));
  } finally {
    await smsc.stop();
  }
}

// This file is also the simulator's child process.
if (process.argv.includes('--smsc')) {
  const sim = await startSmscSimulator({ systemId: SYSTEM_ID, password: PASSWORD, receiptDelayMs: 20, rules: [] });
  process.stdout.write(`${JSON.stringify({ smsc: sim.port })}\n`);
  const exit = (): void => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', exit);
  process.stdin.on('close', exit); // the bench died
  process.stdin.resume();
} else {
  await main();
}
