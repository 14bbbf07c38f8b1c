/**
 * The README's examples, run as a newcomer would run them: the gateway
 * started with the README's first command in a fresh directory (embedded
 * SQLite), then every ```sh run block in order in one bash session (so the
 * ids each block takes from an answer are there for the next), and each
 * ```sh restart block as a stop and a new start of the gateway. Any HTTP
 * error answer (curl --fail-with-body) or failing command fails the test.
 *
 * The only changes to the text: the ports (3000, 2775) become free ones,
 * and KEY is set to the demo API key the gateway printed, as the README
 * tells the reader to do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DIALECT } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '..');

interface Block {
  kind: 'run' | 'restart';
  text: string;
}

export function readmeBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```sh (run|restart)\n([\s\S]*?)^```$/gm)].map((m) => ({ kind: m[1] as Block['kind'], text: m[2] ?? '' }));
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The README's first command, without the install: the line of the first block that starts the gateway. */
function firstStart(markdown: string): string {
  const first = /^```sh\n([\s\S]*?)^```$/m.exec(markdown)?.[1] ?? '';
  const line = first.split('\n').find((l) => l.includes('npm start'));
  assert.ok(line, 'the README starts with the command that runs the gateway');
  return (line.split('&&').pop() ?? '').replace(/#.*$/, '').trim();
}

test('every example of the README works as written, against a gateway started as the README says', { skip: DIALECT !== 'sqlite' }, async () => {
  const markdown = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = readmeBlocks(markdown);
  assert.ok(blocks.filter((b) => b.kind === 'run').length >= 5, 'the README has its runnable examples');
  const [gatewayPort, smscPort] = [await freePort(), await freePort()];
  const ports = (text: string) => text.replaceAll('localhost:3000', `localhost:${gatewayPort}`).replaceAll('2775', String(smscPort));

  // A fresh directory standing for the clone: the project's files, its own data/.
  const work = mkdtempSync(join(tmpdir(), 'gw-readme-'));
  for (const name of ['package.json', 'node_modules', 'src', 'tools', 'tsconfig.json', 'scripts', 'web', 'clients'])
    symlinkSync(join(ROOT, name), join(work, name));

  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body --max-time 30 "$@"; }',
    // The gateway in its own process group, so that a stop stops npm and node alike.
    'start_gateway() { setsid bash -c "$1" > gateway.log 2>&1 & echo $! > gateway.pid',
    '  for _ in $(seq 1 240); do command curl -sf -o /dev/null localhost:$PORT/healthz && return 0; sleep 0.25; done',
    '  cat gateway.log; return 1; }',
    'stop_gateway() { kill -TERM -- -$(cat gateway.pid) 2>/dev/null || true',
    '  while kill -0 -- -$(cat gateway.pid) 2>/dev/null; do sleep 0.1; done; }',
    'trap stop_gateway EXIT',
    `start_gateway ${JSON.stringify(firstStart(markdown))}`,
    `KEY=$(sed -n 's/^Demo API key: //p' gateway.log)`,
    '[ -n "$KEY" ] || { echo "no demo key printed"; cat gateway.log; exit 1; }',
    ...blocks.map((b, i) =>
      b.kind === 'run'
        ? `echo "--- README block ${i + 1}"\n${ports(b.text)}`
        : `echo "--- README restart ${i + 1}"\nstop_gateway\nstart_gateway ${JSON.stringify(ports(b.text).trim())}`,
    ),
    'echo "--- README done"',
  ].join('\n');
  writeFileSync(join(work, 'readme.sh'), script);

  const env: Record<string, string | undefined> = { ...process.env, PORT: String(gatewayPort), HOST: '127.0.0.1' };
  for (const name of ['DATABASE_URL', 'GATEWAY_DATA_DIR', 'GATEWAY_ADMIN_TOKEN', 'GATEWAY_DEMO', 'GATEWAY_CARRIERS_FILE', 'TEST_DATABASE_URL'])
    delete env[name];
  try {
    // The session and everything it left in the background (the SMSC simulator) form one process group, ended below.
    const run = spawnSync('setsid', ['bash', '-c', "bash readme.sh; status=$?; trap '' TERM; kill -- -$$ 2>/dev/null; exit $status"], {
      cwd: work,
      env,
      encoding: 'utf8',
      timeout: 600_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, `the README's examples failed:\n${output}`);
    assert.match(output, /--- README done/);
    assert.doesNotMatch(output, /"hasError":true/, 'no answer in the error envelope');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
