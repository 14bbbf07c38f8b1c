import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';

/**
 * Which carrier connections this dispatcher may run, when several gateway
 * processes share a database (docs/operations.md, "Running several
 * processes"). A connection allowing `maxBinds` binds has that many slots
 * (table connection_leases, migration 016); a dispatcher takes at most one
 * slot of each connection and runs the connection (binds, sends its
 * messages) only while it holds that slot's lease. It renews the lease every
 * fifth of it; a holder that dies or stops renewing loses the slot when the
 * lease runs out, and another process takes it then, within one lease. A
 * holder that cannot renew gives the connection up itself a little before
 * its lease ends (marginOf; the dispatcher's watchdog), so two processes
 * never run one slot at once.
 */
export interface Connection {
  name: string;
  /** Binds the carrier allows on this connection, over all processes (>= 1). */
  maxBinds: number;
}

export interface LeaseChanges {
  gained: string[];
  lost: string[];
  /** The database error met, if any (the leases it left alone are tried again at the next tick). */
  error?: unknown;
}

/** The part of a lease kept back for stopping the connection before another process may take it: a fifth, at least a second (never more than half). */
const marginOf = (leaseMs: number) => Math.min(leaseMs / 2, Math.max(leaseMs / 5, 1000));

/**
 * How long before that margin a holder that could not renew stops
 * submitting and waits for the answers in flight, so that what the carrier
 * has is answered, not sent again after the connection is closed: as long as
 * the margin, but never before two renewals (one every fifth of the lease)
 * were missed.
 */
const drainOf = (leaseMs: number) => Math.max(0, Math.min(marginOf(leaseMs), leaseMs - (2 * leaseMs) / 5 - marginOf(leaseMs)));

export class ConnectionLeases {
  /** Connector → the end of this dispatcher's lease on its slot. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly connections: readonly Connection[],
  ) {}

  holds(connector: string): boolean {
    return this.held.has(connector);
  }

  /** When this dispatcher's lease on the connection ends (undefined: not held). */
  endOf(connector: string): number | undefined {
    return this.held.get(connector);
  }

  /** The time before a lease's end by which a holder that could not renew closes the connection. */
  get marginMs(): number {
    return marginOf(this.leaseMs);
  }

  /** The time before marginMs from which a holder that could not renew stops submitting and lets the answers in flight come. */
  get drainMs(): number {
    return drainOf(this.leaseMs);
  }

  /** Stops holding the connection here (its lease could not be renewed in time); the row runs out by itself. */
  forget(connector: string): void {
    this.held.delete(connector);
  }

  /** The connections this dispatcher holds now. */
  list(): string[] {
    return [...this.held.keys()];
  }

  /**
   * Renews the leases held and tries to take a free (or expired) slot of
   * each connection not held; answers what changed. A database error leaves
   * the leases as they were, except those too close to their end, which are
   * lost; it is answered, not thrown.
   */
  async tick(ready: (connector: string) => boolean, now = Date.now()): Promise<LeaseChanges> {
    const changes: LeaseChanges = { gained: [], lost: [] };
    for (const c of this.connections) {
      const until = now + this.leaseMs;
      const had = this.held.get(c.name);
      try {
        const ok = had !== undefined ? await this.renew(c.name, until, ready(c.name)) : await this.take(c, now, until);
        if (ok && had !== undefined && !this.held.has(c.name)) {
          // Let go while the renewal ran (see forget): the slot goes back now rather than idle until its lease ends.
          await this.db.deleteFrom('connection_leases').where('connector', '=', c.name).where('owner', '=', this.owner).execute();
        } else if (ok) {
          this.held.set(c.name, until);
          if (had === undefined) changes.gained.push(c.name);
        } else if (had !== undefined) {
          this.held.delete(c.name);
          changes.lost.push(c.name);
        }
      } catch (err) {
        if (had !== undefined && had - this.marginMs <= now) {
          this.held.delete(c.name);
          changes.lost.push(c.name);
        }
        changes.error = err;
      }
    }
    return changes;
  }

  /** True when this dispatcher still held its slot and renewed it. */
  private async renew(connector: string, until: number, ready: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('connection_leases')
      .set({ until, ready: ready ? 1 : 0 })
      .where('connector', '=', connector)
      .where('owner', '=', this.owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Takes the first slot that is free or whose lease ran out; true when one was taken. */
  private async take(c: Connection, now: number, until: number): Promise<boolean> {
    for (let slot = 0; slot < c.maxBinds; slot++) {
      const result = await this.db
        .insertInto('connection_leases')
        .values({ connector: c.name, slot, owner: this.owner, until, ready: 0 })
        .onConflict((oc) => oc.columns(['connector', 'slot']).doUpdateSet({ owner: this.owner, until, ready: 0 }).where('connection_leases.until', '<', now))
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0n) > 0) return true;
    }
    return false;
  }

  /** True when another holder of the connection, alive, says its bind is up. */
  async upElsewhere(connector: string, now = Date.now()): Promise<boolean> {
    const row = await this.db
      .selectFrom('connection_leases')
      .select('owner')
      .where('connector', '=', connector)
      .where('owner', '!=', this.owner)
      .where('until', '>=', now)
      .where('ready', '=', 1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Gives every slot back (the process stops): another process may take them at once. */
  async release(): Promise<void> {
    this.held.clear();
    await this.db.deleteFrom('connection_leases').where('owner', '=', this.owner).execute();
  }
}

/** Frees the slots of a dispatcher that is gone (src/dispatch/registry.ts), so that another takes them now, not after the lease. */
export async function releaseLeasesOf(db: Kysely<Database>, owner: string): Promise<void> {
  await db.deleteFrom('connection_leases').where('owner', '=', owner).execute();
}

/** Each connection's holders: connector → owners (GET /admin/cluster). */
export async function leaseHolders(db: Kysely<Database>, now = Date.now()): Promise<Map<string, string[]>> {
  const rows = await db.selectFrom('connection_leases').select(['connector', 'owner']).where('until', '>=', now).execute();
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.connector, [...(out.get(r.connector) ?? []), r.owner]);
  return out;
}
