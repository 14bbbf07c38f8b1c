import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { DatabaseConnection, Kysely } from 'kysely';
import type { Database } from './tables.ts';
import { isJob, type Job } from './jobs.ts';
import { DomainError } from '../common/errors.ts';
import type { Reply, Request, SqliteThreadOptions } from './sqlite-thread.ts';

/**
 * The SQLite thread (started by src/db/sqlite-thread.ts): owns the one
 * better-sqlite3 connection and runs, in the order they come, the queries
 * and jobs the event loop thread posts. better-sqlite3 is synchronous; here
 * its work no longer stops HTTP, carrier binds or timers.
 */
const options = workerData as SqliteThreadOptions;
const port = parentPort;
if (!port) throw new Error('sqlite-worker.ts runs as a worker thread');

function open(path: string): SQLite.Database {
  const db = new SQLite(path);
  if (options.reader) return openReader(db);
  db.pragma('journal_mode = WAL');
  // Commits never fsync by themselves: with FULL, a job group's commit is
  // followed by an fsync of the WAL here (syncWal), and the event loop's own
  // queries wait for one on libuv's thread pool (WalSync).
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma(`wal_autocheckpoint = ${options.autocheckpointPages}`);
  // The outbox's indexes are read and written on every commit: 16 MiB of page cache keeps their hot pages (SQLite's
  // own default is 2 MiB). 32 MiB measured no faster under a bulk load of 800,000 messages and held 20–30 MB more;
  // 64 MiB, 30 MB more again.
  db.pragma('cache_size = -16384');
  // Statement journals (a multi-row statement or a job's savepoint inside a
  // transaction keeps the pages it changes, to undo it alone) in memory, not
  // in a temporary file opened, written and closed for each: a quarter of
  // this thread's time went there.
  db.pragma('temp_store = MEMORY');
  return db;
}

/**
 * The reports' connection (see SqliteThreadOptions.reader): reads only, on
 * the WAL the writer set up, each query seeing what was committed before it
 * began. A smaller page cache: its scans go through the table once.
 */
function openReader(db: SQLite.Database): SQLite.Database {
  db.pragma('query_only = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -8192');
  db.pragma('temp_store = MEMORY');
  return db;
}

let opened: SQLite.Database;
try {
  opened = open(options.path);
} catch (err) {
  // Only a plain Error crosses to the other thread whole (message and code).
  const code = (err as { code?: unknown }).code;
  throw Object.assign(
    new Error(`SQLite database ${options.path}: ${err instanceof Error ? err.message : String(err)}`),
    typeof code === 'string' ? { code } : {},
  );
}
const file = opened;

/**
 * Preparing costs more than running a small statement: the same SQL text
 * reuses its prepared statement. `written` turns true when a statement that
 * may write is run.
 */
const cache = new Map<string, SQLite.Statement>();
let written = false;
const statements = {
  close: () => file.close(),
  prepare(sql: string): SQLite.Statement {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= 2000) cache.clear();
      statement = file.prepare(sql);
      cache.set(sql, statement);
    }
    // Statements are run as soon as they are prepared (here and in Kysely's driver).
    if (!statement.readonly) written = true;
    return statement;
  },
};

/**
 * Jobs run with Kysely on this thread, over the same connection. Kysely is
 * loaded when the first job comes, not before the thread says it is ready:
 * its few hundred modules took most of the thread's start, which a process
 * that runs no job (a CLI command: its queries come from the other thread)
 * waited for.
 */
