/**
 * Sums up the V8 CPU profiles a `npm run bench:peer` run wrote with
 * BENCH_PEER_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" (one file a thread:
 * the gateway's event loop, its SQLite thread, its checkpointer):
 *
 *   node --import tsx bench/kannel/profile.ts DIR [top]
 *
 * For each profile: the time sampled, the share that was not idle, self
 * time by area (HTTP, validation, access log, rate limit, accept, SQLite,
 * dispatcher, SMPP PDUs, receipts, GC, ...), the top functions by self
 * time, and the inclusive time of the hot-path functions (a function's
 * time with everything it called).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Areas by URL (first match wins) or by V8's pseudo-functions. */
const AREAS: Array<[string, RegExp]> = [
  ['access log / logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream|pino-std-serializers)\/|src\/http\/access-log/],
  ['rate-limit hook', /@fastify\/rate-limit|src\/http\/rate-limit|src\/accounts\/rate-limits/],
  [
    'HTTP: fastify',
    /node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify\/(?!rate-limit)|fast-json-stringify|secure-json-parse|fast-querystring|toad-cache|process-warning|rfdc|abstract-logging)/,
  ],
  ['validation (ajv, typebox)', /node_modules\/(ajv|ajv-formats|@sinclair)|src\/http\/validation|src\/common\/schema/],
  ['HTTP: edge routes, envelopes', /src\/http\//],
  ['phone numbers (libphonenumber)', /libphonenumber|src\/common\/phone/],
  ['SMPP PDUs (smpp package)', /node_modules\/smpp\//],
  ['SMPP connector, receipts parse', /src\/carriers\/smpp\//],
  ['receipts/outcomes writing', /src\/messaging\/outcomes|src\/messaging\/replies/],
  ['accept (send, accept, billing)', /src\/messaging\/|src\/billing\/|src\/routing\/|src\/accounts\/|src\/contacts\//],
  ['dispatcher, claim, handoff', /src\/dispatch\//],
  ['SQLite worker side (jobs, bulk SQL)', /src\/db\/(sqlite-worker|bulk|jobs)/],
  ['DB client side (thread, group commit, wal-sync)', /src\/db\//],
  ['Kysely', /node_modules\/kysely/],
  ['better-sqlite3', /better-sqlite3/],
  ['ids (uuid)', /src\/common\/ids|node_modules\/uuid/],
  ['other src/', /src\//],
  ['node: net, streams, http', /^node:(net|_http|http|stream|internal\/streams|internal\/http|internal\/stream_base|_stream)/],
  ['node: worker messaging', /^node:internal\/(worker|per_context\/messageport|event_target)/],
  ['node: other', /^node:/],
  ['tsx loader', /node_modules\/(tsx|esbuild)/],
  ['other node_modules', /node_modules/],
];

function areaOf(node: Node): string {
  const { functionName, url } = node.callFrame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(program)') return '(program: native, not attributed)';
  if (url === '') return functionName ? `native/builtin (${functionName.slice(0, 30)})` : 'native/builtin';
  for (const [name, re] of AREAS) if (re.test(url)) return name;
  return 'other';
}

const short = (url: string): string => url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/').replace(/^file:\/\//, '');
const keyOf = (n: Node): string => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

/** Hot-path functions whose inclusive time is printed (function name, and a part of the URL). */
const WATCH: Array<[string, RegExp, RegExp]> = [
  ['HTTP parse (parserOnHeadersComplete..)', /^parserOnIncoming$|^parserOnHeadersComplete$/, /_http_server|_http_common/],
  ['route handler /messages/sms/send', /.*/, /src\/http\/gateway\/sms\.ts/],
  ['sendSms', /^sendSms$/, /src\/messaging\/sms\.ts/],
  ['resolveTargeting', /^resolveTargeting$/, /src\/messaging\/send\.ts/],
  ['core.accept (main side)', /^accept$/, /src\/core\.ts/],
  ['acceptBatch (SQLite thread)', /^acceptBatch$/, /src\/messaging\/accept\.ts/],
  ['access log hook', /.*/, /src\/http\/access-log\.ts/],
  ['rate-limit hook', /.*/, /src\/http\/rate-limit\.ts/],
  ['pino write', /^write$|^LOG$/, /pino\/lib\/proto|sonic-boom/],
  ['ajv validate (generated)', /^validate/, /^$/],
  ['serialize answer', /.*/, /fast-json-stringify|fastify\/lib\/reply/],
  ['claim job (SQLite thread)', /.*/, /src\/dispatch\/claim\.ts/],
  ['dispatcher', /.*/, /src\/dispatch\/dispatcher\.ts/],
  ['SMPP connector', /.*/, /src\/carriers\/smpp\/connector\.ts/],
  ['SMPP bind (socket, PDUs)', /.*/, /src\/carriers\/smpp\/bind\.ts/],
  ['PDU toBuffer (encode)', /^toBuffer$/, /node_modules\/smpp\/lib\/pdu/],
  ['PDU fromBuffer (decode)', /^fromBuffer$|^PDU$/, /node_modules\/smpp\/lib\/pdu/],
  ['receipts parse (inbound)', /.*/, /src\/carriers\/smpp\/(inbound|receipt)\.ts/],
  ['outcomes (both sides)', /.*/, /src\/messaging\/outcomes\.ts/],
  ['SQLite thread client (postMessage..)', /.*/, /src\/db\/sqlite-thread\.ts/],
  ['group commit', /.*/, /src\/db\/group-commit\.ts/],
  ['wal fsync wait', /.*/, /src\/db\/wal-sync\.ts/],
  ['worker: run job/statement', /.*/, /src\/db\/sqlite-worker\.ts/],
  ['bulk SQL (insertRows..)', /.*/, /src\/db\/bulk\.ts/],
  ['Kysely (compile, execute)', /.*/, /node_modules\/kysely/],
  ['better-sqlite3 calls', /.*/, /better-sqlite3/],
  ['uuid v7 ids', /.*/, /src\/common\/ids\.ts/],
  ['libphonenumber', /.*/, /libphonenumber/],
];

function summarize(file: string, top: number): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  // The gateway runs as built (.tmp/bench-build-*/x.js): named as its source (src/x.ts) for the areas below.
  for (const n of p.nodes) n.callFrame.url = n.callFrame.url.replace(/\.tmp\/bench-build-[^/]+\/(.*)\.js$/, 'src/$1.ts');
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const watched = new Map<string, number>();
  let total = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000; // ms
    const leaf = byId.get(id);
    if (!leaf) return;
    total += dt;
    const area = areaOf(leaf);
    if (area === '(idle)') {
      idle += dt;
      return;
    }
    self.set(keyOf(leaf), (self.get(keyOf(leaf)) ?? 0) + dt);
    areas.set(area, (areas.get(area) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: Node | undefined = leaf; n; n = byId.get(parent.get(n.id) ?? -1)) {
      for (const [label, fn, url] of WATCH) {
        if (seen.has(label)) continue;
        if (fn.test(n.callFrame.functionName) && url.test(n.callFrame.url)) {
          seen.add(label);
          watched.set(label, (watched.get(label) ?? 0) + dt);
        }
      }
    }
  });
  const busy = total - idle;
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1).padStart(5)}%`;
  const ms = (v: number) => `${v.toFixed(0).padStart(7)} ms`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `${file}`,
    `  sampled ${(total / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s (${((100 * busy) / Math.max(1, total)).toFixed(0)}% of the thread)`,
    '  self time by area (share of busy):',
    ...sorted(areas)
      .slice(0, 24)
      .map(([k, v]) => `    ${ms(v)} ${pct(v)}  ${k}`),
    `  top ${top} functions by self time:`,
    ...sorted(self)
      .slice(0, top)
      .map(([k, v]) => `    ${ms(v)} ${pct(v)}  ${k}`),
    '  inclusive time of hot-path functions:',
    ...sorted(watched).map(([k, v]) => `    ${ms(v)} ${pct(v)}  ${k}`),
    '',
  ].join('\n');
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node --import tsx bench/kannel/profile.ts DIR [top]');
  process.exit(64);
}
const top = Number(process.argv[3] ?? 25);
for (const f of readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort())
  process.stdout.write(`${summarize(join(dir, f), top)}\n`);
