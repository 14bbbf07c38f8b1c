/**
 * `npm run bench:peer`: the gateway against Kannel 1.4.5 on this machine,
 * both sending to one SMPP sink on loopback (bench/kannel/sink.ts) through
 * one transceiver bind with a window of 100, loaded by wrk for the same
 * time with the same connections and receivers a request. See
 * docs/performance.md for what each figure means.
 *
 * Settings (environment): BENCH_PEER_SECONDS (load, default 20),
 * BENCH_PEER_WARMUP_SECONDS (default 3), BENCH_PEER_CASES (default
 * "32x1,128x1,32x100,128x100": connections x receivers a request),
 * BENCH_PEER_TARGETS (default "kannel,gateway", plus "split" with
 * GATEWAY_ROLES=split or --split), BENCH_PEER_NODE_ARGS (node flags of the
 * gateway processes, e.g. --cpu-prof), BENCH_PEER_KEEP=1 (keep the temp
 * directories: logs, Kannel's files, the gateway's database).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startGateway } from './kannel/gateway.ts';
import { KANNEL_INSTALL, kannelPrograms, startKannel } from './kannel/kannel.ts';
import { cpuSeconds, peakRssMb } from './kannel/proc.ts';
import type { Target } from './kannel/target.ts';
import type { SinkStats } from './kannel/sink.ts';
import { runWrk, WRK_INSTALL, wrkProgram, type WrkResult } from './kannel/wrk.ts';

const SECONDS = Number(process.env.BENCH_PEER_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_PEER_WARMUP_SECONDS ?? 3);
const WRK_THREADS = Number(process.env.BENCH_PEER_WRK_THREADS ?? 1);
const KEEP = process.env.BENCH_PEER_KEEP === '1';
/** A target whose outbox holds messages while none reach the sink for this long has stopped: its run fails. */
const STALL_MS = 60_000;
const CASES = (process.env.BENCH_PEER_CASES ?? '32x1,128x1,32x100,128x100').split(',').map((c) => {
  const [connections, perRequest] = c.split('x').map(Number);
  if (!connections || !perRequest) throw new Error(`BENCH_PEER_CASES: "${c}" is not connections x receivers, e.g. 32x1`);
  return { connections, perRequest };
});
const SPLIT = process.env.GATEWAY_ROLES === 'split' || process.argv.includes('--split');
const TARGETS = (process.env.BENCH_PEER_TARGETS ?? `kannel,gateway${SPLIT ? ',split' : ''}`).split(',');

type Kind = 'kannel' | 'gateway' | 'split';

interface Figures {
  /** HTTP requests answered 2xx a second, and the messages they carried. */
  acceptsPerSecond: number;
  messagesAcceptedPerSecond: number;
  /** Submits reaching the sink a second while wrk ran. */
  submitsPerSecondUnderLoad: number;
  /** Messages reaching the sink (load and drain) / time from the first request to the last submit. */
  endToEnd: number;
  /** Messages queued in the target when wrk stopped. */
  outboxAtEnd: number;
  drainSeconds: number;
  /** Peak RSS, MB, of all its processes together. */
  peakRssMb: number;
  /** CPU of its processes (all threads) a message, µs. */
  cpuPerMessageUs: number;
  sent: number;
  wrk: WrkResult;
}

// --- the sink, a child process ---
async function startSink() {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'kannel', 'sink.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = (): Promise<string> => new Promise((resolve) => waiting.push(resolve));
  const port = (JSON.parse(await next()) as { sink: number }).sink;
  return {
    port,
    stats: async (): Promise<SinkStats> => {
      const answer = next();
      child.stdin.write('stats\n');
      return JSON.parse(await answer) as SinkStats;
    },
    stop: () => child.kill('SIGTERM'),
  };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

/** Waits until the target's queue is empty and no submit reached the sink for a second; answers the last sink stats. */
async function drained(target: Target, sink: Sink, limitMs: number): Promise<SinkStats> {
  const deadline = Date.now() + limitMs;
  let last = await sink.stats();
  let stableSince = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await sink.stats();
    if (now.submits !== last.submits) {
      last = now;
      stableSince = Date.now();
      continue;
    }
    if (Date.now() - stableSince < 1000) continue;
    const outbox = await target.outbox();
    if (outbox === 0) return now;
    if (Date.now() - stableSince > STALL_MS)
      throw new Error(`${target.name} stopped sending: ${outbox} messages in its outbox, none reached the sink for ${STALL_MS / 1000} s`);
    if (Date.now() > deadline) throw new Error(`${target.name} did not drain within ${limitMs / 1000} s (${outbox} messages left)`);
  }
}

