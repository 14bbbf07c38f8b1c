import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import smpp, { type Pdu } from '../src/carriers/smpp/smpp-lib.ts';
import { type Child, cpuOf, post, spawnChild } from './proc.ts';
import { startSimChild } from './sim-child.ts';

const WINDOW = 100;
const SYSTEM_ID = 'bench';
const PASSWORD = 'benchpw';
const TEXT = 'Benchmark message';
const BASELINE_SECONDS = Number(process.env.BENCH_BASELINE_SECONDS ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const FEED_SECONDS = Number(process.env.BENCH_FEED_SECONDS ?? 20);
const FEED_SHARE = 0.7;
const BULK_PER_REQUEST = 100;
const BULK_MESSAGES = Number(process.env.BENCH_BULK_MESSAGES ?? 30_000);
const CONNECTIONS = 32;
const TOKEN = 'bench-operator-token-0000000000';

/**
 * The bare `smpp` package: one transceiver bind, submit_sm kept WINDOW deep
 * for `seconds`; returns submit_sm_resp a second and the CPU (µs) this
 * process spent per message (submit, response, receipt and its answer).
 */
async function baseline(port: number, seconds: number): Promise<{ rate: number; cpuPerMessage: number }> {
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
      resp.command_status === 0 ? resolve() : reject(new Error(`bind refused: ${resp.command_status}`)),
    );
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
    session.send(
      new smpp.PDU('submit_sm', {
        source_addr_ton: 5,
        source_addr_npi: 0,
        source_addr: 'ACME',
        dest_addr_ton: 1,
        dest_addr_npi: 1,
        destination_addr: receiver,
        registered_delivery: 1,
        data_coding: 0,
        short_message: body,
      }),
      (resp) => {
        outstanding--;
        if (resp.command_status !== 0) {
          stop = true;
          fail(new Error(`baseline: submit_sm refused with status ${resp.command_status}`));
          return;
        }
        if (counting) counted++;
        if (!stop) submit();
        else if (outstanding === 0) done();
      },
    );
  };
  for (let i = 0; i < WINDOW; i++) submit();
  const pause = (ms: number) => Promise.race([new Promise((r) => setTimeout(r, ms)), finished]);
  await pause(1000); // warm-up
  counting = true;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await pause(seconds * 1000);
  counting = false;
  const cpu = process.cpuUsage(cpu0);
  const rate = counted / ((performance.now() - started) / 1000);
  stop = true;
  await finished;
  await new Promise((r) => setTimeout(r, 300)); // let the last receipts be answered
  await new Promise<void>((resolve) => session.send(new smpp.PDU('unbind'), () => resolve()));
  session.close();
  return { rate, cpuPerMessage: (cpu.user + cpu.system) / Math.max(1, counted) };
}

/**
 * Send requests of `perRequest` receivers each, every receiver its own number
 * (one receiver's messages go one at a time: order per receiver), as fast as
 * the API answers: for `duration` seconds, or `amount` requests.
 */
let nextReceiver = 5511910000000;
const receiversOf = (n: number): number[] => Array.from({ length: n }, () => nextReceiver++);
function sendLoad(base: string, key: string, routeId: number, options: { perRequest: number; duration?: number; amount?: number }) {
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 1 }),
    requests: [
      {
        method: 'POST',
        path: '/messages/sms/send',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ receivers: receiversOf(options.perRequest), message: TEXT, route: routeId }) }),
      },
    ],
  });
}

/**
 * A steady feed: `rate` messages a second in requests of `perRequest`
 * receivers, spread evenly over time (not a burst a second), for `seconds`.
 */
