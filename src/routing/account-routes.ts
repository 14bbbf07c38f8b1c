import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import { notFound } from '../common/errors.ts';
import { listAccountRoutes } from './routes.ts';
import { LookupCache } from '../common/lookup-cache.ts';

/**
 * The routes each account may send through, read once a second at most:
 * every send needs its route, and a query per request costs more than the
 * rest of the lookup. Changes made in this process (operator API, CLI,
 * child users) call invalidate() and are seen at once; other processes
 * sharing the database see them within `ttlMs`, like API key revocations.
 */
export class AccountRoutes {
  private readonly cache: LookupCache<number, RouteRow[]>;

  constructor(
    private readonly db: Executor,
    ttlMs = 1000,
  ) {
    this.cache = new LookupCache(ttlMs);
  }

  invalidate(): void {
    this.cache.clear();
  }

  list(accountId: number): Promise<RouteRow[]> {
    return this.cache.get(accountId, () => listAccountRoutes(this.db, accountId));
  }

  /** The route if the account may use it; NOT_FOUND otherwise (no hint that it exists for others). */
  async get(accountId: number, routeId: number): Promise<RouteRow> {
    const route = (await this.list(accountId)).find((r) => Number(r.id) === routeId);
    if (!route) throw notFound(`Route ${routeId}`);
    return route;
  }

  /** Without a route id, the account's first route of the channel. */
  async first(accountId: number, channel: 'SMS' | 'RCS'): Promise<RouteRow> {
    const route = (await this.list(accountId)).find((r) => r.channel === channel);
    if (!route) throw notFound(`An ${channel} route for this account`);
    return route;
  }
}
