// Builds the panel (web/ -> web/dist, served by the gateway at /panel/) when
// web/dist is missing or older than its sources. `npm start` runs it first
// (prestart), the panel's browser tests too; `npm run build:web` builds always.
//
//   node scripts/build-web.mjs            build if stale
//   node scripts/build-web.mjs --force    build
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILT = join(ROOT, 'web/dist/index.html');
// One build at a time: test files running side by side may all find web/dist stale.
const LOCK = join(tmpdir(), `gateway-web-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`);
const SOURCES = ['web/src', 'web/index.html', 'web/vite.config.ts', 'clients/typescript/index.ts', 'clients/typescript/schema.d.ts'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** True when web/dist is missing or older than a source file. */
export function webIsStale() {
  if (!existsSync(BUILT)) return true;
  const built = statSync(BUILT).mtimeMs;
  return SOURCES.some((s) => newest(join(ROOT, s)) > built);
}

/** Takes the build lock, waiting while another process builds (a lock older than 5 minutes is left over: taken). */
function lock() {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      closeSync(openSync(LOCK, 'wx'));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = existsSync(LOCK) ? Date.now() - statSync(LOCK).mtimeMs : 0;
      if (age > 300_000 || Date.now() > deadline) rmSync(LOCK, { force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

/** Builds web/dist with Vite (when stale, or always with force); returns whether it built. */
export function buildWeb({ force = false } = {}) {
  if (!force && !webIsStale()) return false;
  lock();
  try {
    // Another process may have built it while this one waited.
    if (!force && !webIsStale()) return false;
    return viteBuild();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

function viteBuild() {
  const vite = join(ROOT, 'node_modules/vite/bin/vite.js');
  if (!existsSync(vite)) {
    // A production install (npm ci --omit=dev) has no Vite: the panel is built where the dev dependencies are.
    process.stderr.write('The panel is not built and Vite is not installed (dev dependencies): /panel/ answers 503 until `npm run build:web`.\n');
    return false;
  }
  const res = spawnSync(process.execPath, [vite, 'build', '--config', join(ROOT, 'web/vite.config.ts'), '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`building the panel failed (vite exited ${res.status})`);
  return true;
}

// Run as a script (also through a symbolic link to scripts/, as the README test's copy of the project has).
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  try {
    if (buildWeb({ force: process.argv.includes('--force') })) process.stdout.write('Panel built: web/dist\n');
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