async function measure(kind: Kind, sink: Sink, connections: number, perRequest: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), `peer-${kind}-`));
  let target: Target | null = null;
  try {
    target = kind === 'kannel' ? await startKannel(dir, sink.port) : await startGateway(dir, sink.port, kind === 'gateway' ? 'all' : 'split');
    const t = target;
    const load = (seconds: number) =>
      runWrk({
        url: t.url,
        script: t.script,
        connections,
        threads: WRK_THREADS,
        seconds,
        env: { ...t.env, PEER_PER_REQUEST: String(perRequest), PEER_LUA_DIR: join(import.meta.dirname, 'kannel') },
      });
    await load(WARMUP_SECONDS);
    await drained(t, sink, 600_000);
    const before = await sink.stats();
    const cpu0 = t.pids().reduce((s, pid) => s + cpuSeconds(pid), 0);
    const started = Date.now();
    const wrk = await load(SECONDS);
    const loadEnded = Date.now();
    const [outboxAtEnd, atEnd] = [await t.outbox(), await sink.stats()];
    const after = await drained(t, sink, 900_000);
    const sent = after.submits - before.submits;
    const cpu = t.pids().reduce((s, pid) => s + cpuSeconds(pid), 0) - cpu0;
    const accepted = wrk.requests - wrk.failed;
    if (wrk.failed > 0 || wrk.socketErrors > 0) console.error(`  ${t.name}: ${wrk.failed} failed answers, ${wrk.socketErrors} socket errors`);
    return {
      acceptsPerSecond: accepted / wrk.seconds,
      messagesAcceptedPerSecond: (accepted * perRequest) / wrk.seconds,
      submitsPerSecondUnderLoad: (atEnd.submits - before.submits) / ((loadEnded - started) / 1000),
      endToEnd: sent / ((after.lastAt - started) / 1000),
      outboxAtEnd,
      drainSeconds: Math.max(0, (after.lastAt - loadEnded) / 1000),
      peakRssMb: t.pids().reduce((s, pid) => s + peakRssMb(pid), 0),
      cpuPerMessageUs: (cpu * 1e6) / Math.max(1, sent),
      sent,
      wrk,
    };
  } finally {
    await target?.stop();
    if (KEEP) console.error(`  kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

// --- the table ---
const ROWS: Array<[string, (f: Figures) => number, number]> = [
  ['HTTP accepts/s (requests)', (f) => f.acceptsPerSecond, 0],
  ['messages accepted/s', (f) => f.messagesAcceptedPerSecond, 0],
  ['submits/s at the sink during load', (f) => f.submitsPerSecondUnderLoad, 0],
  ['end-to-end msg/s (to last submit)', (f) => f.endToEnd, 0],
  ['outbox at end of load (messages)', (f) => f.outboxAtEnd, 0],
  ['drain after load (s)', (f) => f.drainSeconds, 1],
  ['messages sent', (f) => f.sent, 0],
  ['HTTP p99 latency (ms)', (f) => f.wrk.p99Ms, 1],
  ['CPU a message (µs, all threads)', (f) => f.cpuPerMessageUs, 0],
  ['peak RSS (MB, all processes)', (f) => f.peakRssMb, 0],
];

function table(title: string, results: Map<Kind, Figures>): string {
  const kinds = [...results.keys()];
  const name = (k: Kind) => (k === 'kannel' ? 'Kannel' : k === 'gateway' ? 'gateway' : 'gw api+dispatch');
  const kannel = results.get('kannel');
  const header = ['', ...kinds.flatMap((k) => (k !== 'kannel' && kannel ? [name(k), '/Kannel'] : [name(k)]))];
  const lines = [header];
  for (const [label, pick, digits] of ROWS) {
    const row = [label];
    for (const k of kinds) {
      const f = results.get(k);
      const v = f ? pick(f) : Number.NaN;
      row.push(v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
      if (k !== 'kannel' && kannel) {
        const base = pick(kannel);
        row.push(base > 0 ? (v / base).toFixed(2) : '-');
      }
    }
    lines.push(row);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return [title, ...lines.map((l) => `  ${l.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')}`)].join('\n');
}

/** What the gateway is held to against Kannel in each load: the end-to-end rate, with every message durable, in bounded memory. */
const TARGET_RATIO = 1.5;
const RSS_BOUND_MB = 300;

function verdicts(results: Map<Kind, Figures>): Array<{ text: string; met: boolean }> {
  const kannel = results.get('kannel');
  if (!kannel || kannel.endToEnd <= 0) return [];
  return [...results]
    .filter(([kind]) => kind !== 'kannel')
    .map(([kind, f]) => {
      const ratio = f.endToEnd / kannel.endToEnd;
      const bounded = f.peakRssMb < RSS_BOUND_MB;
      const met = ratio >= TARGET_RATIO && bounded;
      const rss = `peak RSS ${f.peakRssMb.toFixed(0)} MB${bounded ? '' : `, over ${RSS_BOUND_MB}`}`;
      // Three decimals: a ratio of 1.499 must not read as 1.50 beside "NOT met".
      return { text: `${kind}: end to end ${ratio.toFixed(3)}x Kannel, ${rss}: target ${met ? 'met' : 'NOT met'}`, met };
    });
}

async function main(): Promise<void> {
  if (!wrkProgram()) {
    console.error(`bench:peer needs wrk: ${WRK_INSTALL}`);
    process.exit(1);
  }
  const kinds = TARGETS.filter((k): k is Kind => k === 'kannel' || k === 'gateway' || k === 'split');
  if (kinds.includes('kannel') && !kannelPrograms()) {
    console.error(`Kannel is not installed, measuring the gateway alone: ${KANNEL_INSTALL}`);
    kinds.splice(kinds.indexOf('kannel'), 1);
  }
  const t0 = performance.now();
  const tally: boolean[] = [];
  const sink = await startSink();
  const say = (text: string): void => void process.stdout.write(`${text}\n`);
  say(
    [
      `Gateway vs Kannel: HTTP accept -> submit_sm at one SMPP sink (loopback, one transceiver bind, window 100, receipts on),`,
      `wrk ${SECONDS}s after a ${WARMUP_SECONDS}s warm-up, ${WRK_THREADS} wrk thread(s); gateway on SQLite with the default durability.`,
    ].join('\n'),
  );
  try {
    for (const { connections, perRequest } of CASES) {
      const results = new Map<Kind, Figures>();
      for (const kind of kinds) {
        console.error(`-c${connections}, ${perRequest} receiver(s) a request: ${kind}...`);
        try {
          results.set(kind, await measure(kind, sink, connections, perRequest));
        } catch (err) {
          say(`  ${kind}: FAILED: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      say(table(`\n-c${connections}, ${perRequest} receiver${perRequest === 1 ? '' : 's'} a request:`, results));
      for (const line of verdicts(results)) {
        say(`  ${line.text}`);
        tally.push(line.met);
      }
    }
    if (tally.length > 0)
      say(`\ntargets (end to end >= ${TARGET_RATIO}x Kannel, peak RSS < ${RSS_BOUND_MB} MB): met in ${tally.filter(Boolean).length} of ${tally.length} loads`);
    say(`\n(took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  } finally {
    sink.stop();
  }
}

await main();