let jobKysely: Promise<Kysely<Database>> | null = null;
function kyselyForJobs(): Promise<Kysely<Database>> {
  jobKysely ??= import('kysely').then(({ CompiledQuery, Kysely, SqliteAdapter, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler }) => {
    /**
     * Transactions take the write lock when they begin (BEGIN IMMEDIATE), waiting
     * for it up to busy_timeout. A plain BEGIN reads first and asks for the lock
     * at its first write, and fails at once (SQLITE_BUSY) if another connection
     * to the file (another gateway process) wrote in between: claims read, then
     * write. Waiting here blocks this thread only, never the event loop.
     */
    class ImmediateSqliteDriver extends SqliteDriver {
      override async beginTransaction(connection: DatabaseConnection): Promise<void> {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      }

      /**
       * Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM...) end the
       * transaction by themselves: a ROLLBACK then fails ("no transaction is
       * active") and that error would replace the one that says what happened.
       */
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (file.inTransaction) await connection.executeQuery(CompiledQuery.raw('rollback'));
      }
    }
    return new Kysely<Database>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new ImmediateSqliteDriver({ database: statements }),
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
  });
  return jobKysely;
}

function query(sql: string, params: unknown[]) {
  const statement = statements.prepare(sql);
  if (statement.reader) return { rows: statement.all(params) as unknown[] };
  const { changes, lastInsertRowid } = statement.run(params);
  return { rows: [], changes, lastInsertRowid };
}

/** Errors cross threads as plain data: name, message, and SQLite's or our code. */
function plainError(err: unknown) {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  if (err instanceof DomainError) return { name: 'DomainError', message: err.message, code: err.code, details: err.details };
  const code = (err as Error & { code?: unknown }).code;
  return { name: err.name, message: err.message, code: typeof code === 'string' ? code : undefined };
}

function runQuery(request: Request & { op: 'query' }): Reply {
  written = false;
  try {
    const result = query(request.sql, request.params);
    return { id: request.id, ok: true, result, written, inTransaction: file.inTransaction };
  } catch (err) {
    return { id: request.id, ok: false, error: plainError(err), written, inTransaction: file.inTransaction };
  }
}

type JobRequest = Request & { op: 'job' };
const exec = (sql: string) => statements.prepare(sql).run();

/** Jobs by module URL and export name, imported the first time one is asked for (see Job in jobs.ts). */
const loaded = new Map<string, Job<unknown, unknown>>();
async function loadJob(request: JobRequest): Promise<Job<unknown, unknown>> {
  const key = `${request.module}#${request.name}`;
  let job = loaded.get(key);
  if (!job) {
    const found: unknown = ((await import(request.module)) as Record<string, unknown>)[request.name];
    if (!isJob(found)) throw new Error(`${request.module} exports no job named ${request.name}`);
    job = found;
    loaded.set(key, job);
  }
  return job;
}

/**
 * Jobs that are waiting together run in one transaction, each inside a
 * savepoint: a job that fails is rolled back alone, as if it had had its own
 * transaction. One commit writes each page they changed to the WAL once
 * (the outbox's index pages are changed by nearly every job), where a commit
 * per job wrote them again each time.
 */
async function runJobs(group: JobRequest[]): Promise<Reply[]> {
  written = false;
  const outcomes: ({ ok: true; result: unknown } | { ok: false; error: ReturnType<typeof plainError> })[] = [];
  try {
    const kysely = await kyselyForJobs();
    await kysely.transaction().execute(async (tx) => {
      // A job alone has the transaction to itself: its error ends it (below).
      const alone = group.length === 1;
      for (const request of group) {
        if (!alone) exec('savepoint job');
        try {
          const job = await loadJob(request);
          outcomes.push({ ok: true, result: await job.run(tx, 'sqlite', request.arg as unknown[]) });
          if (!alone) exec('release job');
        } catch (err) {
          // Some errors (disk full, I/O) end the whole transaction: then the jobs before this one are undone too.
          if (alone || !file.inTransaction) throw err;
          exec('rollback to job');
          exec('release job');
          outcomes.push({ ok: false, error: plainError(err) });
        }
      }
    });
  } catch (err) {
    // Nothing of the group was committed.
    const error = plainError(err);
    return group.map((r) => ({ id: r.id, ok: false, error, written, inTransaction: file.inTransaction }));
  }
  // Durable before anyone hears of it: the answers leave after the fsync.
  if (written && options.syncJobs) {
    try {
      syncWal();
    } catch (err) {
      const error = plainError(err);
      return group.map((r) => ({ id: r.id, ok: false, error, written, inTransaction: file.inTransaction }));
    }
  }
  const synced = written && options.syncJobs;
  return group.map((r, i) => ({ id: r.id, ...(outcomes[i] as (typeof outcomes)[number]), written, synced, inTransaction: file.inTransaction }));
}

