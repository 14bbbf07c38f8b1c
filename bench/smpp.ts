/**
 * npm run bench:smpp: messages per second from API accept to submit_sm_resp
 * through ONE SMPP bind (window 100) against the SMSC simulator, on SQLite
 * (synchronous=FULL, the default), with receipts flowing back.
 *
 * Baseline: the bare `smpp` package in a loop of submit_sm with 100
 * outstanding, on the same simulator, in the same run, answering receipts
 * like the gateway does. Target: the gateway reaches at least 50% of it.
 * Then the API is fed at 70% of the measured gateway rate for a fixed time
 * while the queue (QUEUED + SENDING messages) is sampled: it must not grow.
 *
 * Processes: the simulator runs as a child process (this file with --smsc),
 * so that its CPU is charged neither to the gateway nor to the baseline; the
 * gateway runs as a child process as `npm start` runs it (src/server.ts with
 * a carriers file); the HTTP load (autocannon) and the baseline client run in
 * this process, one after the other. Rates are read from the gateway's own
 * database (sent_at is written once submit_sm_resp arrived).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import smpp, { type Pdu } from '../src/carriers/smpp/smpp-lib.ts';
import { startSmscSimulator } from '../tools/smsc-sim/server.ts';

const WINDOW = 100;
const SYSTEM_ID = 'bench';
const PASSWORD = 'benchpw';
const TEXT = 'Benchmark message';
const BASELINE_SECONDS = Number(process.env.BENCH_BASELINE_SECONDS ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const FEED_SECONDS = Number(process.env.BENCH_FEED_SECONDS ?? 20);
const FEED_SHARE = 0.7;
const CONNECTIONS = 32;
const TOKEN = 'bench-operator-token-0000000000';

// ---- child process: the simulator ------------------------------------------
if (process.argv.includes('--smsc')) {
  // No outcome rules: every submit is accepted and delivered.
  const sim = await startSmscSimulator({ systemId: SYSTEM_ID, password: PASSWORD, receiptDelayMs: 20, rules: [] });
  process.stdout.write(`${JSON.stringify({ smsc: sim.port })}\n`);
  const exit = (): void => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', exit);
  process.stdin.on('close', exit); // the bench died
  process.stdin.resume();
} else {
  await main();
}

interface Child {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a child process and resolves with the first JSON stdout line `pick` accepts. */
function spawnChild<T>(args: string[], env: Record<string, string>, pick: (entry: Record<string, unknown>) => T | undefined): Promise<Child & { value: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.once('exit', () => child.kill('SIGTERM')); // never leave a server behind
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const value = pick(JSON.parse(line) as Record<string, unknown>);
      if (value !== undefined) {
        resolve({ child, value, stop: async () => { child.kill('SIGTERM'); await exited; } });
      }
    });
  });
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ id: number; key: string }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as { id: number; key: string };
}

