import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { loadConfig, type Config } from '../config.ts';
import { certainlyGone, thisProcess } from '../dispatch/registry.ts';

/**
 * `backup --to FILE` and `restore --from FILE` (docs/operations.md): the
 * SQLite database copied while the gateway runs, and put back while it
 * does not. PostgreSQL has its own tools (pg_dump, pg_restore): both
 * commands say so and change nothing.
 *
 * The backup is `VACUUM INTO` on a read-only connection of its own: one read
 * transaction, so the copy is the database as it was at one instant (a
 * commit is in it whole or not at all), WAL included, while the gateway
 * goes on writing (in WAL mode a reader never stops a writer). It is written
 * to a file created empty with mode 0600 beside the target, checked, synced
 * and renamed into place, so a crash never leaves half a backup under the
 * target's name.
 */

export class MaintenanceError extends Error {
  constructor(
    message: string,
    /** sysexits: 64 usage, 66 no input, 69 unavailable, 73 cannot create, 75 try again later. */
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const DATABASE_FILE = 'gateway.sqlite';

function postgresRefusal(config: Config, what: 'backup' | 'restore'): void {
  if (!config.DATABASE_URL) return;
  throw new MaintenanceError(
    what === 'backup'
      ? 'this gateway uses PostgreSQL (DATABASE_URL): back it up with pg_dump, e.g. pg_dump --format=custom --file=gateway.dump "$DATABASE_URL" (docs/operations.md); nothing was written'
      : 'this gateway uses PostgreSQL (DATABASE_URL): restore a pg_dump backup with pg_restore, e.g. pg_restore --clean --if-exists --dbname="$DATABASE_URL" gateway.dump, with every gateway process stopped (docs/operations.md); nothing was changed',
    69,
  );
}

/** The file and its directory on disk (a rename is durable once the directory is synced). */
function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDir(path: string): void {
  try {
    syncFile(path);
  } catch {
    // Some file systems cannot sync a directory: the rename is still atomic.
  }
}

/** What a gateway database holds, read for the summary (and as a check that it is one). */
function describe(path: string): { accounts: number; messages: number; migration: string | null } {
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new MaintenanceError(`${path} fails SQLite's quick_check: ${String(check)}`, 65);
    const tables = new Set((db.prepare(`select name from sqlite_master where type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    if (!tables.has('messages') || !tables.has('accounts') || !tables.has('kysely_migration'))
      throw new MaintenanceError(`${path} is an SQLite database but not a gateway's (no accounts, messages or migrations table)`, 65);
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    const last = db.prepare('select name from kysely_migration order by name desc limit 1').get() as { name: string } | undefined;
    return { accounts: count('accounts'), messages: count('messages'), migration: last?.name ?? null };
  } catch (err) {
    if (err instanceof MaintenanceError) throw err;
    throw new MaintenanceError(`${path} cannot be read as a gateway database: ${err instanceof Error ? err.message : String(err)}`, 65);
  } finally {
    db.close();
  }
}

export interface BackupResult {
  backup: string;
  bytes: number;
  accounts: number;
  messages: number;
  migration: string | null;
  ms: number;
}

export function backup(config: Config, options: { to: string | undefined; force: boolean }): BackupResult {
  postgresRefusal(config, 'backup');
  if (!options.to) throw new MaintenanceError('backup needs --to FILE', 64);
  const started = Date.now();
  const source = join(config.GATEWAY_DATA_DIR, DATABASE_FILE);
  if (!existsSync(source)) throw new MaintenanceError(`no database to back up: ${source} does not exist (GATEWAY_DATA_DIR=${config.GATEWAY_DATA_DIR})`, 66);
  const target = resolve(options.to);
  if (existsSync(target) && !options.force) throw new MaintenanceError(`${target} exists: choose another file, or pass --force to replace it`, 73);
  if (!existsSync(dirname(target))) throw new MaintenanceError(`${dirname(target)}: no such directory`, 73);

  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  // Empty and owner-only before a byte is written: VACUUM INTO keeps the file's mode.
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    const db = new SQLite(source, { readonly: true, fileMustExist: true });
    try {
      // The gateway holds the write lock only for its short transactions; a read waits at most this long for one to end.
      db.pragma('busy_timeout = 10000');
      db.prepare('VACUUM INTO ?').run(partial);
    } finally {
      db.close();
    }
    chmodSync(partial, 0o600);
    const summary = describe(partial);
    syncFile(partial);
    renameSync(partial, target);
    syncDir(dirname(target));
    return { backup: target, bytes: statSync(target).size, ...summary, ms: Date.now() - started };
  } catch (err) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    if (err instanceof MaintenanceError) throw err;
    throw new MaintenanceError(`backup failed: ${err instanceof Error ? err.message : String(err)}`, 74);
  }
}

/**
 * Processes that may be using the database: the dispatchers recorded in it
 * (every gateway process; src/dispatch/registry.ts) not known to be gone,
 * and, on Linux, any process of this host with the file open (a CLI
 * command, a gateway that has not recorded itself yet).
 */
export function processesUsing(path: string, leaseMs: number, now = Date.now()): string[] {
  const found = new Map<string, string>();
  const self = thisProcess();
  if (existsSync(path)) {
    let db: SQLite.Database | null = null;
    try {
      db = new SQLite(path, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      const rows = db.prepare('select owner, host, pid, started, seen_at from dispatchers').all() as {
        host: string;
        pid: number;
        started: string;
        seen_at: number;
      }[];
      for (const row of rows) {
        const here = row.host === self.host;
        if (here ? certainlyGone(row, self) : row.seen_at < now - 2 * leaseMs) continue;
        const seen = `${Math.round((now - row.seen_at) / 1000)} s ago`;
        found.set(
          here ? `pid ${row.pid}` : `${row.host}:${row.pid}`,
          here ? `gateway process ${row.pid} on this host (last seen ${seen})` : `gateway process ${row.pid} on ${row.host.split('|')[0]} (last seen ${seen})`,
        );
      }
    } catch {
      // An older database without the dispatchers table, or one that cannot be read: the scan below still looks.
    } finally {
      db?.close();
    }
  }
  for (const pid of openedBy(path)) if (!found.has(`pid ${pid}`)) found.set(`pid ${pid}`, `process ${pid} on this host has the database open`);
  return [...found.values()];
}

/** Pids of this host's processes holding the database (or its WAL) open, read from /proc; empty where there is no /proc. */
function openedBy(path: string): number[] {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return [];
  }
  const files = new Set([real, `${real}-wal`, `${real}-shm`]);
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (files.has(target)) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

export interface RestoreResult {
  restored: string;
  from: string;
  accounts: number;
  messages: number;
  migration: string | null;
  /** Messages the backup had leased to a dispatcher (SENDING), given back to the outbox. */
  released: number;
  /** The database that was there before, moved aside (never deleted). */
  previous: string | null;
}

export function restore(config: Config, options: { from: string | undefined; force: boolean }): RestoreResult {
  postgresRefusal(config, 'restore');
  if (!options.from) throw new MaintenanceError('restore needs --from FILE', 64);
  const from = resolve(options.from);
  if (!existsSync(from)) throw new MaintenanceError(`${from}: no such file`, 66);
  const summary = describe(from);

  const dir = config.GATEWAY_DATA_DIR;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, DATABASE_FILE);
  const users = processesUsing(target, config.DISPATCH_LEASE_MS);
  if (users.length > 0 && !options.force) {
    throw new MaintenanceError(
      `the database in ${dir} is in use: ${users.join('; ')}. Stop every gateway process on it first (or pass --force if you know they are gone); nothing was changed`,
      75,
    );
  }

  const partial = join(dir, `.${DATABASE_FILE}.restoring-${process.pid}`);
  let released = 0;
  try {
    copyFileSync(from, partial);
    chmodSync(partial, 0o600);
    released = detach(partial);
    syncFile(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    throw new MaintenanceError(`cannot copy ${from} into ${dir}: ${err instanceof Error ? err.message : String(err)}`, 73);
  }

  // The database there before goes aside whole, with its WAL (which may hold its latest commits): nothing is deleted.
  let previous: string | null = null;
  if (existsSync(target)) {
    previous = join(dir, `${DATABASE_FILE}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    renameSync(target, previous);
  }
  for (const suffix of ['-wal', '-shm', '-journal']) {
    if (!existsSync(`${target}${suffix}`)) continue;
    if (previous) renameSync(`${target}${suffix}`, `${previous}${suffix}`);
    else rmSync(`${target}${suffix}`);
  }
  renameSync(partial, target);
  syncDir(dir);
  return { restored: target, from, ...summary, released, previous };
}

/**
 * The copy belongs to no process: the dispatchers recorded in it worked on
 * the database it was taken from. Their rows go, and the messages they held
 * leased go back to the outbox, due now, as the gateway does for a process
 * that is gone (src/dispatch/registry.ts): whether the carrier got them
 * before the backup was taken is unknown, so they are sent again
 * (at-least-once). Answers how many went back.
 */
function detach(path: string): number {
  const db = new SQLite(path, { fileMustExist: true });
  try {
    return db.transaction(() => {
      const now = Date.now();
      const { changes } = db
        .prepare(`update messages set status = 'QUEUED', due_at = ?, lease_owner = null, status_at = ? where status = 'SENDING'`)
        .run(now, now);
      db.prepare('delete from dispatchers').run();
      return changes;
    })();
  } finally {
    db.close();
  }
}

/**
 * The two commands as the CLI runs them (src/cli/main.ts): the answer as
 * JSON on stdout, a refusal as one line on stderr; answers the exit code.
 */
export function runMaintenance(
  command: 'backup' | 'restore',
  values: { to?: string | undefined; from?: string | undefined; force?: boolean | undefined },
): number {
  const config = loadConfig();
  const force = values.force === true;
  try {
    const result = command === 'backup' ? backup(config, { to: values.to, force }) : restore(config, { from: values.from, force });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof MaintenanceError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
}
