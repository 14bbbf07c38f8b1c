import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';

export interface GatewayProcess {
  base: string;
  child: ChildProcess;
  /** What it printed on stdout that is not a JSON log line (operator token, demo account), so far. */
  output(): string;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs `src/server.ts` as a real process (as `npm start -- ...args` does) and waits until it listens. */
export function spawnGateway(env: Record<string, string>, args: string[] = []): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts', ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  let output = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 30_000);
    child.once('exit', (code, signal) => reject(new Error(`gateway exited with ${code} (signal ${signal}): ${stderr}`)));
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) {
        output += `${line}\n`;
        return;
      }
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg?.startsWith('gateway listening') && entry.address) {
        clearTimeout(timer);
        resolve({
          base: entry.address,
          child,
          output: () => output,
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
  });
}

/** JSON over HTTP to a spawned gateway. */
export async function http(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : null };
}

/** Reads until `ok` holds (every 50 ms), or fails naming what it waited for and the last value read. */
export async function until<T>(what: string, read: () => T | Promise<T>, ok: (value: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)?.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A loopback port free right now (for a server a test starts as a child process). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

/** Writes zeros to `path` until its file system refuses: ENOSPC. */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
