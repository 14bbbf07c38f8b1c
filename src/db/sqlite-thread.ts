import { Worker } from 'node:worker_threads';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { DomainError, type ErrorCode } from '../common/errors.ts';
import type { Job } from './jobs.ts';
import type { Checkpointer } from './checkpointer.ts';
import type { WalSync } from './wal-sync.ts';

/**
 * SQLite on a thread of its own. better-sqlite3 runs every statement
 * synchronously: on the event loop thread, each query stopped HTTP, carrier
 * binds and timers for as long as it ran (a large report, a batch commit).
 * Here one worker thread (src/db/sqlite-worker.ts) owns the connection and
 * the event loop thread posts it queries (Kysely's driver interface) and
 * jobs (whole hot-path transactions, src/db/jobs.ts). A mutex here hands
 * the Kysely connection to one user at a time; jobs queue on the thread,
 * which runs them between that connection's transactions, never inside.
 *
 * Durability as before: the thread commits with synchronous=NORMAL and a
 * query, transaction or job that wrote resolves only after an fsync of the
 * WAL that started after its commit (WalSync), unless NORMAL was asked for.
 */
export interface SqliteThreadOptions {
  path: string;
  autocheckpointPages: number;
  /**
   * Jobs' commits are made durable on the thread itself: an fsync of the
   * WAL right after the commit, before the answer (FULL durability). The
   * event loop's queries and transactions still wait for WalSync.
   */
  syncJobs: boolean;
  /**
   * A second connection for reports and exports only (query_only): their
   * scans of an account's messages run here, beside the writer's thread,
   * instead of in its queue before every other account's accepts.
   */
  reader?: boolean;
}

interface PlainError {
  name: string;
  message: string;
  code?: string | undefined;
  details?: string[] | undefined;
}

type Call = { op: 'query'; sql: string; params: unknown[] } | { op: 'job'; module: string; name: string; arg: unknown };
export type Request = Call & { id: number };
/** `synced`: the thread already fsynced the WAL after this reply's commit (jobs, with syncJobs). */
export type Reply = { id: number; written: boolean; inTransaction: boolean; synced?: boolean } & (
  | { ok: true; result: unknown }
  | { ok: false; error: PlainError }
);

interface QueryAnswer {
  rows: unknown[];
  changes?: number | bigint;
  lastInsertRowid?: number | bigint;
}

function toError(e: PlainError): Error {
  if (e.name === 'DomainError' && e.code) return new DomainError(e.code as ErrorCode, e.message, e.details);
  const err = new Error(e.message) as Error & { code?: string };
  err.name = e.name;
  if (e.code) err.code = e.code;
  return err;
}

function describeThrown(thrown: unknown, path: string): Error {
  const { code, message } = (typeof thrown === 'object' && thrown !== null ? thrown : {}) as { code?: unknown; message?: unknown };
  const what = typeof message === 'string' && message ? message : typeof code === 'string' ? code : String(thrown);
  const err = new Error(`SQLite database ${path}: ${what}`) as Error & { code?: string };
  if (typeof code === 'string') err.code = code;
  return err;
}

class SqliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private dead: Error | null = null;
  private started = false;
  private closing = false;
  readonly ready: Promise<void>;

  constructor(
    options: SqliteThreadOptions,
    /** Called if the thread stops after it started, unasked (see ThreadedSqliteDriver). */
    onDeath: (err: Error) => void,
  ) {
    // The worker is written like this file: from the sources (run by tsx) it is TypeScript and tsx's
    // loader is registered in it first; built (`npm run build`, dist/) it is the JavaScript file beside this one.
    const fromSource = import.meta.url.endsWith('.ts');
    const script = new URL(fromSource ? './sqlite-worker.ts' : './sqlite-worker.js', import.meta.url);
    // A small young generation: this thread's garbage is short-lived (statements' parameters and rows), and
    // a bulk load grew the default one to tens of megabytes of resident memory for no measured gain (docs/performance.md).
    const resourceLimits = { maxYoungGenerationSizeMb: 8 };
    if (fromSource) {
      const tsx = import.meta.resolve('tsx/esm/api');
      const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(script.href)}); })`;
      this.worker = new Worker(code, { eval: true, workerData: options, resourceLimits });
    } else {
      this.worker = new Worker(script, { workerData: options, resourceLimits });
    }
    this.ready = new Promise<void>((resolve, reject) => {
      this.pending.set(0, {
        resolve: () => {
          this.started = true;
          resolve();
        },
        reject,
      });
    });
    this.worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      call?.resolve(reply);
    });
    const fail = (thrown: unknown) => {
      // An error thrown in the thread arrives as what could be copied of it (a SqliteError: only its code).
      const err = thrown instanceof Error ? thrown : describeThrown(thrown, options.path);
      if (this.dead) return;
      this.dead = err;
      for (const call of this.pending.values()) call.reject(err);
      this.pending.clear();
      if (this.started && !this.closing) onDeath(err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the SQLite thread exited (code ${code})`)));
  }

  async call(request: Call): Promise<Reply> {
    if (this.dead) throw this.dead;
    const id = this.nextId++;
    // While an answer is awaited the thread keeps the process alive, not otherwise.
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.closing = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ op: 'close' });
    await exited;
  }
}