async function feedSteadily(
  base: string,
  key: string,
  routeId: number,
  rate: number,
  perRequest: number,
  seconds: number,
): Promise<{ requests: number; failed: number }> {
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let requests = 0;
  let failed = 0;
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= seconds) break;
    while (requests < Math.floor((elapsed * rate) / perRequest) && pending.size < CONNECTIONS) {
      requests++;
      const sent: Promise<void> = fetch(`${base}/messages/sms/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ receivers: receiversOf(perRequest), message: TEXT, route: routeId }),
      })
        .then(
          async (res) => {
            await res.arrayBuffer();
            if (!res.ok) failed++;
          },
          () => void failed++,
        )
        .finally(() => pending.delete(sent));
      pending.add(sent);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(pending);
  return { requests, failed };
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-smpp-'));
  const smsc = await startSimChild(SYSTEM_ID, PASSWORD);
  const port = smsc.value;
  let gateway: Child | null = null;
  try {
    // 1. Baseline.
    const bare = await baseline(port, BASELINE_SECONDS);

    // 2. The gateway, pointed at the simulator through a carriers file.
    const carriersFile = join(dataDir, 'carriers.json');
    writeFileSync(
      carriersFile,
      JSON.stringify({
        smpp: [{ name: 'smsc', host: '127.0.0.1', port, systemId: SYSTEM_ID, passwordEnv: 'BENCH_SMPP_PASSWORD', sourceAddr: 'ACME', windowSize: WINDOW }],
      }),
    );
    const gw = await spawnChild(
      ['src/server.ts'],
      {
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_TOKEN: TOKEN,
        GATEWAY_DEMO: 'false',
        GATEWAY_CARRIERS_FILE: carriersFile,
        BENCH_SMPP_PASSWORD: PASSWORD,
      },
      (e) => (typeof e.msg === 'string' && e.msg.startsWith('gateway listening') && typeof e.address === 'string' ? e.address : undefined),
    );
    gateway = gw;
    const base = gw.value;
    const admin = { authorization: `Bearer ${TOKEN}` };
    const account = await post(base, '/admin/accounts', { name: 'Bench', balance: 100_000_000 }, admin);
    const route = await post(
      base,
      '/admin/routes',
      { displayName: 'SMPP', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' },
      admin,
    );
    await post(base, `/admin/accounts/${account.id}/routes`, { routeId: route.id }, admin);
    const { key } = await post(base, `/admin/accounts/${account.id}/api-keys`, {}, admin);

    const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
    const queued = db.prepare("select count(*) as n from messages where connector = 'smsc' and status in ('QUEUED', 'SENDING')");
    const queueLength = (): number => (queued.get() as { n: number }).n;
    // Polled every 50 ms while a backlog drains: an existence check, not a count, which would read every waiting row each time
    // (tens of milliseconds of this process's CPU, on the cores the gateway and the simulator share).
    const anyQueued = db.prepare("select 1 from messages where connector = 'smsc' and status in ('QUEUED', 'SENDING') limit 1");
    const sentSince = db.prepare('select count(*) as n, max(sent_at) as last from messages where created_at >= ? and sent_at is not null');
    const createdSince = db.prepare('select count(*) as n from messages where created_at >= ?');
    const drained = async (limitMs: number): Promise<boolean> => {
      const deadline = Date.now() + limitMs;
      while (Date.now() < deadline) {
        if (anyQueued.get() === undefined) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };

    /** Messages a second from the first request until the last submit_sm_resp was recorded. */
    const endToEnd = async (perRequest: number, load: { duration?: number; amount?: number }) => {
      const loadStart = Date.now();
      const cpu0 = cpuOf(gw.child.pid ?? 0);
      const api = await sendLoad(base, key, route.id, { perRequest, ...load });
      const backlog = queueLength();
      if (!(await drained(120_000))) throw new Error('the load did not drain within 120 s');
      const cpu = cpuOf(gw.child.pid ?? 0) - cpu0;
      const accepted = (createdSince.get(loadStart) as { n: number }).n;
      const span = sentSince.get(loadStart) as { n: number; last: number };
      return { rate: span.n / ((span.last - loadStart) / 1000), sent: span.n, accepted, api, backlog, cpuPerMessage: (cpu * 1e6) / Math.max(1, span.n) };
    };

    // 3. End-to-end rates. One receiver a request: the HTTP accept path is what limits (see npm run bench).
    // 100 receivers a request (bulk sends): the accept path has room to spare, so this is the dispatcher + SMPP path.
    await sendLoad(base, key, route.id, { perRequest: 10, duration: 2 }); // warm-up
    if (!(await drained(60_000))) throw new Error('the warm-up did not drain');
    const single = await endToEnd(1, { duration: LOAD_SECONDS });
    const bulk = await endToEnd(BULK_PER_REQUEST, { amount: Math.round(BULK_MESSAGES / BULK_PER_REQUEST) });

    // 4. Fed at 70% of the bulk rate (10 receivers a request, paced), the queue must stay flat.
    const feedPerRequest = 10;
    const feedRate = Math.floor((bulk.rate * FEED_SHARE) / feedPerRequest) * feedPerRequest;
    const samples: Array<{ at: number; n: number }> = [];
    const feedStart = Date.now();
    const sampler = setInterval(() => samples.push({ at: (Date.now() - feedStart) / 1000, n: queueLength() }), 250);
    const feed = await feedSteadily(base, key, route.id, feedRate, feedPerRequest, FEED_SECONDS);
    clearInterval(sampler);
    const feedDrained = await drained(30_000);
    db.close();

    // Three equal windows of the feed: start, middle, end.
    const third = Math.max(1, Math.floor(samples.length / 3));
    const windows = [samples.slice(0, third), samples.slice(third, 2 * third), samples.slice(2 * third)].map((xs) => ({
      from: xs[0]?.at ?? 0,
      to: xs[xs.length - 1]?.at ?? 0,
      mean: xs.reduce((sum, x) => sum + x.n, 0) / Math.max(1, xs.length),
      max: Math.max(0, ...xs.map((x) => x.n)),
    }));
    const [first, middle, last] = windows;
    const max = Math.max(0, ...samples.map((x) => x.n));
    // Flat: the end holds no more than the start plus 0.1 s of traffic, and the queue never holds a second of it.
    const flat = first !== undefined && last !== undefined && last.mean <= first.mean + feedRate * 0.1 && max < feedRate;
    const line = (name: string, w: (typeof windows)[number] | undefined) =>
      `    ${name.padEnd(6)} ${w ? `${w.from.toFixed(1).padStart(5)}-${w.to.toFixed(1).padStart(4)}s  mean ${w.mean.toFixed(0).padStart(5)}  max ${String(w.max).padStart(5)}` : '-'}`;

    const fmt = (n: number) => n.toFixed(0).padStart(6);
    const verdict = (ratio: number) => `${ratio.toFixed(2)} of baseline (target >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`;
    process.stdout.write(
      [
        `SMPP throughput through one bind, window ${WINDOW}; SQLite synchronous=FULL; simulator receipts after 20 ms (child process)`,
        `  bare smpp client, submit_sm loop (baseline):  ${fmt(bare.rate)} submit_sm_resp/s over ${BASELINE_SECONDS}s, ${bare.cpuPerMessage.toFixed(0)} µs CPU a message`,
        `  gateway, API accept -> submit_sm_resp:`,
        `    100 receivers a request (bulk):             ${fmt(bulk.rate)} msg/s  ${verdict(bulk.rate / bare.rate)}`,
        `        gateway CPU a message, all threads, accept to receipt: ${bulk.cpuPerMessage.toFixed(0)} µs (bare client: ${bare.cpuPerMessage.toFixed(0)} µs, ratio ${(bare.cpuPerMessage / bulk.cpuPerMessage).toFixed(2)}; less noisy than the rates)`,
        `        ${bulk.sent}/${bulk.accepted} messages, API ${bulk.api.requests.average.toFixed(0)} req/s = ${(bulk.api.requests.average * BULK_PER_REQUEST).toFixed(0)} msg/s accepted, ${bulk.api.non2xx} non-2xx, ${bulk.api.errors} errors; queue when the API was done: ${bulk.backlog}`,
        `    1 receiver a request:                       ${fmt(single.rate)} msg/s  ${verdict(single.rate / bare.rate)}`,
        `        ${single.sent}/${single.accepted} messages in ${LOAD_SECONDS}s, API ${single.api.requests.average.toFixed(0)} req/s, ${single.api.non2xx} non-2xx, ${single.api.errors} errors; queue when the API was done: ${single.backlog}`,
        single.backlog < single.accepted * 0.05
          ? '        (the HTTP accept path limits here, not SMPP: the queue was near empty when the API was done)'
          : '        (the queue grew during the load: the dispatch/SMPP path limits here too)',
        `  queue (QUEUED+SENDING) while fed at ${feedRate} msg/s (${FEED_SHARE * 100}% of the bulk rate, ${feedPerRequest} receivers a request) for ${FEED_SECONDS}s:`,
        line('start', first),
        line('middle', middle),
        line('end', last),
        `    ${feed.requests} requests (${feed.failed} failed); drained within 30 s after the feed: ${feedDrained ? 'yes' : 'NO'}`,
        `    no growth while fed below the rate: ${flat && feedDrained ? 'yes' : 'NO'}`,
        `    samples (every 250 ms): ${samples.map((x) => x.n).join(' ')}`,
        `  (took ${((performance.now() - t0) / 1000).toFixed(0)}s)`,
        '',
      ].join('\n'),
    );
  } finally {
    await gateway?.stop();
    await smsc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
