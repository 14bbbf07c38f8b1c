import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import { defineJob } from '../db/jobs.ts';
import { chooseLeg, readLegs, receiverPick, type Leg } from './legs.ts';

/**
 * Failover between the legs of a route (docs/carriers.md, "Failover"). A
 * message on a leg whose connection could not carry it for a temporary
 * reason, or whose binds have all been down for a while, moves to the next
 * leg: among the legs matching its receiver, those after it in the order
 * (priority, then the operator's order), chosen like at accept. Never back
 * to an earlier leg, so a message cannot go round in circles; after the
 * last leg it stays where it is and waits for its connection.
 *
 * A receiver's waiting messages on the connection move together, in their
 * order, and are marked `moved`: while one of them waits on the next leg,
 * the claim on any other connection holds back that receiver's later
 * messages (src/dispatch/claim.ts), so the receiver's order holds across
 * connections too.
 */

/** The leg after `from` for `receiver`, or null: none matches after it, or `from` is not one of its matching legs. */
export function nextLeg(legs: readonly Leg[], receiver: string, from: string): Leg | null {
  const matching = legs
    .map((leg, position) => ({ leg, position }))
    .filter(({ leg }) => leg.prefixes.length === 0 || leg.prefixes.some((p) => receiver.startsWith(p)))
    .sort((a, b) => a.leg.priority - b.leg.priority || a.position - b.position);
  const at = matching.findIndex(({ leg }) => leg.connector === from);
  if (at < 0) return null;
  const after = matching
    .slice(at + 1)
    .map(({ leg }) => leg)
    .filter((leg) => leg.connector !== from);
  return chooseLeg(after, receiver, receiverPick(receiver));
}

interface Waiting {
  id: string;
  route_id: number;
  receiver: string;
}

/** Moves waiting messages of a connection to their next legs; answers how many moved. */
async function move(tx: Transaction<Database>, from: string, rows: Waiting[], now: number): Promise<number> {
  const legsOf = new Map<number, Leg[]>();
  const byTarget = new Map<string, string[]>();
  for (const r of rows) {
    const route = Number(r.route_id);
    let legs = legsOf.get(route);
    if (!legs) {
      legs = await readLegs(tx, route);
      legsOf.set(route, legs);
    }
    const next = nextLeg(legs, r.receiver, from);
    if (next) byTarget.set(next.connector, [...(byTarget.get(next.connector) ?? []), r.id]);
  }
  let moved = 0;
  for (const [connector, ids] of byTarget) {
    for (let i = 0; i < ids.length; i += 500) {
      const result = await tx
        .updateTable('messages')
        .set({ connector, moved: 1, status: 'QUEUED', due_at: now, status_at: now, lease_owner: null })
        .where('id', 'in', ids.slice(i, i + 500))
        .where('connector', '=', from)
        .where('status', 'in', ['QUEUED', 'SCHEDULED'])
        .executeTakeFirst();
      moved += Number(result.numUpdatedRows);
    }
  }
  return moved;
}

/**
 * A message its connection handed back for a temporary reason (just written
 * QUEUED): it and its receiver's later waiting messages on that connection
 * move to their next legs.
 */
export async function failOverMessage(tx: Transaction<Database>, messageId: string, now: number): Promise<number> {
  const m = await tx.selectFrom('messages').select(['connector', 'receiver', 'schedule_at', 'id']).where('id', '=', messageId).executeTakeFirst();
  if (!m) return 0;
  const rows = await tx
    .selectFrom('messages')
    .select(['id', 'route_id', 'receiver'])
    .where('connector', '=', m.connector)
    .where('receiver', '=', m.receiver)
    .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
    .where('status', '=', 'QUEUED')
    .where((eb) => eb.or([eb('schedule_at', '>', m.schedule_at), eb.and([eb('schedule_at', '=', m.schedule_at), eb('id', '>=', m.id)])]))
    .execute();
  return move(tx, m.connector, rows, now);
}

/** Most messages one pass over a connection that is down moves (the next pass moves the rest). */
const PASS = 5000;

export interface ConnectionFailover {
  connector: string;
  now: number;
}

/**
 * A connection whose binds have all been down longer than its
 * failoverAfterMs: its waiting messages that are due (or waiting for a
 * retry) move to their next legs, oldest first, except the receivers with a
 * message still leased on it (in flight somewhere), which wait for the next
 * pass. Answers how many moved.
 */
export async function failOverConnection(tx: Transaction<Database>, _dialect: Dialect, requests: ConnectionFailover[]): Promise<number[]> {
  const out: number[] = [];
  for (const { connector, now } of requests) {
    // Only the routes that have this connection as a leg may move anything.
    const routes = (await tx.selectFrom('route_legs').select('route_id').distinct().where('connector', '=', connector).execute()).map((r) => r.route_id);
    if (routes.length === 0) {
      out.push(0);
      continue;
    }
    const busy = await tx
      .selectFrom('messages')
      .select('receiver')
      .where('connector', '=', connector)
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .where('status', '=', 'SENDING')
      .execute();
    const skip = new Set(busy.map((b) => b.receiver));
    const rows = await tx
      .selectFrom('messages')
      .select(['id', 'route_id', 'receiver'])
      .where('connector', '=', connector)
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .where((eb) => eb.or([eb('status', '=', 'QUEUED'), eb('due_at', '<=', now)]))
      .where('status', '!=', 'SENDING')
      .where('route_id', 'in', routes)
      .orderBy('schedule_at')
      .orderBy('id')
      .limit(PASS)
      .execute();
    out.push(
      await move(
        tx,
        connector,
        rows.filter((r) => !skip.has(r.receiver)),
        now,
      ),
    );
  }
  return out;
}

export const failOverConnectionJob = defineJob(import.meta.url, 'failOverConnectionJob', failOverConnection);
