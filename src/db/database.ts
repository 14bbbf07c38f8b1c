import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type Migration } from 'kysely';
import type { Database } from './tables.ts';
import { Checkpointer } from './checkpointer.ts';
import { ThreadedSqliteDriver } from './sqlite-thread.ts';
import { WalSync } from './wal-sync.ts';
import type { Job } from './jobs.ts';
import type { Dialect } from './dialect.ts';
import { AccountLanes } from '../common/account-lanes.ts';
import { initial } from './migrations/001_initial.ts';
import { legacy } from './migrations/002_legacy.ts';
import { childrenLinks } from './migrations/003_children_links.ts';
import { webhooks } from './migrations/004_webhooks.ts';
import { claimIndex } from './migrations/005_claim_index.ts';
import { routeFallback } from './migrations/006_route_fallback.ts';
import { waitingIndex } from './migrations/007_waiting_index.ts';
import { tokenSecrets } from './migrations/008_token_secrets.ts';
import { dispatchers } from './migrations/009_dispatchers.ts';
import { accountStatus } from './migrations/010_account_status.ts';
import { processes } from './migrations/011_processes.ts';
import { accountRateLimit } from './migrations/012_account_rate_limit.ts';
import { routeLegs } from './migrations/013_route_legs.ts';
import { panelUsers } from './migrations/014_panel_users.ts';
import { smppAccounts } from './migrations/015_smpp_accounts.ts';
import { connectionLeases } from './migrations/016_connection_leases.ts';
import { deliveryResend } from './migrations/017_delivery_resend.ts';
import { accountTurns } from './migrations/018_account_turns.ts';

export type { Dialect } from './dialect.ts';

export interface Db {
  kysely: Kysely<Database>;
  /**
   * Reports and exports read here (never write): on SQLite a connection on a
   * thread of its own, on PostgreSQL a pool of its own (REPORT_CONNECTIONS connections).
   * A report's scan of one account's messages then never waits in, nor
   * holds, the queue or the connections every account's sends need.
   */
  reports: Kysely<Database>;
  /** Runs one read of an account's reports on `reports` when a connection is free and it is the account's turn (AccountLanes). */
  report<T>(accountId: number, read: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  dialect: Dialect;
  /** Runs a hot-path job (src/db/jobs.ts) as one transaction: one result per item (it throws only if the whole transaction fails). */
  run<Item, Result>(job: Job<Item, Result>, items: Item[]): Promise<Result[]>;
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
  /** SQLite: its thread stopped while in use; every later query fails (src/db/sqlite-thread.ts). */
  onSqliteDeath?: (err: Error) => void;
}

/** Checkpoints run in a worker (src/db/checkpointer.ts); the connection's own is a safety net (pages of 4 KiB). */
const CHECKPOINT_EVERY_MS = 200;
const AUTOCHECKPOINT_PAGES = 25_000;

/** Opens the database (SQLite in the data directory, or PostgreSQL) and runs the migrations. */
export async function openDatabase(options: DbOptions): Promise<Db> {
  const db = options.databaseUrl ? await openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options);
  try {
    await migrate(db);
  } catch (err) {
    // Not opened after all: stop its threads or pool.
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

/**
 * Kysely runs SQLite migrations without a lock or a transaction (it counts
 * on one connection per database), so processes starting together on one
 * new database file each ran them and all but one failed ("table ...
 * already exists"). Here the lock is a write transaction held while they
 * run: BEGIN IMMEDIATE waits (busy_timeout) for another process's, which
 * then has done them. The migrations commit together.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`begin immediate`.execute(db);
  }
  override async releaseMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`commit`.execute(db);
  }
}

function openSqlite(options: DbOptions): Db {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const path = join(options.dataDir, options.sqliteFile ?? 'gateway.sqlite');
  keepPrivate(path);
  const durable = (options.sqliteSynchronous ?? 'FULL') === 'FULL';
  const driver = new ThreadedSqliteDriver(
    { path, autocheckpointPages: AUTOCHECKPOINT_PAGES, syncJobs: durable },
    durable ? new WalSync(`${path}-wal`) : null,
    new Checkpointer(path, CHECKPOINT_EVERY_MS),
    options.onSqliteDeath,
  );
  const sqlite = (driver: ThreadedSqliteDriver) =>
    new Kysely<Database>({
      dialect: {
        createAdapter: () => new LockingSqliteAdapter(),
        createDriver: () => driver,
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
  const kysely = sqlite(driver);
  const reports = sqlite(new ThreadedSqliteDriver({ path, autocheckpointPages: 0, syncJobs: false, reader: true }, null, null, options.onSqliteDeath));
  return {
    kysely,
    ...reportsOn(reports, 1),
    dialect: 'sqlite',
    run: (job, items) => driver.run(job, items),
    close: async () => {
      await reports.destroy();
      await kysely.destroy();
    },
  };
}

/**
 * The database holds API key hashes, balances and every message: readable by
 * its owner only. SQLite gives its -wal and -shm files the mode of the
 * database file, so creating that file 0600 (and narrowing an older one)
 * covers all three, whatever the process umask.
 */
function keepPrivate(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** pg is loaded only here: a process on SQLite (a CLI command above all) does not wait for it. */
async function openPostgres(url: string, schema: string | undefined): Promise<Db> {
  const { default: pg } = await import('pg');
  // bigint columns (times, money) fit well inside 2^53: read them as numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const pool = (max: number) =>
    new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max, ...(schema ? { options: `-c search_path=${schema}` } : {}) }) }),
    });
  const kysely = pool(10);
  const reports = pool(REPORT_CONNECTIONS);
  return {
    kysely,
    ...reportsOn(reports, REPORT_CONNECTIONS),
    dialect: 'postgres',
    run: (job, items) => kysely.transaction().execute((tx) => job.run(tx, 'postgres', items)),
    close: async () => {
      await reports.destroy();
      await kysely.destroy();
    },
  };
}

/** PostgreSQL connections a process gives reports and exports, beside the 10 of everything else. */
export const REPORT_CONNECTIONS = 3;

/** The reports' connection(s), taken by accounts in turn. */
function reportsOn(reports: Kysely<Database>, slots: number): Pick<Db, 'reports' | 'report'> {
  const lanes = new AccountLanes(slots);
  return { reports, report: (accountId, read) => lanes.run(accountId, () => read(reports)) };
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
    '008_token_secrets': tokenSecrets,
    '009_dispatchers': dispatchers,
    '010_account_status': accountStatus,
    '011_processes': processes,
    '012_account_rate_limit': accountRateLimit,
    '013_route_legs': routeLegs(db.dialect),
    '014_panel_users': panelUsers(db.dialect),
    '015_smpp_accounts': smppAccounts(db.dialect),
    '016_connection_leases': connectionLeases,
    '017_delivery_resend': deliveryResend,
    '018_account_turns': accountTurns,
  };
  // Kysely looks for its bookkeeping tables in any schema unless told which:
  // name the current one, so databases sharing a server (schemas) never mix.
  const schema = db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s : undefined;
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    // Kysely looks its bookkeeping tables up across every schema of the server: a schema
    // another user drops meanwhile fails that lookup (invalid_schema_name). Nothing was
    // migrated yet (migrations run in one transaction, under a lock): try again.
    if (attempt < 5 && (error as { code?: unknown }).code === '3F000') continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}
