import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import S3rver from '@20minutes/s3rver';
import { startGateway, type Customer, type TestGateway } from './helpers.ts';
import { Retention, type RetentionReport } from '../src/retention/retention.ts';
import { DirectoryStorage, openMediaStorage } from '../src/rcs/storage.ts';
import { S3Storage } from '../src/rcs/s3-storage.ts';
import type { MessageStatus } from '../src/db/tables.ts';

/**
 * Retention (src/retention): what goes and what stays, on SQLite and on
 * PostgreSQL. Nothing waits: the job's clock is given (NOW), and the rows
 * are dated by writing their times.
 */

const DAY = 86_400_000;
const NOW = Date.now();
const OLD = NOW - 40 * DAY;
const silent = pino({ level: 'silent' });

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

before(async () => {
  // No dispatcher: messages stay as the test writes them.
  gw = await startGateway({ GATEWAY_DEMO: 'false' }, { dispatch: false });
  alice = await gw.customer({ balance: 100 });
  bob = await gw.customer({ balance: 100 });
});
after(() => gw.close());

const db = () => gw.core.db.kysely;

/** Sends one request to these receivers; answers its messages' ids by receiver, and the request id under "request". */
async function send(customer: Customer, receivers: string[]): Promise<Record<string, string>> {
  const res = await gw.call(customer.key, 'POST', '/messages/sms/send', { receivers, message: 'retention', route: customer.routeId });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const request = String(res.headers['x-request-id']);
  const rows = await db().selectFrom('messages').select(['id', 'receiver']).where('request_id', '=', request).execute();
  return { ...Object.fromEntries(rows.map((r) => [r.receiver, r.id])), request };
}

/** Dates and sets a message's state as if it had lived it. */
async function age(id: string, status: MessageStatus, createdAt: number, statusAt: number): Promise<void> {
  await db().updateTable('messages').set({ status, created_at: createdAt, status_at: statusAt, lease_owner: null }).where('id', '=', id).execute();
}

const exists = async (id: string) => (await db().selectFrom('messages').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
const count = async (table: 'status_log' | 'carrier_ids' | 'replies' | 'pending_receipts' | 'ledger' | 'requests', where = sql`1 = 1`) =>
  Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(db())).rows[0]?.n);

const retention = (options: { messagesDays?: number; mediaDays?: number; now?: number; batch?: number } = {}) =>
  new Retention(
    gw.core.db,
    silent,
    { messagesDays: options.messagesDays, mediaDays: options.mediaDays, now: () => options.now ?? NOW, batch: options.batch ?? 2 },
    () => openMediaStorage(gw.config),
  );

