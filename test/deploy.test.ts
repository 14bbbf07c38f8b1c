import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * deploy/ (docs/deploy.md): the systemd unit and the container recipe, read
 * and linted as far as this machine allows without systemd running or a
 * container engine. That the build they start runs is test/build.test.ts.
 */
const root = process.cwd();
const UNIT = join(root, 'deploy', 'messaging-gateway.service');
const CONTAINERFILE = join(root, 'deploy', 'Containerfile');

/** A unit file as [section] -> key -> values (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1] as string, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current && eq > 0, `unit line outside a section or without "=": ${line}`);
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/** A Containerfile as instructions (continuation lines joined, comments dropped). */
function parseContainerfile(text: string): { instruction: string; args: string }[] {
  const out: { instruction: string; args: string }[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const joined = pending + raw;
    if (joined.endsWith('\\')) {
      pending = `${joined.slice(0, -1)} `;
      continue;
    }
    pending = '';
    const line = joined.trim();
    if (line === '') continue;
    const space = line.search(/\s/);
    out.push({ instruction: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() });
  }
  return out;
}

/** The words of a shell-form line or the strings of an exec-form (JSON array) one. */
const words = (args: string): string[] => (args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/));

test('the systemd unit runs the build as an unprivileged user, restarts on failure and can write its data directory only', () => {
  const unit = parseUnit(readFileSync(UNIT, 'utf8'));
  const service = unit.get('Service');
  assert.ok(service, '[Service]');
  const one = (key: string) => {
    const values = service.get(key);
    assert.equal(values?.length, 1, `${key}= once in [Service]`);
    return values[0] as string;
  };
  assert.notEqual(one('User'), 'root');
  assert.match(one('EnvironmentFile'), /^-?\/etc\/messaging-gateway\//);
  assert.equal(one('Restart'), 'on-failure');
  assert.equal(one('NoNewPrivileges'), 'yes');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.ok(Number(one('LimitNOFILE')) >= 65536);
  // The data directory the gateway is told to use is the one it may write.
  const env = Object.fromEntries((service.get('Environment') ?? []).map((e) => e.split('=', 2) as [string, string]));
  assert.ok(env.GATEWAY_DATA_DIR, 'GATEWAY_DATA_DIR set by the unit');
  assert.ok(one('ReadWritePaths').split(/\s+/).includes(env.GATEWAY_DATA_DIR));
  assert.equal(`/var/lib/${one('StateDirectory')}`, env.GATEWAY_DATA_DIR);
  // node, then the compiled server relative to the working directory: dist/server.js is what `npm run build` makes of src/server.ts.
  const [node, ...args] = one('ExecStart').split(/\s+/);
  assert.match(node ?? '', /^\/.*\/node$/);
  assert.deepEqual(
    args.filter((a) => !a.startsWith('-')),
    ['dist/server.js'],
  );
  assert.ok(one('WorkingDirectory').startsWith('/'));
  const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { rootDir: string; outDir: string } };
  assert.deepEqual([build.compilerOptions.rootDir, build.compilerOptions.outDir], ['src', 'dist']);
  assert.ok(existsSync(join(root, 'src', 'server.ts')));
  assert.deepEqual(unit.get('Install')?.get('WantedBy'), ['multi-user.target']);
});

test('the Containerfile builds the browser panel and the image serves it from where the server looks for it', () => {
  const steps = parseContainerfile(readFileSync(CONTAINERFILE, 'utf8'));
  const runtimeAt = steps.map((s) => s.instruction).lastIndexOf('FROM');
  const build = steps.slice(0, runtimeAt);
  const runtime = steps.slice(runtimeAt);
  // What `npm run build:web` reads is copied into the build stage, before the RUN that builds it.
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['build:web'];
  assert.equal(script, 'node scripts/build-web.mjs --force');
  const runs = build.map((s, i) => ({ ...s, i })).filter((s) => s.instruction === 'RUN');
  const buildWeb = runs.find((r) => r.args.includes('npm run build:web'));
  assert.ok(buildWeb, 'npm run build:web in the build stage');
  const copied = build
    .slice(0, buildWeb.i)
    .filter((s) => s.instruction === 'COPY' && !s.args.startsWith('--from'))
    .flatMap((s) => words(s.args).slice(0, -1));
  for (const needed of ['package.json', 'package-lock.json', 'scripts/build-web.mjs', 'web', 'clients'])
    assert.ok(copied.includes(needed), `COPY ${needed} before the panel's build`);
  // Vite is a dev dependency: the panel is built before they are pruned (in the same RUN, earlier, or in an earlier RUN).
  const prune = runs.find((r) => r.args.includes('npm prune'));
  assert.ok(prune, 'npm prune');
  if (prune.i === buildWeb.i) assert.ok(prune.args.indexOf('npm run build:web') < prune.args.indexOf('npm prune'), 'build:web before the prune');
  else assert.ok(buildWeb.i < prune.i, 'build:web before the prune');
  const devDeps = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
  assert.ok(devDeps.vite, 'vite is a dev dependency (hence the order)');
  // The runtime stage gets web/dist at /app/web/dist: where dist/http/panel/static.js looks (three folders up, then web/dist).
  const copy = runtime.find((s) => s.instruction === 'COPY' && s.args.startsWith('--from=build') && words(s.args)[1] === '/app/web/dist');
  assert.ok(copy, 'COPY --from=build /app/web/dist');
  const workdir = runtime.filter((s) => s.instruction === 'WORKDIR').at(-1)?.args;
  assert.equal(workdir, '/app');
  const target = words(copy.args)[2] ?? '';
  assert.equal(join(workdir, target), '/app/web/dist');
  assert.match(readFileSync(join(root, 'src', 'http', 'panel', 'static.ts'), 'utf8'), /new URL\('\.\.\/\.\.\/\.\.\/web\/dist', import\.meta\.url\)/);
  assert.equal(join('/app/dist/http/panel', '../../../web/dist'), '/app/web/dist');
  // A local build in the context is not sent (the image builds its own).
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim());
  assert.ok(ignored.includes('web/dist'), '.dockerignore leaves out web/dist');
});

