/**
 * The gateway as a target of `npm run bench:peer`: one `all` process, or an
 * `api` + `dispatch` pair on one data directory (`split`), on a fresh SQLite
 * data directory with the default durability, one SMPP connection (window
 * 100) to the sink, and an account, route and API key made through the
 * operator API. It runs as deployed: built (`npm run build`, into a
 * scratch directory of the tree) and started with `node server.js`;
 * BENCH_PEER_FROM_SOURCE=1 runs the sources through tsx instead (its loader
 * thread and transpiled modules add about 100 MB of memory, no CPU once
 * loaded).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtServer } from '../proc.ts';
import { type Proc, start, until } from './proc.ts';
import type { Target } from './target.ts';

const HERE = import.meta.dirname;
/** The gateway tree to run (default this one): BENCH_PEER_GATEWAY_DIR=/path/to/a/copy compares another version (A/B). */
const ROOT = process.env.BENCH_PEER_GATEWAY_DIR ?? join(HERE, '..', '..');
const TOKEN = 'bench-operator-token-0000000000';
/** Extra node flags for the gateway processes, e.g. BENCH_PEER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_ARGS = (process.env.BENCH_PEER_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** Extra options of the SMPP connection (JSON), e.g. BENCH_PEER_CARRIER='{"queueSize":400}' or '{"registeredDelivery":0}'. */
const CARRIER_EXTRA = JSON.parse(process.env.BENCH_PEER_CARRIER ?? '{}') as Record<string, unknown>;

export type GatewayMode = 'all' | 'split';

/** The node arguments that start the gateway's server: the tree built once a run (builtServer), or its sources with tsx. */
function serverCommand(): string[] {
  return process.env.BENCH_PEER_FROM_SOURCE === '1' ? ['--import', 'tsx', 'src/server.ts'] : [builtServer(ROOT)];
}

async function post(base: string, path: string, body: unknown): Promise<{ id: number; key: string }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as { id: number; key: string };
}

/** The address of the first "gateway listening" line of a log. */
function listeningIn(log: string): string | undefined {
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line.includes('gateway listening')) continue;
    const entry = JSON.parse(line) as { address?: unknown };
    if (typeof entry.address === 'string') return entry.address;
  }
  return undefined;
}

export async function startGateway(dir: string, sinkPort: number, mode: GatewayMode): Promise<Target> {
  const carriersFile = join(dir, 'carriers.json');
  writeFileSync(
    carriersFile,
    JSON.stringify({
      smpp: [
        {
          name: 'sink',
          host: '127.0.0.1',
          port: sinkPort,
          systemId: 'bench',
          passwordEnv: 'BENCH_SMPP_PASSWORD',
          sourceAddr: 'ACME',
          windowSize: 100,
          idBase: 'decimal',
          ...CARRIER_EXTRA,
        },
      ],
    }),
  );
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    GATEWAY_CARRIERS_FILE: carriersFile,
    BENCH_SMPP_PASSWORD: 'benchpw',
  };
  const procs: Proc[] = [];
  const args = serverCommand();
  const launch = async (role: string): Promise<{ proc: Proc; base: string }> => {
    const log = join(dir, `gateway-${role}.log`);
    writeFileSync(log, '');
    const proc = start(`gateway (${role})`, process.execPath, [...NODE_ARGS, ...args], {
      cwd: ROOT,
      env: { ...env, GATEWAY_ROLE: role },
      log,
    });
    procs.push(proc);
    const base = await until(`the gateway (${role}) to listen`, () => listeningIn(log), 60_000, proc);
    return { proc, base };
  };
  try {
    // The api (or all) process first: it creates the database.
    const front = await launch(mode === 'all' ? 'all' : 'api');
    const sender = mode === 'all' ? front : await launch('dispatch');
    await until('the SMPP bind of the gateway', async () => ((await fetch(`${sender.base}/readyz`)).ok ? true : undefined), 60_000, sender.proc);
    const account = await post(front.base, '/admin/accounts', { name: 'Bench', balance: 1_000_000_000 });
    const route = await post(front.base, '/admin/routes', {
      displayName: 'SMPP',
      productName: 'SMS',
      productId: 1,
      farePrice: '0.01',
      replyFarePrice: '0',
      channel: 'SMS',
      connector: 'sink',
    });
    await post(front.base, `/admin/accounts/${account.id}/routes`, { routeId: route.id });
    const { key } = await post(front.base, `/admin/accounts/${account.id}/api-keys`, {});
    return {
      name: mode === 'all' ? 'gateway' : 'gateway api+dispatch',
      url: front.base,
      script: join(HERE, 'gateway.lua'),
      env: { PEER_KEY: key, PEER_ROUTE: String(route.id) },
      pids: () => procs.map((p) => p.pid),
      outbox: async () => {
        const res = await fetch(`${front.base}/admin/cluster`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = (await res.json()) as { outbox: Array<{ queued: number; sending: number; scheduled: number }> };
        return body.outbox.reduce((n, c) => n + c.queued + c.sending + c.scheduled, 0);
      },
      stop: async () => {
        for (const p of [...procs].reverse()) await p.stop(30_000);
      },
    };
  } catch (err) {
    for (const p of [...procs].reverse()) await p.stop(5_000);
    throw err;
  }
}
