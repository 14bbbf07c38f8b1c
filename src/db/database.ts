import { mkdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteAdapter, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler, sql, type Migration } from 'kysely';
import type { Database } from './tables.ts';
import { Checkpointer } from './checkpointer.ts';
import { initial } from './migrations/001_initial.ts';
import { legacy } from './migrations/002_legacy.ts';
import { childrenLinks } from './migrations/003_children_links.ts';
import { webhooks } from './migrations/004_webhooks.ts';
import { claimIndex } from './migrations/005_claim_index.ts';
import { routeFallback } from './migrations/006_route_fallback.ts';
import { waitingIndex } from './migrations/007_waiting_index.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface DbOptions {
  dataDir: string;
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to use (tests use a fresh one per run). */
  pgSchema?: string;
  sqliteSynchronous?: 'FULL' | 'NORMAL';
  /** SQLite file name inside dataDir. */
  sqliteFile?: string;
}

/** Checkpoints run in a worker (src/db/checkpointer.ts); the connection's own is a safety net (pages of 4 KiB). */
const CHECKPOINT_EVERY_MS = 200;
const AUTOCHECKPOINT_PAGES = 25_000;

// bigint columns (times, money) fit well inside 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** Opens the database (SQLite in the data directory, or PostgreSQL) and runs the migrations. */
export async function openDatabase(options: DbOptions): Promise<Db> {
  const db = options.databaseUrl ? openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options);
  await migrate(db);
  return db;
}

function openSqlite(options: DbOptions): Db {
  mkdirSync(options.dataDir, { recursive: true });
  const path = join(options.dataDir, options.sqliteFile ?? 'gateway.sqlite');
  const file = new SQLite(path);
  file.pragma('journal_mode = WAL');
  // Commits never fsync on the event loop: with FULL, a write waits for an
  // fsync of the WAL on libuv's thread pool instead (see DurableSqliteDriver).
  file.pragma('synchronous = NORMAL');
  file.pragma('busy_timeout = 5000');
  file.pragma('foreign_keys = ON');
  file.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  // The outbox's indexes are read and written on every commit: keep them in memory (64 MiB of page cache, not SQLite's 2 MiB).
  file.pragma('cache_size = -65536');
  const statements = withStatementCache(file);
  const durable = (options.sqliteSynchronous ?? 'FULL') === 'FULL';
  const driver = new DurableSqliteDriver(statements, durable ? new WalSync(`${path}-wal`) : null, new Checkpointer(path, CHECKPOINT_EVERY_MS));
  const kysely = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than
 * running a small statement. The same SQL text reuses its prepared statement
 * (better-sqlite3 statements are reusable and run synchronously). `written`
 * turns true when a statement that may write is run.
 */
function withStatementCache(file: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  const statements = {
    written: false,
    inTransaction: () => file.inTransaction,
    close: () => file.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= 2000) cache.clear();
        statement = file.prepare(sql);
        cache.set(sql, statement);
      }
      // Kysely runs what it prepares at once.
      if (!statement.readonly) statements.written = true;
      return statement;
    },
  };
  return statements;
}

/**
 * Durable writes without blocking the event loop. better-sqlite3 runs
 * statements synchronously, so with synchronous=FULL every commit would stop
 * the whole process for an fsync. Here SQLite commits with NORMAL (the WAL
 * is written, not synced) and a query or transaction that wrote resolves
 * only after an fsync of the WAL file, run on libuv's thread pool, completed
 * after its commit. Callers therefore see exactly FULL's promise (nothing is
 * answered before it is on disk) while the event loop keeps serving; the
 * fsyncs of writes that commit while one runs are coalesced into the next.
 * Checkpoints sync the WAL and the database file themselves (NORMAL does).
 */
class DurableSqliteDriver extends SqliteDriver {
  constructor(
    private readonly statements: ReturnType<typeof withStatementCache>,
    /** null: synchronous=NORMAL asked for, writes do not wait for the disk. */
    private readonly wal: WalSync | null,
    private readonly checkpointer: Checkpointer,
  ) {
    super({ database: statements });
  }

  override async releaseConnection(): Promise<void> {
    const wrote = this.statements.written && !this.statements.inTransaction();
    if (wrote) this.statements.written = false;
    await super.releaseConnection();
    if (wrote) await this.wal?.sync();
  }

  override async destroy(): Promise<void> {
    await this.checkpointer.stop();
    await this.wal?.close();
    await super.destroy();
  }
}

/** fsync of one file, coalesced: a caller waits for an fsync that started after its call. */
class WalSync {
  private handle: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly path: string) {}

  sync(): Promise<void> {
    if (!this.running) {
      this.running = this.fsync().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    // The one running may have started before the caller's commit: wait for the next.
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  async close(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
    const handle = await this.handle?.catch(() => null);
    this.handle = null;
    await handle?.close();
  }

  private startNext(): Promise<void> {
    this.next = null;
    return this.sync();
  }

  private async fsync(): Promise<void> {
    this.handle ??= open(this.path, 'r');
    try {
      await (await this.handle).sync();
    } catch (err) {
      this.handle = null; // opened again by the next call
      throw err;
    }
  }
}

function openPostgres(url: string, schema: string | undefined): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

async function migrate(db: Db): Promise<void> {
  // Kysely applies these in the order of their names.
  const migrations: Record<string, Migration> = {
    '001_initial': initial(db.dialect),
    '002_legacy': legacy(db.dialect),
    '003_children_links': childrenLinks(db.dialect),
    '004_webhooks': webhooks(db.dialect),
    '005_claim_index': claimIndex,
    '006_route_fallback': routeFallback,
    '007_waiting_index': waitingIndex,
  };
  // Kysely looks for its bookkeeping tables in any schema unless told which:
  // name the current one, so databases sharing a server (schemas) never mix.
  const schema = db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s : undefined;
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}

