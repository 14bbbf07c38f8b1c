import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The gateway's server as deployed: the tree at `root` built (`npm run
 * build`) into a scratch directory inside it, so that the built modules
 * find its node_modules, once a run and removed at exit. Returns the path
 * of its server.js.
 */
const builds = new Map<string, string>();
export function builtServer(root: string): string {
  const known = builds.get(root);
  if (known) return known;
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const outDir = mkdtempSync(join(root, '.tmp', 'bench-build-'));
  process.on('exit', () => rmSync(outDir, { recursive: true, force: true }));
  const res = spawnSync('npm', ['run', 'build', '--', '--outDir', outDir], { cwd: root, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`npm run build failed:\n${res.stdout}${res.stderr}`);
  const server = join(outDir, 'server.js');
  builds.set(root, server);
  return server;
}

/** CPU seconds (user + system, all threads) a process has used: /proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s. */
export function cpuOf(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident memory of a process, MB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Extra node flags for the child processes, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

export interface Child {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a child process (through tsx, unless it is built JavaScript) and resolves with the first JSON stdout line `pick` accepts. */
export function spawnChild<T>(
  args: string[],
  env: Record<string, string>,
  pick: (entry: Record<string, unknown>) => T | undefined,
): Promise<Child & { value: T }> {
  const loader = args[0]?.endsWith('.js') ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...NODE_ARGS, ...loader, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.once('exit', () => child.kill('SIGTERM')); // never leave a server behind
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const value = pick(JSON.parse(line) as Record<string, unknown>);
      if (value !== undefined) {
        resolve({
          child,
          value,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
  });
}

/** POST of JSON to a gateway started by a benchmark (operator API set-up); throws on an error answer. */
export async function post(base: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ id: number; key: string }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as { id: number; key: string };
}
