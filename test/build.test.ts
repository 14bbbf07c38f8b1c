import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { http, until } from './process.ts';
import { freshDatabase, type TestDatabase } from './helpers.ts';

/**
 * The production build (`npm run build`, docs/deploy.md): the sources
 * compiled to plain JavaScript and run by node alone, no tsx. The build goes
 * to a directory of its own under .tmp/ (inside the project, so that the
 * compiled files find node_modules), never to dist/, which a developer may
 * be using.
 */
const root = process.cwd();
const scratch = join(root, '.tmp');
mkdirSync(scratch, { recursive: true });
const outDir = mkdtempSync(join(scratch, 'build-'));
let child: ChildProcess | null = null;
let db: TestDatabase | null = null;
const ADMIN_TOKEN = 'build-test-operator-token-0123456789';
/** The built processes' environment: a fresh database (SQLite, or a PostgreSQL schema on the suite's PostgreSQL run). */
let env: NodeJS.ProcessEnv = {};

before(async () => {
  db = await freshDatabase();
  env = {
    ...process.env,
    ...db.env,
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_DEMO: 'false',
    LOG_LEVEL: 'info',
    SIMULATOR_DELIVERY_MS: '0',
  };
  // No tsx loader or other flag from the test runner: node alone runs the build.
  delete env.NODE_OPTIONS;
});

after(async () => {
  child?.kill('SIGKILL');
  rmSync(outDir, { recursive: true, force: true });
  await db?.drop();
});

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => join(e.parentPath, e.name));
}

/** The compiled CLI, as an operator runs it on the server: node alone. */
function cli(...args: string[]) {
  const res = spawnSync(process.execPath, [join(outDir, 'cli', 'main.js'), ...args], { env, encoding: 'utf8' });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

test('npm run build compiles src/ to JavaScript that imports JavaScript', () => {
  // The project's build script, told another output directory.
  const res = spawnSync('npm', ['run', 'build', '--', '--outDir', outDir], { cwd: root, encoding: 'utf8' });
  assert.equal(res.status, 0, `npm run build failed:\n${res.stdout}${res.stderr}`);
  for (const entry of ['server.js', 'cli/main.js', 'db/sqlite-worker.js', 'db/sqlite-thread.js']) assert.ok(existsSync(join(outDir, entry)), `${entry} built`);
  // Every relative import names a .js file that was built (rewriteRelativeImportExtensions), none a .ts source.
  const relativeImport = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
  const missing: string[] = [];
  for (const file of jsFiles(outDir)) {
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(relativeImport)) {
      if (!spec?.endsWith('.js') || !existsSync(join(file, '..', spec))) missing.push(`${relative(outDir, file)}: ${spec}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('node runs the build: the gateway sends an SMS through the simulator, and the compiled CLI works', async () => {
  assert.ok(existsSync(join(outDir, 'server.js')), 'built by the previous test');
  const server = spawn(process.execPath, [join(outDir, 'server.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child = server;
  let stderr = '';
  server.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  // The address it listens on (PORT=0: a free port), from its log line.
  const base = await new Promise<string>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`the built gateway exited with ${code}: ${stderr}`)));
    createInterface({ input: server.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg?.startsWith('gateway listening') && entry.address) resolve(entry.address);
    });
  });
  await until(
    '/healthz',
    () => http(base, 'GET', '/healthz').then((r) => r.status),
    (s) => s === 200,
  );
  // The API documentation is served from the build too.
  assert.equal((await http(base, 'GET', '/openapi.json')).status, 200);

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const account = await http(base, 'POST', '/admin/accounts', { name: 'Built', balance: '1' }, admin);
  assert.equal(account.status, 201, JSON.stringify(account.body));
  const route = await http(
    base,
    'POST',
    '/admin/routes',
    { displayName: 'SMS', productName: 'SMS', productId: 1, farePrice: '0.05', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
    admin,
  );
  assert.equal(route.status, 201, JSON.stringify(route.body));
  assert.equal((await http(base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin)).status, 204);
  const key = await http(base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, admin);
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const apiKey = { 'x-api-key': key.body.key as string };

  const sent = await http(base, 'POST', '/messages/sms/send', { receivers: [5511999998888], message: 'from the build', route: route.body.id }, apiKey);
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const requestId = sent.headers.get('x-request-id');
  // Accepted by the SQLite thread (the compiled worker and its job modules), sent by the dispatcher, receipted by the simulator.
  const report = await until(
    'the message DELIVERED in the report',
    () => http(base, 'GET', `/reports/messages/sent?requestId=${requestId}`, undefined, apiKey),
    (r) => r.body?.object?.[0]?.status === 'DELIVERED',
  );
  assert.equal(report.body.object.length, 1);

  // The compiled CLI, on the same database while the gateway runs.
  const shown = cli('account', 'show', '--account', String(account.body.id));
  assert.equal(shown.code, 0, shown.err);
  assert.deepEqual({ name: JSON.parse(shown.out).name, balance: JSON.parse(shown.out).balance }, { name: 'Built', balance: 0.95 });

  server.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  child = null;
});

test('the compiled CLI reports a usage error and a missing account as the sources do', () => {
  assert.equal(cli().code, 64);
  const missing = cli('account', 'show', '--account', '999');
  assert.equal(missing.code, 65);
  assert.match(missing.err, /^error: /);
});