test('the files the Containerfile copies are enough to build the panel', (t) => {
  if (!existsSync(join(root, 'node_modules', 'vite'))) return t.skip('the dev dependencies are not installed');
  // The build stage's copy of the project (its sources, and this project's installed node_modules in place of npm ci).
  const steps = parseContainerfile(readFileSync(CONTAINERFILE, 'utf8'));
  const runtimeAt = steps.map((s) => s.instruction).lastIndexOf('FROM');
  const sources = steps
    .slice(0, runtimeAt)
    .filter((s) => s.instruction === 'COPY' && !s.args.startsWith('--from'))
    .flatMap((s) => words(s.args).slice(0, -1));
  const dir = mkdtempSync(join(tmpdir(), 'gw-image-'));
  try {
    for (const source of sources)
      cpSync(join(root, source), join(dir, source), { recursive: true, filter: (src) => !src.startsWith(join(root, 'web', 'dist')) });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const res = spawnSync('npm', ['run', 'build:web'], { cwd: dir, encoding: 'utf8' });
    assert.equal(res.status, 0, `${res.stdout}${res.stderr}`);
    assert.ok(existsSync(join(dir, 'web', 'dist', 'index.html')), 'web/dist/index.html built');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('systemd-analyze verify finds nothing to say about the unit', (t) => {
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) return t.skip('systemd-analyze is not installed here');
  // Checked with this node in place of the unit's (which need not exist on this machine).
  const dir = mkdtempSync(join(tmpdir(), 'gw-unit-'));
  try {
    const copy = join(dir, 'messaging-gateway.service');
    writeFileSync(copy, readFileSync(UNIT, 'utf8').replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
    const res = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(res.stderr.trim(), '', 'no warning');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the Containerfile passes its linter', () => {
  const lint = join(root, 'node_modules', '.bin', 'dockerfile-utils');
  const res = spawnSync(lint, ['lint', CONTAINERFILE], { encoding: 'utf8' });
  assert.equal(res.status, 0, `${res.stdout}${res.stderr}`);
  assert.equal(res.stdout.trim(), '');
});

test('the Containerfile builds from files that exist and runs the build as a non-root user with its data in a volume', () => {
  const steps = parseContainerfile(readFileSync(CONTAINERFILE, 'utf8'));
  const stages: { instruction: string; args: string }[][] = [];
  for (const step of steps) {
    if (step.instruction === 'FROM') stages.push([]);
    stages.at(-1)?.push(step);
  }
  assert.equal(stages.length, 2, 'a build stage and a runtime stage');
  const [build, runtime] = stages as [typeof steps, typeof steps];
  assert.match(build[0]?.args ?? '', / AS build$/i);

  // The build context is the project's root: every COPY from it names a file or folder there, not ignored.
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const copy of steps.filter((s) => s.instruction === 'COPY' && !s.args.startsWith('--from'))) {
    const sources = words(copy.args).slice(0, -1);
    for (const source of sources) {
      assert.ok(existsSync(join(root, source)), `COPY ${source}: exists`);
      assert.ok(!ignored.includes(source), `COPY ${source}: not in .dockerignore`);
    }
  }
  const run = build.filter((s) => s.instruction === 'RUN').map((s) => s.args);
  assert.ok(
    run.some((r) => r.includes('npm ci')),
    'npm ci',
  );
  assert.ok(
    run.some((r) => r.includes('npm run build') && r.includes('--omit=dev')),
    'built, then the dev dependencies dropped',
  );
  // What the runtime stage takes from the build stage is what that stage made.
  const fromBuild = runtime.filter((s) => s.instruction === 'COPY' && s.args.startsWith('--from=build'));
  assert.deepEqual(
    fromBuild.map((s) => words(s.args)[1]),
    ['/app/package.json', '/app/node_modules', '/app/dist', '/app/web/dist'],
  );
  assert.ok(build.some((s) => s.instruction === 'WORKDIR' && s.args === '/app'));

  const last = (instruction: string) => runtime.filter((s) => s.instruction === instruction).at(-1)?.args ?? '';
  const user = last('USER');
  assert.ok(user && user !== 'root' && user !== '0' && !user.startsWith('0:'), `USER ${user}: not root`);
  const cmd = words(last('CMD'));
  assert.equal(cmd[0], 'node');
  assert.equal(cmd.at(-1), 'dist/server.js');
  const env = new Map(
    runtime
      .filter((s) => s.instruction === 'ENV')
      .flatMap((s) => s.args.split(/\s+/))
      .map((kv) => kv.split('=', 2) as [string, string]),
  );
  assert.ok(words(last('VOLUME')).includes(env.get('GATEWAY_DATA_DIR') ?? '(unset)'), 'the data directory is the volume');
  assert.equal(last('EXPOSE'), env.get('PORT'));
  assert.equal(env.get('HOST'), '0.0.0.0', 'reachable from outside the container');
  assert.match(last('HEALTHCHECK'), /\/healthz/);
});
