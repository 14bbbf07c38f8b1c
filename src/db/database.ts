import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration } from 'kysely';
import type { Database } from './tables.ts';
import { initial } from './migrations/001_initial.ts';
import { legacy } from './migrations/002_legacy.ts';
import { childrenLinks } from './migrations/003_children_links.ts';
import { webhooks } from './migrations/004_webhooks.ts';
import { claimIndex } from './migrations/005_claim_index.ts';

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
  const file = new SQLite(join(options.dataDir, options.sqliteFile ?? 'gateway.sqlite'));
  file.pragma('journal_mode = WAL');
  file.pragma(`synchronous = ${options.sqliteSynchronous ?? 'FULL'}`);
  file.pragma('busy_timeout = 5000');
  file.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(file) }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than
 * running a small statement. The same SQL text reuses its prepared statement
 * (better-sqlite3 statements are reusable and run synchronously).
 */
function withStatementCache(file: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => file.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= 2000) cache.clear();
        statement = file.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
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
  };
  // Kysely looks for its bookkeeping tables in any schema unless told which:
  // name the current one, so databases sharing a server (schemas) never mix.
  const schema = db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s : undefined;
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
