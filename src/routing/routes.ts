import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import { fromMicros } from '../billing/money.ts';
import { notFound, validation } from '../common/errors.ts';

export interface NewRoute {
  displayName: string;
  productName: string;
  productId: number;
  farePrice: number;
  replyFarePrice: number;
  channel: 'SMS' | 'RCS';
  connector: string;
  fallbackRouteId?: number | null;
}

export async function createRoute(db: Executor, input: NewRoute): Promise<RouteRow> {
  return db
    .insertInto('routes')
    .values({
      display_name: input.displayName,
      product_name: input.productName,
      product_id: input.productId,
      fare_price: input.farePrice,
      reply_fare_price: input.replyFarePrice,
      channel: input.channel,
      connector: input.connector,
      created_at: Date.now(),
      fallback_route_id: input.fallbackRouteId ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Problems of naming `fallbackId` as the SMS fallback of a route of
 * `channel` (`routeId`: the route itself, null while creating it): the
 * fallback must be another, existing, SMS route, set on an RCS route.
 */
export async function fallbackProblems(db: Executor, routeId: number | null, channel: 'SMS' | 'RCS', fallbackId: number): Promise<string[]> {
  if (fallbackId === routeId) return [`fallbackRouteId: a route cannot be its own fallback (route ${fallbackId})`];
  if (channel !== 'RCS') return [`fallbackRouteId: only an RCS route can have an SMS fallback; this route's channel is ${channel}`];
  const fallback = await db.selectFrom('routes').select('channel').where('id', '=', fallbackId).executeTakeFirst();
  if (!fallback) return [`fallbackRouteId: route ${fallbackId} does not exist`];
  if (fallback.channel !== 'SMS') return [`fallbackRouteId: route ${fallbackId} is an ${fallback.channel} route; the fallback must be an SMS route`];
  return [];
}

/** Sets or clears (null) a route's SMS fallback, after the checks of fallbackProblems. */
export async function setRouteFallback(db: Executor, routeId: number, fallbackId: number | null): Promise<RouteRow> {
  const route = await db.selectFrom('routes').select('channel').where('id', '=', routeId).executeTakeFirst();
  if (!route) throw notFound(`Route ${routeId}`);
  if (fallbackId !== null) {
    const problems = await fallbackProblems(db, routeId, route.channel, fallbackId);
    if (problems.length) throw validation(problems);
  }
  return db.updateTable('routes').set({ fallback_route_id: fallbackId }).where('id', '=', routeId).returningAll().executeTakeFirstOrThrow();
}

/** Grants the route to the account; granting it again (or twice at once) changes nothing and is not an error. */
export async function grantRoute(db: Executor, accountId: number, routeId: number): Promise<void> {
  const route = await db.selectFrom('routes').select('id').where('id', '=', routeId).executeTakeFirst();
  if (!route) throw notFound(`Route ${routeId}`);
  await db
    .insertInto('account_routes')
    .values({ account_id: accountId, route_id: routeId })
    .onConflict((oc) => oc.columns(['account_id', 'route_id']).doNothing())
    .execute();
}

/** Routes the account may send through (the gateway's `GET /routes`), by id. */
export async function listAccountRoutes(db: Executor, accountId: number): Promise<RouteRow[]> {
  return db
    .selectFrom('routes')
    .innerJoin('account_routes', 'account_routes.route_id', 'routes.id')
    .selectAll('routes')
    .where('account_routes.account_id', '=', accountId)
    .orderBy('routes.id')
    .execute();
}

/** One page of every route (operator view), by id. */
export async function listRoutes(db: Executor, page: { skip: number; limit: number }): Promise<{ records: ReturnType<typeof operatorRoute>[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.selectFrom('routes').selectAll().orderBy('id').offset(page.skip).limit(page.limit).execute(),
    db.selectFrom('routes').select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { records: rows.map(operatorRoute), total: Number(total?.n ?? 0) };
}

/** One page of the routes granted to the account (operator view), by id. */
export async function listGrantedRoutes(
  db: Executor,
  accountId: number,
  page: { skip: number; limit: number },
): Promise<{ records: ReturnType<typeof operatorRoute>[]; total: number }> {
  const base = db.selectFrom('routes').innerJoin('account_routes', 'account_routes.route_id', 'routes.id').where('account_routes.account_id', '=', accountId);
  const [rows, total] = await Promise.all([
    base.selectAll('routes').orderBy('routes.id').offset(page.skip).limit(page.limit).execute(),
    base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { records: rows.map(operatorRoute), total: Number(total?.n ?? 0) };
}

/** A route as the gateway shows it to its customers: id, displayName, farePrice, productName, productId, replyFarePrice. */
export function publicRoute(row: RouteRow) {
  return {
    id: Number(row.id),
    displayName: row.display_name,
    farePrice: fromMicros(row.fare_price),
    productName: row.product_name,
    productId: row.product_id,
    replyFarePrice: fromMicros(row.reply_fare_price),
  };
}

/** What the operator sees of a route: the public fields, channel, connector and SMS fallback. */
export function operatorRoute(row: RouteRow) {
  return {
    ...publicRoute(row),
    channel: row.channel,
    connector: row.connector,
    fallbackRouteId: row.fallback_route_id === null ? null : Number(row.fallback_route_id),
  };
}