/**
 * An fsync of the WAL on this thread, right after a job group's commit.
 * Jobs are the hot path (accepts, claims, carrier answers, receipts): done
 * on the event loop thread's side instead (WalSync), each commit's answer
 * crossed to it, then to libuv's thread pool and back before it was
 * durable, every crossing waiting for a busy event loop: about 3 ms of an
 * accept's 8 in a single-receiver load, where the fsync itself takes a
 * fraction of a millisecond. SQLite with synchronous=FULL does the same
 * inside its commit; here the statements of the next group wait for it
 * too, and groups are large under load.
 */
let walFd: number | null = null;
function syncWal(): void {
  walFd ??= openSync(`${options.path}-wal`, 'r');
  try {
    fdatasyncSync(walFd);
  } catch (err) {
    // Opened again next time (a WAL replaced under us, a transient error).
    const fd = walFd;
    walFd = null;
    try {
      closeSync(fd);
    } catch {}
    throw err;
  }
}

function send(reply: Reply): void {
  // Every request gets an answer, even one whose result cannot be copied to the other thread.
  try {
    port?.postMessage(reply);
  } catch (err) {
    port?.postMessage({ id: reply.id, ok: false, error: plainError(err), written: reply.written, inTransaction: file.inTransaction } satisfies Reply);
  }
}

/** At most this many jobs share a transaction (an accept job carries up to 500 requests). */
const MAX_GROUP = 16;

/**
 * Requests run one after the other, in the order they come; jobs waiting
 * next to each other share a transaction (runJobs). A job that comes while
 * a transaction of the event loop thread's Kysely connection is open waits
 * until it ends: jobs are posted without waiting for that connection (so
 * that several can queue here), and must not run inside its transaction.
 */
const inbox: (Request | { op: 'close' })[] = [];
const deferred: JobRequest[] = [];
let running = false;

async function drain(): Promise<void> {
  running = true;
  try {
    for (;;) {
      // Whatever else has arrived meanwhile joins the queue (and can join a group).
      for (let m = receiveMessageOnPort(port as MessagePort); m; m = receiveMessageOnPort(port as MessagePort)) inbox.push(m.message as Request);
      if (!file.inTransaction && deferred.length > 0) {
        const group = deferred.splice(0, MAX_GROUP);
        (await runJobs(group)).forEach(send);
        continue;
      }
      const next = inbox.shift();
      if (!next) return;
      if (next.op === 'close') {
        // Kysely, if a job loaded it.
        const jobs = jobKysely ? await jobKysely.catch(() => null) : null;
        await jobs?.destroy();
        port?.close();
        return;
      }
      if (next.op === 'query') {
        send(runQuery(next));
        continue;
      }
      if (file.inTransaction) {
        deferred.push(next);
        continue;
      }
      const group: JobRequest[] = [next];
      while (group.length < MAX_GROUP && inbox[0]?.op === 'job') group.push(inbox.shift() as JobRequest);
      (await runJobs(group)).forEach(send);
    }
  } finally {
    running = false;
  }
}

port.on('message', (request: Request | { op: 'close' }) => {
  inbox.push(request);
  // Nothing may stop the loop for good: a failure here would leave every later request unanswered.
  if (!running) start();
});
function start(): void {
  void drain().catch((err: unknown) => {
    console.error('SQLite thread:', err);
    if (inbox.length > 0 || deferred.length > 0) start();
  });
}
port.postMessage({ id: 0, ok: true, result: null, written: false, inTransaction: false } satisfies Reply);
