import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { DIALECT, freshDatabase } from './helpers.ts';
import { http, spawnGateway, type GatewayProcess } from './process.ts';

/**
 * `backup` and `restore` (src/cli/backup.ts) as an operator runs them: a
 * gateway process accepting sends while the backup is taken, the backup
 * restored into a new data directory, a gateway started on it.
 */

const TOKEN = 'backup-test-operator-token-0123';
const dirs: string[] = [];
const gateways: GatewayProcess[] = [];
after(async () => {
  for (const g of gateways) await g.stop().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The CLI in its own process, without blocking this one (the test keeps sending meanwhile). */
function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

const mode = (path: string) => statSync(path).mode & 0o777;

test('backup while the gateway accepts sends; restore into a new data directory; a gateway starts on it with the data', {
  skip: DIALECT !== 'sqlite',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-backup-'));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_DEMO: 'false', GATEWAY_ADMIN_TOKEN: TOKEN, SIMULATOR_DELIVERY_MS: '5' };
  const gw = await spawnGateway(env);
  gateways.push(gw);
  const admin = { authorization: `Bearer ${TOKEN}` };
  const account = await http(gw.base, 'POST', '/admin/accounts', { name: 'Backed up', balance: 1000 }, admin);
  const route = await http(
    gw.base,
    'POST',
    '/admin/routes',
    { displayName: 'SMS', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'simulator' },
    admin,
  );
  await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin);
  const key = (await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, admin)).body.key as string;

  // Four clients sending one message a request, until told to stop.
  let sending = true;
  let n = 0;
  const accepted: string[] = [];
  const client = async () => {
    while (sending) {
      const receiver = `55119876${String(n++).padStart(5, '0')}`;
      const res = await fetch(`${gw.base}/messages/sms/send`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ receivers: [receiver], message: 'backed up', route: route.body.id }),
      });
      await res.text();
      assert.equal(res.status, 200);
      accepted.push(res.headers.get('x-request-id') as string);
    }
  };
  const clients = [client(), client(), client(), client()];
  while (accepted.length < 50) await new Promise((r) => setTimeout(r, 10));

  const file = join(dir, 'gateway-backup.sqlite');
  const acceptedBefore = [...accepted];
  const made = await cli(env, 'backup', '--to', file);
  const acceptedDuring = accepted.length - acceptedBefore.length;
  sending = false;
  await Promise.all(clients);
  assert.equal(made.code, 0, made.err);
  const summary = JSON.parse(made.out);
  assert.equal(summary.backup, file);
  assert.equal(mode(file), 0o600, 'the backup is readable by its owner only');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('partial')),
    [],
    'no partial file left behind',
  );

  // A snapshot of one instant: every request accepted before the backup began is in it, and
  // what it holds is whole (each request's messages and debit together).
  const copy = new SQLite(file, { readonly: true });
  const requests = new Set((copy.prepare('select id from requests').all() as { id: string }[]).map((r) => r.id));
  for (const id of acceptedBefore) assert.ok(requests.has(id), `request ${id} accepted before the backup is in it`);
  const whole = copy
    .prepare(
      `select (select count(*) from messages) as messages, (select coalesce(sum(message_count), 0) from requests) as counted,
              (select balance from accounts where id = ?) as balance, (select sum(amount) from ledger where account_id = ?) as ledger,
              (select count(*) from messages where status = 'SENDING') as sending`,
    )
    .get(account.body.id, account.body.id) as { messages: number; counted: number; balance: number; ledger: number; sending: number };
  copy.close();
  assert.equal(whole.messages, whole.counted, 'every request with all its messages');
  assert.equal(whole.balance, whole.ledger, 'the balance is the sum of its ledger');
  assert.equal(summary.messages, whole.messages);

  // Restoring onto the running gateway's database is refused, and changes nothing.
  const refused = await cli(env, 'restore', '--from', file);
  assert.equal(refused.code, 75, refused.err);
  assert.match(refused.err, /in use: gateway process \d+ on this host/);
  assert.equal(readdirSync(dataDir).filter((f) => f.includes('before-restore')).length, 0);

  // Restore into a new data directory and start a gateway there.
  const restoredDir = join(dir, 'restored');
  const restoredEnv = { ...env, GATEWAY_DATA_DIR: restoredDir };
  const restored = await cli(restoredEnv, 'restore', '--from', file);
  assert.equal(restored.code, 0, restored.err);
  assert.equal(JSON.parse(restored.out).previous, null);
  assert.equal(JSON.parse(restored.out).released, whole.sending, 'what the backup shows leased goes back to the outbox');
  const fresh = new SQLite(join(restoredDir, 'gateway.sqlite'), { readonly: true });
  assert.deepEqual(
    fresh.prepare(`select (select count(*) from messages where status = 'SENDING') as sending, (select count(*) from dispatchers) as dispatchers`).get(),
    { sending: 0, dispatchers: 0 },
    'the restored database belongs to no process',
  );
  fresh.close();
  assert.equal(mode(join(restoredDir, 'gateway.sqlite')), 0o600);
  assert.equal(mode(restoredDir), 0o700);

  const second = await spawnGateway(restoredEnv);
  gateways.push(second);
  const balance = await http(second.base, 'GET', '/balance', undefined, { 'x-api-key': key });
  assert.equal(balance.status, 200, 'the API key of the backup works');
  assert.equal(balance.body.object.balance, whole.balance / 1_000_000);
  const sent = await http(second.base, 'GET', '/reports/messages/sent?limit=1', undefined, { 'x-api-key': key });
  assert.equal(sent.body.totalRecords, whole.messages, 'every message of the backup is there');
  assert.ok(whole.messages >= acceptedBefore.length);
  t.diagnostic(`${acceptedBefore.length} sends accepted before the backup, ${acceptedDuring} while it ran`);
  await second.stop();

  // Once the gateway has stopped, restoring over its database works; the database there before is kept aside.
  await gw.stop();
  const over = await cli(env, 'restore', '--from', file);
  assert.equal(over.code, 0, over.err);
  const previous = JSON.parse(over.out).previous as string;
  assert.ok(existsSync(previous), 'the replaced database is kept');
  assert.equal(existsSync(join(dataDir, 'gateway.sqlite-wal')), false, "the old database's WAL went aside with it");
});

