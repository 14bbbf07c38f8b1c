import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import { fromMicros } from '../billing/money.ts';
import { notFound } from '../shared/errors.ts';

export interface NewRoute {
  displayName: string;
  productName: string;
  productId: number;
  farePrice: number;
  replyFarePrice: number;
  channel: 'SMS' | 'RCS';
  connector: string;
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
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function grantRoute(db: Executor, accountId: number, routeId: number): Promise<void> {
  const route = await db.selectFrom('routes').select('id').where('id', '=', routeId).executeTakeFirst();
  if (!route) throw notFound(`Route ${routeId}`);
  const exists = await db.selectFrom('account_routes').select('route_id').where('account_id', '=', accountId).where('route_id', '=', routeId).executeTakeFirst();
  if (!exists) await db.insertInto('account_routes').values({ account_id: accountId, route_id: routeId }).execute();
}

/** Routes the account may send through (spec 4.4). */
export async function listAccountRoutes(db: Executor, accountId: number): Promise<RouteRow[]> {
  return db
    .selectFrom('routes')
    .innerJoin('account_routes', 'account_routes.route_id', 'routes.id')
    .selectAll('routes')
    .where('account_routes.account_id', '=', accountId)
    .orderBy('routes.id')
    .execute();
}

/** The route if the account may use it; NOT_FOUND otherwise (no hint that it exists for others). */
export async function getAccountRoute(db: Executor, accountId: number, routeId: number): Promise<RouteRow> {
  const row = await db
    .selectFrom('routes')
    .innerJoin('account_routes', 'account_routes.route_id', 'routes.id')
    .selectAll('routes')
    .where('account_routes.account_id', '=', accountId)
    .where('routes.id', '=', routeId)
    .executeTakeFirst();
  if (!row) throw notFound(`Route ${routeId}`);
  return row;
}

/** Spec 2.3. */
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
