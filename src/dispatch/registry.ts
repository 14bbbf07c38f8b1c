import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { Database, DispatchersTable } from '../db/tables.ts';
import { releaseLeasesOf } from './connection-leases.ts';

/**
 * Which dispatchers work on the database, and which of them are gone.
 *
 * A dispatcher leases the messages it takes (SENDING, `lease_owner`). When
 * its process dies, those messages would wait for their leases to run out
 * (a minute), and meanwhile the receivers' later messages must not overtake
 * them. So each dispatcher has a row here: its host, its process id and
 * start time, and when it last said it was alive. A process on the same
 * running system whose pid is gone (or belongs to a process started at
 * another time) is gone for certain, at once; one on another host is gone
 * when it has not been seen for two leases. The leases of a gone owner are
 * recovered: its messages go back to QUEUED, due now, ahead of their
 * receivers' later messages as they were.
 */

export interface ProcessIdentity {
  host: string;
  pid: number;
  started: string;
}

/** This process, as its row names it. */
export function thisProcess(): ProcessIdentity {
  return { host: hostKey(), pid: process.pid, started: startTime(process.pid) ?? '' };
}

/** Host name and boot id: a container on the same kernel has a host name of its own. */
function hostKey(): string {
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // not Linux: the host name alone
  }
  return `${hostname()}|${boot}`;
}

/** A process's start time in clock ticks after boot (/proc/PID/stat, field 22); null where unknown. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** True when the process is certainly not running any more: same system, and its pid gone or reused. */
export function certainlyGone(other: ProcessIdentity, self: ProcessIdentity): boolean {
  if (other.host !== self.host) return false;
  try {
    process.kill(other.pid, 0);
  } catch (err) {
    // EPERM: it exists, as another user.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const started = startTime(other.pid);
  return other.started !== '' && started !== null && started !== other.started;
}

export class Registry {
  private readonly self = thisProcess();

  constructor(
    private readonly db: Kysely<Database>,
    readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  /** Says this dispatcher is alive (its row, added the first time). */
  async beat(now = Date.now()): Promise<void> {
    await this.db
      .insertInto('dispatchers')
      .values({ owner: this.owner, ...this.self, seen_at: now })
      .onConflict((oc) => oc.column('owner').doUpdateSet({ seen_at: now }))
      .execute();
  }

  /**
   * Finds the dispatchers that are gone, gives their leased messages of
   * these connectors back to the outbox, and forgets them. Answers how many
   * other dispatchers are still there (alive, or not known to be gone).
   */
  async sweep(connectors: string[], now = Date.now()): Promise<{ others: number; recovered: number }> {
    const rows = await this.db.selectFrom('dispatchers').selectAll().where('owner', '!=', this.owner).execute();
    let others = 0;
    let recovered = 0;
    for (const row of rows) {
      if (!this.gone(row, now)) {
        others++;
        continue;
      }
      recovered += await recoverLeases(this.db, row.owner, connectors, now);
      // Its carrier connections are free to take now, not after their lease.
      await releaseLeasesOf(this.db, row.owner);
      await this.db.deleteFrom('dispatchers').where('owner', '=', row.owner).execute();
    }
    return { others, recovered };
  }

  /** Leaves: the leases still held go back to the outbox, and the row goes. */
  async leave(connectors: string[]): Promise<number> {
    const recovered = await recoverLeases(this.db, this.owner, connectors, Date.now());
    await this.db.deleteFrom('dispatchers').where('owner', '=', this.owner).execute();
    return recovered;
  }

  private gone(row: DispatchersTable, now: number): boolean {
    return certainlyGone(row, this.self) || row.seen_at < now - 2 * this.leaseMs;
  }
}

/**
 * An owner's leased messages back to QUEUED, due now: the claim takes them
 * in their place, ahead of their receivers' later messages. Whether the
 * carrier got them is unknown: they are sent again (at-least-once).
 */
async function recoverLeases(db: Kysely<Database>, owner: string, connectors: string[], now: number): Promise<number> {
  let recovered = 0;
  for (const connector of connectors) {
    const result = await db
      .updateTable('messages')
      .set({ status: 'QUEUED', due_at: now, lease_owner: null, status_at: now })
      .where('connector', '=', connector)
      // Literal, so that the partial index messages_claim_idx (migration 005) serves it.
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .where('status', '=', 'SENDING')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    recovered += Number(result.numUpdatedRows);
  }
  return recovered;
}