class ThreadConnection implements DatabaseConnection {
  /** A statement since the last release may have written. */
  written = false;
  inTransaction = false;

  constructor(private readonly thread: SqliteThread) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const reply = await this.thread.call({ op: 'query', sql: compiled.sql, params: [...compiled.parameters] });
    this.written ||= reply.written;
    this.inTransaction = reply.inTransaction;
    if (!reply.ok) throw toError(reply.error);
    const answer = reply.result as QueryAnswer;
    if (answer.changes === undefined) return { rows: answer.rows as R[] };
    return {
      rows: [],
      numAffectedRows: BigInt(answer.changes),
      ...(answer.lastInsertRowid !== undefined ? { insertId: BigInt(answer.lastInsertRowid) } : {}),
    };
  }

  // biome-ignore lint/correctness/useYield: SQLite queries are never streamed; the method only refuses.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on SQLite');
  }
}

/** A Kysely driver over the SQLite thread, with jobs beside it (Db.run). */
export class ThreadedSqliteDriver implements Driver {
  private started: { thread: SqliteThread; connection: ThreadConnection } | null = null;
  private queue: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  constructor(
    private readonly options: SqliteThreadOptions,
    /** null: synchronous=NORMAL asked for (or a reader), writes do not wait for the disk. */
    private readonly wal: WalSync | null,
    /** null: a reader, which writes nothing to checkpoint. */
    private readonly checkpointer: Checkpointer | null,
    /**
     * The thread stopped while in use (it answers every request, errors
     * included, so only something like running out of memory stops it).
     * Every later query fails with `err`; a process should exit and be
     * restarted: what it accepted is on disk.
     */
    private readonly onDeath: (err: Error) => void = () => undefined,
  ) {
    // The writer's thread starts at once; a reader's with its first query (a process may never report).
    if (!options.reader) this.start();
  }

  private start() {
    if (!this.started) {
      const thread = new SqliteThread(this.options, this.onDeath);
      this.started = { thread, connection: new ThreadConnection(thread) };
    }
    return this.started;
  }

  private get thread(): SqliteThread {
    return this.start().thread;
  }

  private get connection(): ThreadConnection {
    return this.start().connection;
  }

  async init(): Promise<void> {
    await this.thread.ready;
  }

  /** One Kysely connection or job at a time, in the order they asked. */
  private lock(): Promise<() => void> {
    let release: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const before = this.queue;
    this.queue = before.then(() => mine);
    return before.then(() => release);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.release = await this.lock();
    return this.connection;
  }

  /** With the write lock at once, as the thread's jobs do (see ImmediateSqliteDriver in sqlite-worker.ts); a reader's reads one snapshot. */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(this.options.reader ? 'begin' : 'begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  /** Not when SQLite has already rolled back by itself (disk full, I/O error): see the thread's driver. */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.connection.inTransaction) await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint "${name.replace(/"/g, '""')}"`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to "${name.replace(/"/g, '""')}"`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release "${name.replace(/"/g, '""')}"`));
  }

  async releaseConnection(): Promise<void> {
    const wrote = this.connection.written && !this.connection.inTransaction;
    if (wrote) this.connection.written = false;
    const release = this.release;
    this.release = null;
    release?.();
    if (wrote) await this.wal?.sync();
  }

  /**
   * Runs a job (src/db/jobs.ts) in one transaction on the thread; one result
   * per item. Jobs queue on the thread without waiting for the
   * Kysely connection: the thread runs them in order, after any transaction
   * of that connection that is open.
   */
  async run<Item, Result>(job: Job<Item, Result>, items: Item[]): Promise<Result[]> {
    const reply = await this.thread.call({ op: 'job', module: job.module, name: job.name, arg: items });
    if (reply.written && !reply.synced) await this.wal?.sync();
    if (!reply.ok) throw toError(reply.error);
    return reply.result as Result[];
  }

  async destroy(): Promise<void> {
    await this.checkpointer?.stop();
    await this.wal?.close();
    await this.started?.thread.close();
  }
}