test('old finished messages go with their history; recent, unfinished and unfanned ones stay; every account alike', async () => {
  const a = await send(alice, ['5511987650001', '5511987650003']);
  const b = await send(alice, ['5511987650002']);
  const c = await send(alice, ['5511987650004', '5511987650005', '5511987650006', '5511987650007', '5511987650008', '5511987650009']);
  const d = await send(bob, ['5511987650001', '5511987650002']);
  const id = (m: Record<string, string>, r: string) => m[`55119876500${r}`] as string;

  const deliveredOld = id(a, '01'); // finished 39 days ago: goes
  const failedOld = id(b, '02'); // idem, the only message of its request: the request goes too
  const finishedLately = id(a, '03'); // created long ago, finished yesterday: stays (and keeps request a)
  const sentOld = id(c, '04'); // carrier has it, no receipt yet: stays
  const scheduledOld = id(c, '05'); // still to be sent: stays
  const queuedOld = id(c, '06'); // idem
  const recent = id(c, '07'); // finished, but created yesterday: stays
  const unfanned = id(c, '08'); // finished long ago, a status change not yet fanned out to webhooks: stays
  const cancelledOld = id(c, '09'); // goes
  const bobOld = id(d, '01'); // another account, same rule: goes
  const bobRecent = id(d, '02'); // stays

  await age(deliveredOld, 'DELIVERED', OLD, OLD + DAY);
  await age(failedOld, 'FAILED', OLD, OLD + DAY);
  await age(finishedLately, 'DELIVERED', OLD, NOW - DAY);
  await age(sentOld, 'SENT', OLD, OLD + DAY);
  await age(scheduledOld, 'SCHEDULED', OLD, OLD);
  await age(queuedOld, 'QUEUED', OLD, OLD);
  await age(recent, 'DELIVERED', NOW - DAY, NOW - DAY);
  await age(unfanned, 'UNDELIVERED', OLD, OLD + DAY);
  await age(cancelledOld, 'CANCELLED', OLD, OLD);
  await age(bobOld, 'EXPIRED', OLD, OLD + DAY);
  await age(bobRecent, 'DELIVERED', NOW - 2 * DAY, NOW - DAY);

  // Status history, carrier ids (two parts of one message), received texts, early receipts.
  const edb = gw.core.db.kysely.withTables<{ status_log: { fanned_out: number }; replies: { fanned_out: number } }>();
  const log = (message_id: string, fanned_out: number) => ({ message_id, status: 'SENT' as const, details: null, at: OLD, fanned_out });
  await edb
    .insertInto('status_log')
    .values([log(deliveredOld, 1), log(deliveredOld, 1), log(bobOld, 1), log(unfanned, 0), log(sentOld, 1)])
    .execute();
  await db()
    .insertInto('carrier_ids')
    .values([
      { connector: 'simulator', carrier_id: 'part-1', message_id: deliveredOld },
      { connector: 'simulator', carrier_id: 'part-2', message_id: deliveredOld },
      { connector: 'simulator', carrier_id: 'bob-1', message_id: bobOld },
      { connector: 'simulator', carrier_id: 'sent-1', message_id: sentOld },
      { connector: 'simulator', carrier_id: 'recent-1', message_id: recent },
    ])
    .execute();
  const reply = (received_at: number, fanned_out: number, account_id: number | null, text: string) => ({
    account_id,
    message_id: null,
    connector: 'simulator',
    sender: '5511987650001',
    recipient: null,
    content: text,
    cost: 0,
    received_at,
    fanned_out,
  });
  await edb
    .insertInto('replies')
    .values([
      reply(OLD, 1, alice.accountId, 'old reply'),
      reply(OLD, 1, null, 'old unmatched'),
      reply(OLD, 0, bob.accountId, 'old, not fanned out'),
      reply(NOW - DAY, 1, alice.accountId, 'recent reply'),
    ])
    .execute();
  await db()
    .insertInto('pending_receipts')
    .values([
      { connector: 'simulator', carrier_id: 'early-old', status: 'DELIVERED', details: '', received_at: OLD },
      { connector: 'simulator', carrier_id: 'early-new', status: 'DELIVERED', details: '', received_at: NOW - DAY },
    ])
    .execute();
  const ledger = await count('ledger');

  // Batches of two rows: the walks cross several batches.
  const report = await retention({ messagesDays: 30 }).run();
  assert.deepEqual(report, {
    messages: 4,
    statusLog: 3,
    requests: 1,
    carrierIds: 3,
    replies: 2,
    pendingReceipts: 1,
    media: 0,
    mediaKept: 0,
  } satisfies RetentionReport);

  for (const gone of [deliveredOld, failedOld, cancelledOld, bobOld]) assert.equal(await exists(gone), false, gone);
  for (const kept of [finishedLately, sentOld, scheduledOld, queuedOld, recent, unfanned, bobRecent]) assert.equal(await exists(kept), true, kept);
  const requests = new Set((await db().selectFrom('requests').select('id').execute()).map((r) => r.id));
  assert.deepEqual(
    [a, b, c, d].map((m) => requests.has(m.request as string)),
    [true, false, true, true],
    'a request goes with its last message',
  );
  assert.equal(await count('status_log'), 2, 'the unfanned and the SENT message keep theirs');
  assert.deepEqual(
    (await db().selectFrom('carrier_ids').select('carrier_id').orderBy('carrier_id').execute()).map((r) => r.carrier_id),
    ['recent-1', 'sent-1'],
  );
  assert.deepEqual(
    (await db().selectFrom('replies').select('content').orderBy('content').execute()).map((r) => r.content),
    ['old, not fanned out', 'recent reply'],
  );
  assert.deepEqual(
    (await db().selectFrom('pending_receipts').select('carrier_id').execute()).map((r) => r.carrier_id),
    ['early-new'],
  );
  assert.equal(await count('ledger'), ledger, 'the ledger (balances) is never touched');

  // Deleting again finds nothing: the job is idempotent.
  const again = await retention({ messagesDays: 30 }).run();
  assert.deepEqual([again.messages, again.statusLog, again.requests, again.carrierIds, again.replies, again.pendingReceipts], [0, 0, 0, 0, 0, 0]);
});

test('one run a day among the processes sharing the database, whatever their number', async () => {
  const day1 = NOW + 100 * DAY;
  const one = retention({ messagesDays: 30, now: day1 });
  const two = retention({ messagesDays: 30, now: day1 });
  const [r1, r2] = await Promise.all([one.tick(), two.tick()]);
  assert.equal([r1, r2].filter((r) => r !== null).length, 1, 'exactly one of them ran');
  assert.equal(await retention({ messagesDays: 30, now: day1 + 3_600_000 }).tick(), null, 'not again within the day');
  assert.notEqual(await retention({ messagesDays: 30, now: day1 + DAY }).tick(), null, 'the next day');
  assert.equal(await retention({ now: day1 + 5 * DAY }).tick(), null, 'off when neither setting is set');
});