/** The bare `smpp` package: one transceiver bind, submit_sm kept WINDOW deep for `seconds`; returns submit_sm_resp a second. */
async function baseline(port: number, seconds: number): Promise<number> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  const session = new smpp.Session({ socket });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  session.on('pdu', (pdu: Pdu) => {
    if (pdu.command === 'deliver_sm') session.send(pdu.response({ message_id: '' }));
    else if (pdu.command === 'enquire_link') session.send(pdu.response());
  });
  await new Promise<void>((resolve, reject) => {
    session.send(new smpp.PDU('bind_transceiver', { system_id: SYSTEM_ID, password: PASSWORD, interface_version: 0x34 }), (resp) =>
      resp.command_status === 0 ? resolve() : reject(new Error(`bind refused: ${resp.command_status}`)));
  });
  const body = Buffer.from(TEXT, 'latin1'); // GSM and ASCII agree on these characters
  let n = 0;
  let counting = false;
  let counted = 0;
  let stop = false;
  let outstanding = 0;
  let done: () => void = () => undefined;
  let fail: (err: Error) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  const submit = (): void => {
    outstanding++;
    const receiver = String(5511900000000 + (n++ % 1_000_000));
    session.send(new smpp.PDU('submit_sm', {
      source_addr_ton: 5, source_addr_npi: 0, source_addr: 'ACME', dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: receiver,
      registered_delivery: 1, data_coding: 0, short_message: body,
    }), (resp) => {
      outstanding--;
      if (resp.command_status !== 0) {
        stop = true;
        fail(new Error(`baseline: submit_sm refused with status ${resp.command_status}`));
        return;
      }
      if (counting) counted++;
      if (!stop) submit();
      else if (outstanding === 0) done();
    });
  };
  for (let i = 0; i < WINDOW; i++) submit();
  const pause = (ms: number) => Promise.race([new Promise((r) => setTimeout(r, ms)), finished]);
  await pause(1000); // warm-up
  counting = true;
  const started = performance.now();
  await pause(seconds * 1000);
  counting = false;
  const rate = counted / ((performance.now() - started) / 1000);
  stop = true;
  await finished;
  await new Promise((r) => setTimeout(r, 300)); // let the last receipts be answered
  await new Promise<void>((resolve) => session.send(new smpp.PDU('unbind'), () => resolve()));
  session.close();
  return rate;
}

