// Runs the whole suite against SQLite, then again against PostgreSQL when
// TEST_DATABASE_URL is set (each test file makes its own fresh schema).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const filter = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.ts') && (filter.length === 0 || filter.some((f) => path.includes(f)))) files.push(path);
  }
})('test');

const runId = `r${Date.now().toString(36)}`;
const runs = [['SQLite', { ...process.env, TEST_DATABASE_URL: '' }]];
if (process.env.TEST_DATABASE_URL) runs.push(['PostgreSQL', { ...process.env, TEST_RUN_ID: runId }]);

let failed = false;
for (const [name, env] of runs) {
  process.stdout.write(`\n=== test suite on ${name} (${files.length} files) ===\n`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files], { stdio: 'inherit', env });
  if (res.status !== 0) failed = true;
}

// Each PostgreSQL test file made a schema named after this run: drop them all now.
if (process.env.TEST_DATABASE_URL) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  const { rows } = await client.query('select nspname from pg_namespace where nspname like $1', [`t\\_${runId}\\_%`]);
  for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`);
  await client.end();
}
process.exit(failed ? 1 : 0);
