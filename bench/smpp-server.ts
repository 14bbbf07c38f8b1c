/**
 * npm run bench:smpp-server: the gateway's SMPP server end to end. One
 * customer bind (window 100, receipts asked for) submits into the outbox;
 * one carrier bind takes the messages out to an SMPP sink (the SMSC
 * simulator, in its own process), whose receipts come back to the customer
 * as deliver_sm. Against the bare `smpp` package's submit loop on the same
 * sink in the same run: submit_sm_resp a second of both, and the ratio.
 * The gateway runs as deployed: built, started with `node server.js`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import smpp, { type Pdu } from '../src/carriers/smpp/smpp-lib.ts';
import { freePorts } from './kannel/proc.ts';
import { startSimChild } from './sim-child.ts';
import { builtServer, type Child, cpuOf, post, spawnChild } from './proc.ts';

const WINDOW = 100;
const SYSTEM_ID = 'bench';
const PASSWORD = 'benchpw';
const TEXT = 'Benchmark message';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOKEN = 'bench-operator-token-0000000000';
/** registered_delivery of the submits (BENCH_RECEIPTS=0: none, to see what the receipts back to the customer cost). */
const RECEIPTS = process.env.BENCH_RECEIPTS === '0' ? 0 : 1;
/** BENCH_SQLITE_SYNCHRONOUS=NORMAL: answers without waiting for the disk (what the fsyncs cost; not the gateway's promise). */
const SYNCHRONOUS = process.env.BENCH_SQLITE_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL';
/** The gateway as deployed (built, `node server.js`); BENCH_FROM_SOURCE=1: its sources through tsx. */
const server = () => (process.env.BENCH_FROM_SOURCE === '1' ? 'src/server.ts' : builtServer(join(import.meta.dirname, '..')));

interface LoopResult {
  rate: number;
  answered: number;
  refused: number;
  cpuPerMessage: number;
  startedAt: number;
  endedAt: number;
}

/**
 * One bind as a customer's client: submit_sm kept WINDOW deep for `seconds`
 * after a second of warm-up, every receiver its own number; deliver_sm
 * (receipts) answered at once. ESME_RTHROTTLED is counted and submitted again.
 */
