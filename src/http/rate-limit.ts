import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Core } from '../core.ts';
import { cachedAccountRateLimit } from '../accounts/rate-limits.ts';

/** How long the start waits for Redis before serving without it (requests are then not limited until it is up). */
const REDIS_CONNECT_WAIT_MS = 2000;

/** A fixed-window limit: at most `max` requests per `windowMs`. */
export interface WindowLimit {
  max: number;
  windowMs: number;
}

export interface AccountLimitOptions {
  /** Counter namespace of the interface ('gateway', 'legacy'): each interface counts an account's requests apart. */
  scope: string;
  /** Limit of an account without a setting of its own; null = none. */
  defaultLimit: WindowLimit | null;
}

/**
 * Per-account request limit of an interface (docs/operations.md, "Rate
 * limits"), with @fastify/rate-limit: in Redis when REDIS_URL is set (every
 * process sharing it counts together), else in this process's memory. Call
 * the returned check after authentication: it counts the request against
 * the principal's account and answers 0 when it may go ahead, else the
 * seconds to wait (the interface answers its own 429 with Retry-After).
 * A Redis failure lets requests through (logged), rather than refuse them all.
 */
export async function accountRateLimit(app: FastifyInstance, core: Core, options: AccountLimitOptions): Promise<(request: FastifyRequest) => Promise<number>> {
  const { config } = core;
  const windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
  const limitOf = async (accountId: number): Promise<WindowLimit | null> => {
    const setting = await cachedAccountRateLimit(core.db.kysely, accountId);
    if (setting === 'off') return null;
    if (setting === 'default') return options.defaultLimit;
    return { max: setting * config.RATE_LIMIT_WINDOW_SECONDS, windowMs };
  };
  let redis: Redis | undefined;
  if (config.REDIS_URL) {
    // No offline queue: while Redis is unreachable a count fails at once (and the request goes ahead), rather than wait.
    // Loaded only then: a process without REDIS_URL does not carry the client.
    const { Redis } = await import('ioredis');
    redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2000, enableOfflineQueue: false });
    let warned = false;
    redis.on('error', (err: Error) => {
      if (!warned) app.log.warn({ err }, 'rate limit: Redis unreachable; requests are not limited until it is back');
      warned = true;
    });
    redis.on('ready', () => {
      warned = false;
    });
    const client = redis;
    app.addHook('onClose', async () => {
      await client.quit().catch(() => client.disconnect());
    });
    // The start waits for the connection (at most REDIS_CONNECT_WAIT_MS), so that the first requests are counted.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    // In memory: the accounts counted at once (least recently used first out; one evicted starts a new window).
    cache: 50_000,
    ...(redis ? { redis, nameSpace: config.RATE_LIMIT_REDIS_PREFIX } : {}),
    keyGenerator: (request) => `${options.scope}:${request.principal.accountId}`,
    allowList: async (request) => (await limitOf(request.principal.accountId)) === null,
    max: async (request) => (await limitOf(request.principal.accountId))?.max ?? Number.MAX_SAFE_INTEGER,
    timeWindow: async (request) => (await limitOf(request.principal.accountId))?.windowMs ?? windowMs,
  });
  const check = app.createRateLimit();
  return async (request) => {
    const result = await check(request);
    if (result.isAllowed || !result.isExceeded) return 0;
    return Math.max(1, result.ttlInSeconds);
  };
}
