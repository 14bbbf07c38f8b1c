import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import { notFound } from '../shared/errors.ts';
import { listAccountRoutes } from './routes.ts';

/**
 * The routes each account may send through, read once a second at most:
 * every send needs its route, and a query per request costs more than the
 * rest of the lookup. Changes made in this process (operator API, CLI,
 * child users) call invalidate() and are seen at once; other processes
 * sharing the database see them within `ttlMs`, like API key revocations.
 */
export class AccountRoutes {
  private cache = new Map<number, { routes: Promise<RouteRow[]>; expires: number }>();

  constructor(
    private readonly db: Executor,
    private readonly ttlMs = 1000,
  ) {}

  invalidate(): void {
    this.cache.clear();
  }

  list(accountId: number): Promise<RouteRow[]> {
    const now = Date.now();
    const cached = this.cache.get(accountId);
    if (cached && cached.expires > now) return cached.routes;
    if (this.cache.size > 10_000) this.invalidate();
    const fresh = { routes: listAccountRoutes(this.db, accountId), expires: now + this.ttlMs };
    this.cache.set(accountId, fresh);
    // A failed read is not remembered.
    fresh.routes.catch(() => this.cache.get(accountId) === fresh && this.cache.delete(accountId));
    return fresh.routes;
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