async function submitLoop(port: number, systemId: string, password: string, seconds: number, firstReceiver: number): Promise<LoopResult> {
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
    session.send(new smpp.PDU('bind_transceiver', { system_id: systemId, password, interface_version: 0x34 }), (resp) =>
      resp.command_status === 0 ? resolve() : reject(new Error(`bind refused: ${resp.command_status}`)),
    );
  });
  const body = Buffer.from(TEXT, 'latin1'); // GSM and ASCII agree on these characters
  let n = 0;
  let counting = false;
  let counted = 0;
  let refused = 0;
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
    const receiver = String(firstReceiver + n++);
    session.send(
      new smpp.PDU('submit_sm', {
        source_addr_ton: 5,
        source_addr_npi: 0,
        source_addr: 'ACME',
        dest_addr_ton: 1,
        dest_addr_npi: 1,
        destination_addr: receiver,
        registered_delivery: RECEIPTS,
        data_coding: 0,
        short_message: body,
      }),
      (resp) => {
        outstanding--;
        if (resp.command_status === 0x58) refused++;
        else if (resp.command_status !== 0) {
          stop = true;
          fail(new Error(`submit_sm refused with status ${resp.command_status}`));
          return;
        } else if (counting) counted++;
        if (!stop) submit();
        else if (outstanding === 0) done();
      },
    );
  };
  for (let i = 0; i < WINDOW; i++) submit();
  const pause = (ms: number) => Promise.race([new Promise((r) => setTimeout(r, ms)), finished]);
  await pause(1000); // warm-up
  counting = true;
  const startedAt = Date.now();
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await pause(seconds * 1000);
  counting = false;
  const endedAt = Date.now();
  const cpu = process.cpuUsage(cpu0);
  const rate = counted / ((performance.now() - started) / 1000);
  stop = true;
  await finished;
  await new Promise((r) => setTimeout(r, 300)); // let the last receipts be answered
  await new Promise<void>((resolve) => session.send(new smpp.PDU('unbind'), () => resolve()));
  session.close();
  return { rate, answered: counted, refused, cpuPerMessage: (cpu.user + cpu.system) / Math.max(1, counted), startedAt, endedAt };
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-smpp-server-'));
  const sink = await startSimChild(SYSTEM_ID, PASSWORD);
  let gateway: Child | null = null;
  try {
    // 1. Baseline: the bare package's loop straight to the sink.
    const bare = await submitLoop(sink.value, SYSTEM_ID, PASSWORD, SECONDS, 5511900000000);

    // 2. The gateway: its SMPP server for the customer, one carrier bind to the sink.
    const [smppPort] = (await freePorts(1)) as [number];
    const carriersFile = join(dataDir, 'carriers.json');
    writeFileSync(
      carriersFile,
      JSON.stringify({
        smpp: [
          {
            name: 'smsc',
            host: '127.0.0.1',
            port: sink.value,
            systemId: SYSTEM_ID,
            passwordEnv: 'BENCH_SMPP_PASSWORD',
            sourceAddr: 'ACME',
            windowSize: WINDOW,
          },
        ],
      }),
    );
    const gw = await spawnChild(
      [server()],
      {
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        ACCESS_LOG: 'false',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_TOKEN: TOKEN,
        GATEWAY_DEMO: 'false',
        GATEWAY_CARRIERS_FILE: carriersFile,
        BENCH_SMPP_PASSWORD: PASSWORD,
        SMPP_PORT: String(smppPort),
        SQLITE_SYNCHRONOUS: SYNCHRONOUS,
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
    await post(
      base,
      `/admin/accounts/${account.id}/smpp-credentials`,
      { systemId: 'customer', password: 'cust0001', routeId: route.id, windowSize: WINDOW },
      admin,
    );

    const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
    const anyQueued = db.prepare("select 1 from messages where status in ('QUEUED', 'SENDING') limit 1");
    const sentBetween = db.prepare('select count(*) as n, max(sent_at) as last from messages where created_at >= ? and created_at < ? and sent_at is not null');
    const cpu0 = cpuOf(gw.child.pid ?? 0);
    const through = await submitLoop(smppPort, 'customer', 'cust0001', SECONDS, 5511950000000);
    const deadline = Date.now() + 120_000;
    while (anyQueued.get() !== undefined) {
      if (Date.now() > deadline) throw new Error('the outbox did not drain within 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const cpu = cpuOf(gw.child.pid ?? 0) - cpu0;
    const span = sentBetween.get(through.startedAt, through.endedAt) as { n: number; last: number };
    const endToEnd = span.n / ((Math.max(span.last, through.endedAt) - through.startedAt) / 1000);
    db.close();

    const fmt = (n: number) => n.toFixed(0).padStart(6);
    const ratio = through.rate / bare.rate;
    const e2eRatio = endToEnd / bare.rate;
    process.stdout.write(
      [
        `SMPP server: one customer bind (window ${WINDOW}, registered_delivery ${RECEIPTS}) -> outbox -> one carrier bind -> SMPP sink (simulator, child process, receipts after 20 ms); SQLite synchronous=${SYNCHRONOUS}`,
        `  bare smpp client -> sink (baseline):         ${fmt(bare.rate)} submit_sm_resp/s over ${SECONDS}s, ${bare.cpuPerMessage.toFixed(0)} µs of its CPU a message`,
        `  customer -> gateway SMPP server:             ${fmt(through.rate)} submit_sm_resp/s  ratio ${ratio.toFixed(2)} (target >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`,
        `      ${through.answered} answered ESME_ROK in the window, ${through.refused} ESME_RTHROTTLED`,
        `  the same messages out to the sink:           ${fmt(endToEnd)} msg/s  ratio ${e2eRatio.toFixed(2)} (from the window's start to the last of them sent)`,
        `      gateway CPU a message, all threads, submit to receipt back to the customer: ${((cpu * 1e6) / Math.max(1, through.answered)).toFixed(0)} µs`,
        `  (took ${((performance.now() - t0) / 1000).toFixed(0)}s)`,
        '',
      ].join('\n'),
    );
  } finally {
    await gateway?.stop();
    await sink.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
