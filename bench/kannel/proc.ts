/** Child processes of `npm run bench:peer`: output to a log file (never parsed while the load runs), waited for by condition. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import net from 'node:net';

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  log: string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL'); // never leave a server behind
});

export function start(name: string, command: string, args: string[], options: { env?: Record<string, string>; cwd?: string; log: string }): Proc {
  const out = openSync(options.log, 'a');
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', out, out] });
  running.add(child);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    }),
  );
  return {
    name,
    child,
    pid: child.pid ?? 0,
    log: options.log,
    stop: async (graceMs = 15_000) => {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Waits until `read` answers a value (not undefined), every 100 ms; fails after `ms` naming `what`, or when `proc` exits. */
export async function until<T>(what: string, read: () => Promise<T | undefined> | T | undefined, ms = 60_000, proc?: Proc): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (proc && proc.child.exitCode !== null) throw new Error(`${proc.name} exited (${proc.child.exitCode}) while waiting for ${what}; see ${proc.log}`);
    const value = await Promise.resolve()
      .then(read)
      .catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000}s waiting for ${what}${proc ? `; see ${proc.log}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Ports free on loopback now, all different: each is held until all are found (a port closed may be handed out again at once). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((server) => {
      const address = server.address();
      return typeof address === 'object' && address ? address.port : 0;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Peak resident memory (VmHWM) of a running process, MB. */
export function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds (user + system, all threads) a running process has used. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The full path of a program on PATH (or in /usr/sbin, where Debian puts Kannel's), or null. */
export function which(program: string): string | null {
  const found = spawnSync('sh', ['-c', `command -v ${program} || ls /usr/sbin/${program} /usr/local/sbin/${program} 2>/dev/null | head -1`], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim().split('\n')[0];
  return path ? path : null;
}
