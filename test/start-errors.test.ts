import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A start that cannot work stops with one line naming the setting, its
 * value and what it must be, and an exit code a supervisor can act on
 * (78: fix the configuration; 69: something outside is not there yet):
 * src/config-errors.ts, src/start-errors.ts. Each case runs the real
 * server process (`npm start`).
 */

const dir = mkdtempSync(join(tmpdir(), 'gw-start-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        PGOPTIONS: '',
        GATEWAY_DATA_DIR: join(dir, 'data'),
        GATEWAY_DEMO: 'false',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** One line per problem, no stack trace. */
function lines(stderr: string): string[] {
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
  return stderr.trim().split('\n');
}

test('an enumeration names its allowed values', async () => {
  const res = await start({ SQLITE_SYNCHRONOUS: 'full' });
  assert.equal(res.code, 78);
  assert.deepEqual(lines(res.stderr), ['configuration error: SQLITE_SYNCHRONOUS="full" must be one of FULL, NORMAL']);
});

test('every bad variable on its own line: numbers with their range, text with its form; secrets are not repeated', async () => {
  const res = await start({
    PORT: '99999',
    LOG_LEVEL: 'verbose',
    DISPATCH_BATCH: 'abc',
    GATEWAY_ADMIN_TOKEN: 'short',
    DATABASE_URL: 'mysql://root:hunter2@db/x',
    HEAP_GROWTH_PERCENT: '-5',
  });
  assert.equal(res.code, 78);
  assert.deepEqual(lines(res.stderr).sort(), [
    'configuration error: DATABASE_URL="mysql://root:***@db/x" must be a PostgreSQL URL: postgres://user:password@host:5432/database (leave it unset to use SQLite)',
    'configuration error: DISPATCH_BATCH="abc" must be a whole number from 1 to 5000',
    'configuration error: GATEWAY_ADMIN_TOKEN=(hidden, 5 characters) must be text of at least 16 characters',
    'configuration error: HEAP_GROWTH_PERCENT="-5" must be a whole number from 0 to 300',
    'configuration error: LOG_LEVEL="verbose" must be one of fatal, error, warn, info, debug, trace, silent',
    'configuration error: PORT="99999" must be a whole number from 0 to 65535',
  ]);
  assert.doesNotMatch(res.stderr, /hunter2/);
});

test('a HOST that is no address, or not one of this machine', async () => {
  const malformed = await start({ HOST: 'not a host!' });
  assert.equal(malformed.code, 78);
  assert.deepEqual(lines(malformed.stderr), [
    'configuration error: HOST="not a host!" must be an IP address (0.0.0.0, 127.0.0.1, ::) or a host name of this machine',
  ]);
  // 192.0.2.1 is reserved for documentation: never an address of this machine.
  const elsewhere = await start({ HOST: '192.0.2.1' });
  assert.equal(elsewhere.code, 78);
  assert.deepEqual(lines(elsewhere.stderr), [
    'gateway failed to start: cannot listen: HOST="192.0.2.1" is not an address of this machine; use one of its addresses, 127.0.0.1, or 0.0.0.0 for all',
  ]);
});

test('a port in use', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as AddressInfo;
  try {
    const res = await start({ PORT: String(port) });
    assert.equal(res.code, 69);
    assert.deepEqual(lines(res.stderr), [
      `gateway failed to start: cannot listen: port ${port} is in use (HOST="127.0.0.1" PORT=${port}); stop the process that holds it or set PORT to a free port`,
    ]);
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
});

test('a PostgreSQL server that does not answer: named without its password', async () => {
  const res = await start({ DATABASE_URL: 'postgres://gw:hunter2@127.0.0.1:1/gateway' });
  assert.equal(res.code, 69);
  assert.deepEqual(lines(res.stderr), [
    'gateway failed to start: database unreachable: DATABASE_URL=postgres://gw:***@127.0.0.1:1/gateway: connection refused (ECONNREFUSED); check that PostgreSQL runs there and accepts connections',
  ]);
});

test('a PostgreSQL database that does not exist', { skip: !process.env.TEST_DATABASE_URL }, async () => {
  const url = new URL(process.env.TEST_DATABASE_URL ?? '');
  url.pathname = '/no_such_database_here';
  const res = await start({ DATABASE_URL: url.toString() });
  assert.equal(res.code, 78);
  const [line] = lines(res.stderr);
  assert.match(
    line ?? '',
    /^gateway failed to start: database missing: DATABASE_URL=postgres:\/\/.*\/no_such_database_here: .*create it or fix the name in DATABASE_URL$/,
  );
});

test('a data directory that cannot be one', async () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory');
  const res = await start({ GATEWAY_DATA_DIR: join(file, 'data') });
  assert.equal(res.code, 78);
  const [line] = lines(res.stderr);
  assert.match(
    line ?? '',
    /^gateway failed to start: the data directory is not a directory: GATEWAY_DATA_DIR=".*a-file\/data": .*point GATEWAY_DATA_DIR at a directory$/,
  );
});
