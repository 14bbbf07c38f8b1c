import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { CompiledQuery, sql } from 'kysely';
import { ThreadedSqliteDriver } from '../src/db/sqlite-thread.ts';
import { Checkpointer } from '../src/db/checkpointer.ts';
import { openDatabase, type Db } from '../src/db/database.ts';
import { DomainError } from '../src/common/errors.ts';
import { acceptJob, refusalError, type AcceptRefusal } from '../src/messaging/accept.ts';
import { claimJob } from '../src/dispatch/claim.ts';
import { DIALECT, withFreshStore } from './helpers.ts';

/**
 * The database layer itself, on whichever database the suite runs on. On
 * SQLite the connection lives on its own thread (src/db/sqlite-thread.ts):
 * queries, transactions and jobs cross to it and back.
 */
let db: Db;
withFreshStore((opened) => {
  db = opened;
});

const account = (name: string, balance: number) => ({ name, role: 'CUSTOMER' as const, balance, timezone: 'UTC', active: 1, created_at: Date.now() });

/** An account with `balance` and an SMS route at `fare`; `send(receiver, content)` makes an accept job's item for it. */
async function sender(balance: number, fare: number) {
  const { id } = await db.kysely.insertInto('accounts').values(account('Sender', balance)).returning('id').executeTakeFirstOrThrow();
  const route = await db.kysely
    .insertInto('routes')
    .values({
      display_name: 'R',
      product_name: 'SMS',
      product_id: 1,
      fare_price: fare,
      reply_fare_price: 0,
      channel: 'SMS',
      connector: 'simulator',
      created_at: Date.now(),
    } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
  const send = (receiver: string, content: string | null) => ({
    accountId: Number(id),
    route,
    source: 'gateway' as const,
    content: 'request',
    tag: null,
    custom: null,
    sender: null,
    scheduleAt: null,
    items: [{ receiver, content: content as string, segments: 1, tag: null, custom: null, payload: null }],
  });
  return { id, send };
}

describe(`database layer (${DIALECT})`, () => {
  it('runs queries and transactions; a failed transaction leaves nothing behind', async () => {
    const { id } = await db.kysely.insertInto('accounts').values(account('A', 5)).returning('id').executeTakeFirstOrThrow();
    await assert.rejects(
      db.kysely.transaction().execute(async (tx) => {
        await tx.updateTable('accounts').set({ balance: 99 }).where('id', '=', id).execute();
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    const row = await db.kysely.selectFrom('accounts').select('balance').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.balance, 5);
  });

  it("keeps the database's error codes (a unique key broken is recognizable)", async () => {
    await db.kysely.insertInto('blocklist').values({ account_id: 1, phone: '5511999990000', created_at: 1 }).execute();
    const err = await db.kysely
      .insertInto('blocklist')
      .values({ account_id: 1, phone: '5511999990000', created_at: 2 })
      .execute()
      .then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
      );
    // The blocklist has a unique (account, phone) key on both databases.
    assert.ok(err, 'the second insert must fail');
    assert.match(String(err.code), DIALECT === 'sqlite' ? /^SQLITE_CONSTRAINT/ : /^23505$/);
  });

  it('runs a job as one transaction, answering per item, a refused item as plain data', async () => {
    const { id, send } = await sender(100, 40);
    const results = await db.run(acceptJob, [send('5511900000001', 'hi'), send('5511900000002', 'hi'), send('5511900000003', 'hi')]);
    assert.equal(results.length, 3);
    assert.ok(results[0] && !('refused' in results[0]) && results[1] && !('refused' in results[1]), 'two fit in the balance of 100 at 40 each');
    assert.deepEqual(results[2], { refused: 'INSUFFICIENT_BALANCE', needed: 40, balance: 20 }, 'the third does not');
    const refusal = refusalError(results[2] as AcceptRefusal);
    assert.ok(refusal instanceof DomainError && refusal.code === 'INSUFFICIENT_BALANCE');
    const balance = await db.kysely.selectFrom('accounts').select('balance').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(balance.balance, 20);
    const messages = await db.kysely.selectFrom('messages').select(sql<number>`count(*)`.as('n')).where('account_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(messages.n), 2);
  });

  it('jobs that run together stay apart: one that fails leaves nothing, the others commit', async () => {
    const { id, send } = await sender(1000, 10);
    // Posted while a transaction is open: on SQLite the thread holds them
    // back and then runs them together, in one transaction.
    const results = await db.kysely.transaction().execute(async (tx) => {
      const runs = ['first', null, 'third'].map((content) =>
        db.run(acceptJob, [send('5511900000009', content)]).then(
          (r) => r[0],
          (e: unknown) => e as Error,
        ),
      );
      await tx.selectFrom('accounts').select('id').where('id', '=', id).execute();
      return runs;
    });
    const [first, failed, third] = await Promise.all(results);
    assert.ok(first && !(first instanceof Error) && !('refused' in first), 'the first good job is answered with its result');
    assert.ok(third && !(third instanceof Error) && !('refused' in third), 'the second good job is answered with its result');
    assert.ok(failed instanceof Error, 'the job whose message has no content fails');
    // Its request row was written before its message failed: undone with it.
    const requests = await db.kysely.selectFrom('requests').select('id').where('account_id', '=', id).execute();
    assert.deepEqual(requests.map((r) => r.id).sort(), [first.requestId, third.requestId].sort());
    const balance = await db.kysely.selectFrom('accounts').select('balance').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(balance.balance, 980);
  });

  it('SQLite: the database, its WAL and shared-memory files are readable by their owner only, whatever the umask', { skip: DIALECT !== 'sqlite' }, async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gw-mode-'));
    const dir = join(parent, 'data');
    const umask = process.umask(0o022);
    try {
      const opened = await openDatabase({ dataDir: dir });
      await opened.kysely.insertInto('settings').values({ name: 'mode-test', value: 'x' }).execute();
      const mode = (file: string) => statSync(join(dir, file)).mode & 0o777;
      for (const file of ['gateway.sqlite', 'gateway.sqlite-wal', 'gateway.sqlite-shm'])
        assert.equal(mode(file), 0o600, `${file} is ${mode(file).toString(8)}`);
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      await opened.close();
      // An older database made world-readable is narrowed when opened.
      chmodSync(join(dir, 'gateway.sqlite'), 0o644);
      await (await openDatabase({ dataDir: dir })).close();
      assert.equal(mode('gateway.sqlite'), 0o600);
    } finally {
      process.umask(umask);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('SQLite: a file that is not a database is refused at open, naming the file', { skip: DIALECT !== 'sqlite' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-notadb-'));
    try {
      writeFileSync(join(dir, 'gateway.sqlite'), randomBytes(8192));
      await assert.rejects(
        openDatabase({ dataDir: dir }),
        (err: Error) => err.message.includes(join(dir, 'gateway.sqlite')) && /not a database/.test(err.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SQLite: a thread that stops while in use is reported once, and later queries fail with its reason', { skip: DIALECT !== 'sqlite' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-thread-'));
    const path = join(dir, 'gateway.sqlite');
    const deaths: Error[] = [];
    const driver = new ThreadedSqliteDriver({ path, autocheckpointPages: 1000, syncJobs: false }, null, new Checkpointer(path, 1000), (err) =>
      deaths.push(err),
    );
    try {
      await driver.init();
      const connection = await driver.acquireConnection();
      const { rows } = await connection.executeQuery<{ one: number }>(CompiledQuery.raw('select 1 as one'));
      assert.deepEqual(rows, [{ one: 1 }]);
      await driver.releaseConnection();
      // What running out of memory would do: the thread ends, unasked.
      await (driver as unknown as { thread: { worker: Worker } }).thread.worker.terminate();
      assert.equal(deaths.length, 1);
      assert.match(deaths[0]?.message ?? '', /SQLite thread exited/);
      await assert.rejects(driver.run(claimJob, []), /SQLite thread exited/);
    } finally {
      await driver.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(deaths.length, 1, 'closing afterwards is not a second death');
  });

  it('SQLite: the event loop keeps turning while a long query runs', { skip: DIALECT !== 'sqlite' }, async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    // Millions of rows counted by SQLite: on the event loop thread this would run to its end before the immediate.
    const slow = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c`.execute(
      db.kysely,
    );
    const { rows } = await slow;
    assert.equal(rows[0]?.n, 3_000_000);
    assert.equal(turned, true, 'the immediate ran while SQLite counted');
  });
});
