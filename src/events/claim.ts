import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import { defineJob } from '../db/jobs.ts';
import { takeTurns } from '../common/turns.ts';
import { eventsDb, type DeliveryRow } from './tables.ts';

/** A claim of due webhook deliveries, as plain data (a job, src/db/jobs.ts): the deliverer's state it depends on travels with it. */
export interface DeliveryClaim {
  owner: string;
  now: number;
  leaseMs: number;
  /** Deliveries to claim at most: the deliverer's free attempts. */
  room: number;
  /** Attempts in flight at most per account (WEBHOOK_CONCURRENCY_PER_ACCOUNT). */
  perAccount: number;
  /** The deliverer's attempts in flight, per account. */
  inFlight: [number, number][];
  /** Behind a backlog, the account looked at last by the previous claim: this one starts after it. */
  afterAccount: number;
}

export interface ClaimedDeliveries {
  rows: (DeliveryRow & { secret: string | null })[];
  /** Behind a backlog, the account looked at last (the next claim's afterAccount). */
  lastTurn: number | undefined;
}

/**
 * Claims due deliveries (new, retry time reached, or lease expired) with a
 * lease, at most `room`, and no account past `perAccount` attempts in
 * flight: one account's endpoint that answers slowly or not at all keeps at
 * most that many of the deliverer's attempts, the others go on. Oldest
 * first; behind a backlog (more due than the room) accounts take turns
 * (src/common/turns.ts), so that one account's backlog delays another's
 * deliveries by one claim. Each row comes with its webhook's secret.
 */
export async function claimDeliveries(tx: Transaction<Database>, dialect: Dialect, claims: DeliveryClaim[]): Promise<ClaimedDeliveries[]> {
  const out: ClaimedDeliveries[] = [];
  for (const c of claims) out.push(await claimOne(tx, dialect, c));
  return out;
}

async function claimOne(tx: Transaction<Database>, dialect: Dialect, c: DeliveryClaim): Promise<ClaimedDeliveries> {
  const t = eventsDb(tx);
  // Due deliveries in one status, oldest first (of one account: webhook_deliveries_account_due_idx, migration 018).
  const due = (status: 'PENDING' | 'DELIVERING', limit: number, account?: number) =>
    t
      .selectFrom('webhook_deliveries')
      .select(['id', 'account_id', 'due_at'])
      .where('status', '=', status)
      .$if(account !== undefined, (q) => q.where('account_id', '=', account as number))
      .where('due_at', '<=', c.now)
      .orderBy('due_at')
      .limit(limit)
      .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked())
      .execute();
  // Waiting for an attempt, and attempts whose lease ran out (their process died: few, due again).
  const expired = await due('DELIVERING', c.room);
  const oldest = [...(await due('PENDING', c.room)), ...expired].sort((x, y) => Number(x.due_at) - Number(y.due_at)).slice(0, c.room);
  const busy = new Map(c.inFlight);
  const left = (account: number) => c.perAccount - (busy.get(account) ?? 0);
  const chosen = new Set<string>();
  const choose = (id: string, account: number) => {
    chosen.add(id);
    busy.set(account, (busy.get(account) ?? 0) + 1);
  };
  let lastTurn: number | undefined;
  if (oldest.length === c.room) {
    const turns = await takeTurns(
      {
        next: async (from) => {
          const row = await t
            .selectFrom('webhook_deliveries')
            .select('account_id')
            .where('status', '=', 'PENDING')
            .where('account_id', '>', from)
            .orderBy('account_id')
            .limit(1)
            .executeTakeFirst();
          return row === undefined ? undefined : Number(row.account_id);
        },
        take: async (account, count) => {
          const n = Math.min(count, left(account));
          return n > 0 ? due('PENDING', n, account) : [];
        },
      },
      c.afterAccount,
      c.room,
    );
    for (const d of turns.rows) choose(d.id, Number(d.account_id));
    lastTurn = turns.last;
  }
  for (const d of oldest) {
    const account = Number(d.account_id);
    if (chosen.size < c.room && left(account) > 0 && !chosen.has(d.id)) choose(d.id, account);
  }
  if (chosen.size === 0) return { rows: [], lastTurn };
  const rows = await t
    .updateTable('webhook_deliveries')
    .set({ status: 'DELIVERING', lease_owner: c.owner, due_at: c.now + c.leaseMs, attempts: sql`attempts + 1` })
    .where('id', 'in', [...chosen])
    .returningAll()
    .execute();
  const hookIds = [...new Set(rows.map((r) => r.webhook_id).filter((id): id is number => id !== null))];
  const secrets = new Map<number, string>();
  if (hookIds.length) {
    for (const h of await t.selectFrom('webhooks').select(['id', 'secret']).where('id', 'in', hookIds).execute()) secrets.set(Number(h.id), h.secret);
  }
  return {
    rows: rows
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((r) => ({ ...r, secret: r.webhook_id === null ? null : (secrets.get(Number(r.webhook_id)) ?? null) })),
    lastTurn,
  };
}

/** claimDeliveries as a job (src/db/jobs.ts). */
export const claimDeliveriesJob = defineJob(import.meta.url, 'claimDeliveriesJob', claimDeliveries);
