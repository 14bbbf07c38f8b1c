import type { Executor } from '../db/executor.ts';
import { notFound, validation } from '../common/errors.ts';
import { LookupCache } from '../common/lookup-cache.ts';

/**
 * Routing legs (docs/carriers.md, "Routing legs"): a route may name the
 * carrier connections that carry its messages, in order. For each message,
 * the legs whose prefixes match its receiver (no prefixes: any receiver) are
 * candidates; the lowest priority among them carries it, and weights split
 * the messages among the candidates of that priority. No matching leg, or no
 * legs at all: the route's own `connector` carries it, as without legs.
 */
export interface Leg {
  connector: string;
  /** Digit prefixes of the receivers it carries (international form, e.g. 5511); empty: any receiver. */
  prefixes: string[];
  /** Lower first. */
  priority: number;
  /** Share among the matching legs of the same priority, >= 1. */
  weight: number;
}

/** The most legs a route may have, and prefixes a leg may list. */
export const MAX_LEGS = 50;
export const MAX_PREFIXES = 500;

/**
 * A number in [0, 1) from the receiver (FNV-1a, then a finalizing mix so
 * that consecutive numbers spread): the weighted choice. Per receiver, not
 * per message: a receiver's messages go through one leg while the legs do
 * not change, so that its order (kept per connector) holds.
 */
export function receiverPick(receiver: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < receiver.length; i++) {
    h ^= receiver.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 0x1_0000_0000;
}

const matches = (leg: Leg, receiver: string) => leg.prefixes.length === 0 || leg.prefixes.some((p) => receiver.startsWith(p));

/**
 * The leg that carries a message to `receiver`, or null (the route's own
 * connector then): among the matching legs of the lowest priority, the one
 * `pick` (in [0, 1)) falls on when their weights are laid end to end.
 */
export function chooseLeg(legs: readonly Leg[], receiver: string, pick: number): Leg | null {
  let best: Leg[] = [];
  for (const leg of legs) {
    if (!matches(leg, receiver)) continue;
    if (best.length === 0 || leg.priority < (best[0] as Leg).priority) best = [leg];
    else if (leg.priority === (best[0] as Leg).priority) best.push(leg);
  }
  if (best.length <= 1) return best[0] ?? null;
  const total = best.reduce((sum, leg) => sum + leg.weight, 0);
  let at = pick * total;
  for (const leg of best) {
    if (at < leg.weight) return leg;
    at -= leg.weight;
  }
  return best[best.length - 1] as Leg;
}

/** The route's legs, in the operator's order. */
export async function readLegs(db: Executor, routeId: number): Promise<Leg[]> {
  const rows = await db
    .selectFrom('route_legs')
    .select(['connector', 'prefixes', 'priority', 'weight'])
    .where('route_id', '=', routeId)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({
    connector: r.connector,
    prefixes: r.prefixes === '' ? [] : r.prefixes.split(','),
    priority: Number(r.priority),
    weight: Number(r.weight),
  }));
}

/**
 * Problems of a list of legs for a route of `channel`: each connector must be
 * a configured connection carrying the channel, prefixes digits (1 to 15),
 * priority and weight whole numbers (weight >= 1).
 */
export function legProblems(legs: readonly Leg[], channel: 'SMS' | 'RCS', carriers: ReadonlyMap<string, { channels: readonly string[] }>): string[] {
  const problems: string[] = [];
  if (legs.length > MAX_LEGS) problems.push(`legs: at most ${MAX_LEGS} legs`);
  legs.forEach((leg, i) => {
    const at = `legs[${i}]`;
    const carrier = carriers.get(leg.connector);
    if (!carrier) problems.push(`${at}.connector: no carrier connection named "${leg.connector}"; configured: ${[...carriers.keys()].join(', ')}`);
    else if (!carrier.channels.includes(channel)) problems.push(`${at}.connector: connection "${leg.connector}" does not carry ${channel}`);
    if (leg.prefixes.length > MAX_PREFIXES) problems.push(`${at}.prefixes: at most ${MAX_PREFIXES} prefixes`);
    for (const p of leg.prefixes) if (!/^\d{1,15}$/.test(p)) problems.push(`${at}.prefixes: "${p}" is not a prefix of 1 to 15 digits`);
    if (!Number.isSafeInteger(leg.weight) || leg.weight < 1 || leg.weight > 1_000_000) problems.push(`${at}.weight: must be a whole number from 1 to 1000000`);
    if (!Number.isSafeInteger(leg.priority) || leg.priority < 0 || leg.priority > 1_000_000)
      problems.push(`${at}.priority: must be a whole number from 0 to 1000000`);
  });
  return problems;
}

/** Replaces the route's legs with `legs` (already checked by legProblems); none: the route sends through its connector. NOT_FOUND without the route. */
export async function replaceLegs(db: Executor, routeId: number, legs: readonly Leg[]): Promise<void> {
  await db.deleteFrom('route_legs').where('route_id', '=', routeId).execute();
  if (legs.length === 0) return;
  await db
    .insertInto('route_legs')
    .values(
      legs.map((leg, position) => ({
        route_id: routeId,
        position,
        connector: leg.connector,
        prefixes: leg.prefixes.join(','),
        priority: leg.priority,
        weight: leg.weight,
      })),
    )
    .execute();
}

/** The route's channel, or NOT_FOUND. */
export async function routeChannel(db: Executor, routeId: number): Promise<'SMS' | 'RCS'> {
  const route = await db.selectFrom('routes').select('channel').where('id', '=', routeId).executeTakeFirst();
  if (!route) throw notFound(`Route ${routeId}`);
  return route.channel;
}

/** Throws the validation error of legProblems, if any. */
export function checkLegs(legs: readonly Leg[], channel: 'SMS' | 'RCS', carriers: ReadonlyMap<string, { channels: readonly string[] }>): void {
  const problems = legProblems(legs, channel, carriers);
  if (problems.length) throw validation(problems);
}

/**
 * Each route's legs, read once a second at most, like the account routes
 * (src/routing/account-routes.ts): every send looks them up, and a route
 * without legs costs one map lookup. Changes made in this process call
 * invalidate() and are seen at once; other processes see them within `ttlMs`.
 */
export class RouteLegs {
  private readonly cache: LookupCache<number, Leg[]>;

  constructor(
    private readonly db: Executor,
    ttlMs = 1000,
  ) {
    this.cache = new LookupCache(ttlMs);
  }

  invalidate(): void {
    this.cache.clear();
  }

  get(routeId: number): Promise<Leg[]> {
    return this.cache.get(routeId, () => readLegs(this.db, routeId));
  }
}