test('media: deleted when unused since the cutoff and no message still to be sent names it', async () => {
  const dir = join(gw.config.GATEWAY_DATA_DIR, 'media');
  mkdirSync(dir, { recursive: true });
  const file = (content: string, ext: string, usedAt: number) => {
    const name = `${createHash('sha256').update(content).digest('hex')}.${ext}`;
    writeFileSync(join(dir, name), content);
    utimesSync(join(dir, name), usedAt / 1000, usedAt / 1000);
    return name;
  };
  const waitingFor = file('waiting', 'png', OLD); // old, named by a queued message: stays
  const finishedOnly = file('finished', 'jpg', OLD); // old, named only by a delivered message: goes
  const unnamedOld = file('unnamed', 'pdf', OLD); // goes
  const recent = file('recent', 'png', NOW - DAY); // used yesterday: stays
  const reused = file('reused', 'png', OLD); // old, but a send stores it again before the run: stays
  writeFileSync(join(dir, 'notes.txt'), 'not media');
  utimesSync(join(dir, 'notes.txt'), OLD / 1000, OLD / 1000);

  const m = await send(alice, ['5511987651001', '5511987651002']);
  const [queued, delivered] = [m['5511987651001'] as string, m['5511987651002'] as string];
  const payload = (name: string) => JSON.stringify({ kind: 'card', card: { media: { url: `http://x/media/${name}`, sha256: name.slice(0, 64) } } });
  await db()
    .updateTable('messages')
    .set({ payload: payload(waitingFor) })
    .where('id', '=', queued)
    .execute();
  await db()
    .updateTable('messages')
    .set({ payload: payload(finishedOnly), status: 'DELIVERED' })
    .where('id', '=', delivered)
    .execute();
  assert.equal(await new DirectoryStorage(dir).putIfAbsent(reused, Buffer.from('reused')), false, 'already stored: not written again');

  const report = await retention({ mediaDays: 30 }).run();
  assert.equal(report.media, 2);
  assert.equal(report.mediaKept, 1);
  assert.equal(report.messages, 0, 'messages are kept when only media retention is set');
  const left = (name: string) => existsSync(join(dir, name));
  assert.deepEqual([waitingFor, finishedOnly, unnamedOld, recent, reused, 'notes.txt'].map(left), [true, false, false, true, true, true]);
  assert.ok(statSync(join(dir, reused)).mtimeMs > OLD, 'a reuse marks the file used');
});

test('directory media: a file used while being deleted is put back; a missing one is written again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'media-'));
  try {
    const storage = new DirectoryStorage(dir);
    const name = `${'a'.repeat(64)}.png`;
    assert.equal(await storage.putIfAbsent(name, Buffer.from('x')), true);
    assert.equal(await storage.removeIfUnusedSince(name, Date.now() - DAY), false, 'used since the cutoff');
    assert.equal(await storage.removeIfUnusedSince(name, Date.now() + DAY), true);
    assert.equal(await storage.exists(name), false);
    assert.equal(await storage.putIfAbsent(name, Buffer.from('x')), true, 'gone: written again');
    const listed = [];
    for await (const o of storage.list()) listed.push(o.name);
    assert.deepEqual(listed, [name]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bucket media: listed under the prefix, deleted only when unused since the cutoff', async () => {
  const s3Dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  // s3rver miscomputes the signature of a bucket listing made by the current SDK: signatures are not compared here.
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: 'media' }],
    allowMismatchedSignatures: true,
  });
  const { port } = await s3.run();
  const storage = new S3Storage({
    bucket: 'media',
    region: 'us-east-1',
    prefix: 'rcs/',
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    publicUrl: null,
    timeoutMs: 5000,
  });
  try {
    const one = `${'1'.repeat(64)}.png`;
    const two = `${'2'.repeat(64)}.jpg`;
    assert.equal(await storage.putIfAbsent(one, Buffer.from('one'), 'image/png'), true);
    assert.equal(await storage.putIfAbsent(two, Buffer.from('two'), 'image/jpeg'), true);
    assert.equal(await storage.putIfAbsent(two, Buffer.from('two'), 'image/jpeg'), false, 'stored lately: not written again');
    const names = async () => {
      const listed: string[] = [];
      for await (const o of storage.list()) listed.push(o.name);
      return listed.sort();
    };
    assert.deepEqual(await names(), [one, two]);
    assert.equal(await storage.removeIfUnusedSince(one, Date.now() - DAY), false, 'used since the cutoff');
    assert.equal(await storage.removeIfUnusedSince(one, Date.now() + DAY), true);
    assert.equal(await storage.removeIfUnusedSince(one, Date.now() + DAY), false, 'already gone');
    assert.deepEqual(await names(), [two]);
  } finally {
    await storage.close();
    await s3.close();
    rmSync(s3Dir, { recursive: true, force: true });
  }
});
