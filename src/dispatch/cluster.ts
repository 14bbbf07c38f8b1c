import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, ProcessesTable } from '../db/tables.ts';
import { waitingMessages } from '../messaging/outbox.ts';
import { certainlyGone, thisProcess, type ProcessIdentity } from './registry.ts';

/**
 * The gateway processes sharing a database, whatever their role
 * (GATEWAY_ROLE: api, dispatch, all), as the operator sees them
 * (GET /admin/cluster, `cli cluster`). Each process has a row in
 * `processes` (migration 011), written when it starts and every quarter
 * lease after; it is alive while it was seen within two leases and, on this
 * running system, while its pid is its own (as the dispatchers registry,
 * src/dispatch/registry.ts, judges). Rows of gone processes are deleted by
 * the others' beats.
 */

export type Role = 'all' | 'api' | 'dispatch';

export interface ClusterProcess {
  id: string;
  role: string;
  host: string;
  pid: number;
  startedAt: string;
  lastSeenAt: string;
  connectors: string[];
  /** True for the process answering. */
  self: boolean;
}

export interface ClusterOutbox {
  connector: string;
  queued: number;
  scheduled: number;
  sending: number;
}

export interface ClusterView {
  processes: ClusterProcess[];
  outbox: ClusterOutbox[];
}

function gone(row: ProcessesTable, self: ProcessIdentity, now: number, leaseMs: number): boolean {
  return row.seen_at < now - 2 * leaseMs || certainlyGone(row, self);
}

/** Writes (or refreshes) a process's row. */
export async function beatProcess(db: Kysely<Database>, row: ProcessesTable): Promise<void> {
  await db
    .insertInto('processes')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: row.seen_at, connectors: row.connectors }))
    .execute();
}

/** Deletes a process's row. */
export async function removeProcess(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('processes').where('id', '=', id).execute();
}

/** Deletes the rows of processes that are gone; answers how many. */
export async function pruneProcesses(db: Kysely<Database>, leaseMs: number, now = Date.now()): Promise<number> {
  const self = thisProcess();
  const rows = await db.selectFrom('processes').selectAll().execute();
  const dead = rows.filter((r) => gone(r, self, now, leaseMs)).map((r) => r.id);
  if (dead.length > 0) await db.deleteFrom('processes').where('id', 'in', dead).execute();
  return dead.length;
}

/** The processes alive and the outbox depth per carrier connection (every process's messages). */
export async function clusterView(db: Kysely<Database>, leaseMs: number, selfId: string | null, now = Date.now()): Promise<ClusterView> {
  const self = thisProcess();
  const rows = await db.selectFrom('processes').selectAll().orderBy('started_at').orderBy('id').execute();
  const processes = rows
    .filter((r) => !gone(r, self, now, leaseMs))
    .map((r) => ({
      id: r.id,
      role: r.role,
      host: r.host.split('|')[0] ?? r.host,
      pid: r.pid,
      startedAt: new Date(r.started_at).toISOString(),
      lastSeenAt: new Date(r.seen_at).toISOString(),
      connectors: JSON.parse(r.connectors) as string[],
      self: r.id === selfId,
    }));
  const depth = new Map<string, ClusterOutbox>();
  for (const w of await waitingMessages(db)) {
    const entry = depth.get(w.connector) ?? { connector: w.connector, queued: 0, scheduled: 0, sending: 0 };
    if (w.status === 'QUEUED') entry.queued += w.n;
    else if (w.status === 'SCHEDULED') entry.scheduled += w.n;
    else if (w.status === 'SENDING') entry.sending += w.n;
    depth.set(w.connector, entry);
  }
  // Every connection some process runs, with nothing waiting too.
  for (const p of processes) for (const c of p.connectors) if (!depth.has(c)) depth.set(c, { connector: c, queued: 0, scheduled: 0, sending: 0 });
  const outbox = [...depth.values()].sort((a, b) => a.connector.localeCompare(b.connector));
  return { processes, outbox };
}

/** This process's row, kept fresh every quarter lease until stopped. */
export class ProcessBeacon {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private readonly row: ProcessesTable;
  private failing: unknown = null;
  private retrying: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    role: Role,
    private readonly leaseMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    const now = Date.now();
    this.row = { id: this.id, role, ...thisProcess(), started_at: now, seen_at: now, connectors: '[]' };
  }

  /** The carrier connections this process holds now (written at the next beat, or now once started). */
  setConnectors(connectors: string[]): void {
    this.row.connectors = JSON.stringify(connectors);
    if (this.timer) void this.beat();
  }

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.leaseMs / 4);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      const now = Date.now();
      this.row.seen_at = now;
      await beatProcess(this.db, this.row);
      this.failing = null;
      await pruneProcesses(this.db, this.leaseMs, now);
    } catch (err) {
      this.failing = err;
      this.onError(err);
    }
  }

  /**
   * The error of this process's last write of its row (a full disk, a
   * database that takes no writes), or null when it was written: the
   * readiness check's view of whether the database takes writes. After a
   * failure it writes again first, so that space coming back shows at once.
   */
  async writeError(): Promise<unknown> {
    if (this.failing !== null) {
      // One write for any number of readiness checks at once.
      this.retrying ??= this.beat().finally(() => {
        this.retrying = null;
      });
      await this.retrying;
    }
    return this.failing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await removeProcess(this.db, this.id).catch(this.onError);
  }
}
