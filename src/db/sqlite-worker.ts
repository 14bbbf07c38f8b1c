import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteAdapter, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler, type DatabaseConnection } from 'kysely';
import type { Database } from './tables.ts';
import { jobs, type JobName } from './jobs.ts';
import { DomainError } from '../shared/errors.ts';
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
  db.pragma('journal_mode = WAL');
  // Commits never fsync here: with FULL, the event loop thread waits for an
  // fsync of the WAL on libuv's thread pool after the commit (WalSync).
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma(`wal_autocheckpoint = ${options.autocheckpointPages}`);
  // The outbox's indexes are read and written on every commit: keep them in memory (64 MiB of page cache, not SQLite's 2 MiB).
  db.pragma('cache_size = -65536');
  return db;
}

let opened: SQLite.Database;
try {
  opened = open(options.path);
} catch (err) {
  // Only a plain Error crosses to the other thread whole (message and code).
  const code = (err as { code?: unknown }).code;
  throw Object.assign(new Error(`SQLite database ${options.path}: ${err instanceof Error ? err.message : String(err)}`), typeof code === 'string' ? { code } : {});
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
}

// Jobs run with Kysely on this thread, over the same connection.
const kysely = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ImmediateSqliteDriver({ database: statements }),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

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

async function handle(request: Request): Promise<Reply> {
  written = false;
  try {
    if (request.op === 'query') {
      const result = query(request.sql, request.params);
      return { id: request.id, ok: true, result, written, inTransaction: file.inTransaction };
    }
    const job = jobs[request.name as JobName] as (tx: unknown, dialect: 'sqlite', arg: unknown) => Promise<unknown>;
    const value = await kysely.transaction().execute((tx) => job(tx, 'sqlite', request.arg));
    // A job may answer per item with an Error (one refused request of a batch).
    const result = Array.isArray(value) ? value.map((v: unknown) => (v instanceof Error ? { error: plainError(v) } : { value: v })) : [{ value }];
    return { id: request.id, ok: true, result, written, inTransaction: file.inTransaction };
  } catch (err) {
    return { id: request.id, ok: false, error: plainError(err), written, inTransaction: file.inTransaction };
  }
}

/**
 * Requests run one after the other, in order. A job that comes while a
 * transaction of the event loop thread's Kysely connection is open waits
 * until it ends: jobs are posted without waiting for that connection (so
 * that several can queue here), and must not run inside its transaction.
 */
let chain: Promise<void> = Promise.resolve();
const deferred: Request[] = [];
/** Every request gets an answer, even one whose result cannot be copied to the other thread. */
async function answer(request: Request): Promise<void> {
  const reply = await handle(request);
  try {
    port?.postMessage(reply);
  } catch (err) {
    port?.postMessage({ id: request.id, ok: false, error: plainError(err), written: reply.written, inTransaction: file.inTransaction } satisfies Reply);
  }
}

port.on('message', (request: Request | { op: 'close' }) => {
  // Nothing may break the chain: a rejected link would leave every later request unanswered.
  chain = chain.catch(() => undefined).then(async () => {
    if (request.op === 'close') {
      await kysely.destroy();
      port.close();
      return;
    }
    if (request.op === 'job' && file.inTransaction) {
      deferred.push(request);
      return;
    }
    await answer(request);
    while (!file.inTransaction && deferred.length > 0) await answer(deferred.shift() as Request);
  });
});
port.postMessage({ id: 0, ok: true, result: null, written: false, inTransaction: false } satisfies Reply);
