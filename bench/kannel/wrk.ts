/** Runs wrk with one of the bench/kannel/*.lua scripts and reads the JSON line its done() prints. */
import { spawn } from 'node:child_process';
import { which } from './proc.ts';

export const WRK_INSTALL = 'apt-get install -y wrk   (Debian/Ubuntu; or build https://github.com/wg/wrk)';

export interface WrkResult {
  seconds: number;
  requests: number;
  /** Answers that were not 2xx/3xx, and socket errors (connect, read, write, timeout). */
  failed: number;
  socketErrors: number;
  p50Ms: number;
  p99Ms: number;
}

export function wrkProgram(): string | null {
  return which('wrk');
}

export function runWrk(options: {
  url: string;
  script: string;
  connections: number;
  threads: number;
  seconds: number;
  env: Record<string, string>;
}): Promise<WrkResult> {
  const wrk = wrkProgram();
  if (!wrk) throw new Error(`wrk is not installed: ${WRK_INSTALL}`);
  const args = [`-t${options.threads}`, `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '30s', '-s', options.script, options.url];
  const child = spawn(wrk, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"wrk"'));
      if (code !== 0 || !line) return reject(new Error(`wrk ${args.join(' ')} failed (${code}): ${err}${out}`));
      const r = JSON.parse(line) as Record<string, number>;
      const n = (k: string): number => r[k] ?? 0;
      resolve({
        seconds: n('duration_us') / 1e6,
        requests: n('requests'),
        failed: n('status'),
        socketErrors: n('connect') + n('read') + n('write') + n('timeout'),
        p50Ms: n('p50_us') / 1000,
        p99Ms: n('p99_us') / 1000,
      });
    });
  });
}