/** A request per message, each to its own receiver (one receiver at a time is one submit at a time: order per receiver). */
function sendLoad(base: string, key: string, routeId: number, options: { duration: number; overallRate?: number }) {
  let next = 0;
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: options.duration,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    requests: [{
      method: 'POST',
      path: '/messages/sms/send',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ receivers: [5511910000000 + next++], message: TEXT, route: routeId }) }),
    }],
  });
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-smpp-'));
  const smsc = await spawnChild(['bench/smpp.ts', '--smsc'], {}, (e) => (typeof e.smsc === 'number' ? e.smsc : undefined));
  const port = smsc.value;
  let gateway: Child | null = null;
  try {
    // 1. Baseline.
    const bare = await baseline(port, BASELINE_SECONDS);

    // 2. The gateway, pointed at the simulator through a carriers file.
    const carriersFile = join(dataDir, 'carriers.json');
    writeFileSync(carriersFile, JSON.stringify({
      smpp: [{ name: 'smsc', host: '127.0.0.1', port, systemId: SYSTEM_ID, passwordEnv: 'BENCH_SMPP_PASSWORD', sourceAddr: 'ACME', windowSize: WINDOW }],
    }));
    const gw = await spawnChild(['src/server.ts'], {
      HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DEMO: 'false',
      GATEWAY_CARRIERS_FILE: carriersFile, BENCH_SMPP_PASSWORD: PASSWORD,
    }, (e) => (typeof e.msg === 'string' && e.msg.startsWith('gateway listening') && typeof e.address === 'string' ? e.address : undefined));
    gateway = gw;
    const base = gw.value;
    const admin = { authorization: `Bearer ${TOKEN}` };
    const account = await post(base, '/admin/accounts', { name: 'Bench', balance: 100_000_000 }, admin);
    const route = await post(base, '/admin/routes', { displayName: 'SMPP', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' }, admin);
    await post(base, `/admin/accounts/${account.id}/routes`, { routeId: route.id }, admin);
    const { key } = await post(base, `/admin/accounts/${account.id}/api-keys`, {}, admin);

    const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
    const queued = db.prepare("select count(*) as n from messages where connector = 'smsc' and status in ('QUEUED', 'SENDING')");
    const queueLength = (): number => (queued.get() as { n: number }).n;
    const sentSince = db.prepare('select count(*) as n, max(sent_at) as last from messages where created_at >= ? and sent_at is not null');
    const createdSince = db.prepare('select count(*) as n from messages where created_at >= ?');
    const drained = async (limitMs: number): Promise<boolean> => {
      const deadline = Date.now() + limitMs;
      while (Date.now() < deadline) {
        if (queueLength() === 0) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };

    // 3. End-to-end rate: as many sends as the API takes for LOAD_SECONDS, then until the last submit_sm_resp is recorded.
    await sendLoad(base, key, route.id, { duration: 2 }); // warm-up
    if (!(await drained(60_000))) throw new Error('the warm-up did not drain');
    const loadStart = Date.now();
    const api = await sendLoad(base, key, route.id, { duration: LOAD_SECONDS });
    const backlogAtEnd = queueLength();
    if (!(await drained(90_000))) throw new Error('the load did not drain within 90 s');
    const accepted = (createdSince.get(loadStart) as { n: number }).n;
    const span = sentSince.get(loadStart) as { n: number; last: number };
    const e2e = span.n / ((span.last - loadStart) / 1000);

    // 4. Fed below that rate, the queue must stay flat.
    const feedRate = Math.floor(e2e * FEED_SHARE);
    const samples: Array<{ at: number; n: number }> = [];
    const feedStart = Date.now();
    const sampler = setInterval(() => samples.push({ at: (Date.now() - feedStart) / 1000, n: queueLength() }), 500);
    const feed = await sendLoad(base, key, route.id, { duration: FEED_SECONDS, overallRate: feedRate });
    clearInterval(sampler);
    const feedDrained = await drained(30_000);
    db.close();

    const sample = (fraction: number) => samples[Math.min(samples.length - 1, Math.floor(samples.length * fraction))] ?? { at: 0, n: NaN };
    const third = Math.max(1, Math.floor(samples.length / 3));
    const mean = (xs: Array<{ n: number }>) => xs.reduce((s, x) => s + x.n, 0) / Math.max(1, xs.length);
    const early = mean(samples.slice(0, third));
    const late = mean(samples.slice(-third));
    const max = Math.max(...samples.map((s) => s.n));
    // Flat: the last third holds no more than the first third plus 0.1 s of traffic, and never more than a second of it.
    const flat = late <= early + feedRate * 0.1 && max < feedRate;

    const fmt = (n: number) => n.toFixed(0).padStart(7);
    const ratio = e2e / bare;
    process.stdout.write([
      `SMPP throughput, one bind, window ${WINDOW}, simulator receipts after 20 ms, SQLite synchronous=FULL`,
      `  bare smpp client (baseline):          ${fmt(bare)} submit_sm_resp/s  (${BASELINE_SECONDS}s)`,
      `  gateway, API accept -> submit_sm_resp: ${fmt(e2e)} msg/s  (${span.n} of ${accepted} accepted in ${LOAD_SECONDS}s by ${CONNECTIONS} connections; API ${api.requests.average.toFixed(0)} req/s, ${api.non2xx} non-2xx, ${api.errors} errors; backlog at end of load ${backlogAtEnd})`,
      `  ratio gateway / baseline:              ${ratio.toFixed(2)}  (target >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`,
      `  queue (QUEUED+SENDING) fed at ${feedRate} msg/s (${FEED_SHARE * 100}% of the gateway rate) for ${FEED_SECONDS}s: ${feed.requests.total} requests, ${feed.non2xx} non-2xx`,
      `    start  t=${sample(0.05).at.toFixed(1)}s  ${sample(0.05).n}`,
      `    middle t=${sample(0.5).at.toFixed(1)}s  ${sample(0.5).n}`,
      `    end    t=${sample(0.98).at.toFixed(1)}s  ${sample(0.98).n}`,
      `    mean first third ${early.toFixed(1)}, last third ${late.toFixed(1)}, max ${max}; drained after the feed: ${feedDrained ? 'yes' : 'NO'}`,
      `    no growth while fed below the rate: ${flat && feedDrained ? 'yes' : 'NO'}`,
      `  all samples: ${samples.map((s) => s.n).join(' ')}`,
      `  (bench took ${((performance.now() - t0) / 1000).toFixed(0)}s)`,
      '',
    ].join('\n'));
  } finally {
    await gateway?.stop();
    await smsc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