test('mistakes: no --to, an existing target, a missing file, a file that is not a gateway database', { skip: DIALECT !== 'sqlite' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-backup-'));
  dirs.push(dir);
  const env = { GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_DEMO: 'false' };
  const none = await cli(env, 'backup', '--to', join(dir, 'x.sqlite'));
  assert.equal(none.code, 66);
  assert.match(none.err, /no database to back up/);
  assert.equal((await cli(env, 'account', 'create', '--name', 'A')).code, 0);
  assert.equal((await cli(env, 'backup')).code, 64);
  const file = join(dir, 'b.sqlite');
  assert.equal((await cli(env, 'backup', '--to', file)).code, 0);
  const exists = await cli(env, 'backup', '--to', file);
  assert.equal(exists.code, 73);
  assert.match(exists.err, /exists: choose another file, or pass --force/);
  assert.equal((await cli(env, 'backup', '--to', file, '--force')).code, 0);
  assert.equal((await cli(env, 'restore', '--from', join(dir, 'missing.sqlite'))).code, 66);
  const notOurs = join(dir, 'other.sqlite');
  new SQLite(notOurs).exec('create table t (x)');
  const foreign = await cli(env, 'restore', '--from', notOurs);
  assert.equal(foreign.code, 65);
  assert.match(foreign.err, /not a gateway's/);
});

test('on PostgreSQL, backup and restore point to pg_dump and pg_restore and change nothing', { skip: DIALECT !== 'postgres' }, async () => {
  const db = await freshDatabase();
  try {
    const made = await cli(db.env, 'backup', '--to', join(db.env.GATEWAY_DATA_DIR ?? '', 'x'));
    assert.equal(made.code, 69);
    assert.match(made.err, /uses PostgreSQL \(DATABASE_URL\): back it up with pg_dump/);
    assert.equal(existsSync(join(db.env.GATEWAY_DATA_DIR ?? '', 'x')), false);
    const back = await cli(db.env, 'restore', '--from', 'x');
    assert.equal(back.code, 69);
    assert.match(back.err, /pg_restore/);
  } finally {
    await db.drop();
  }
});
