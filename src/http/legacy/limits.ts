/**
 * Limits of the legacy interface. The request limit itself is counted by
 * src/http/rate-limit.ts (per account, shared through Redis when
 * REDIS_URL is set); the report window below is per process.
 */
import type { WindowLimit } from '../rate-limit.ts';

export type Clock = () => number;

export interface RateLimit {
  /** Requests an account may make at once. */
  capacity: number;
  /** Requests per second it may make sustained. */
  perSecond: number;
}

/** The legacy 429: 100 requests at once, 20 a second sustained, per account. */
export const DEFAULT_RATE_LIMIT: RateLimit = { capacity: 100, perSecond: 20 };

/**
 * The limit as a fixed window (what @fastify/rate-limit counts): `capacity`
 * requests per `capacity / perSecond` seconds, so 100 per 5 s for the
 * default. Sustained, that is the same 20 a second; a burst may reach 100 at
 * once, and up to twice that across a window's end (docs/legacy.md).
 */
export function windowLimit(limit: RateLimit): WindowLimit {
  return { max: limit.capacity, windowMs: Math.max(1000, Math.round((limit.capacity / limit.perSecond) * 1000)) };
}

/**
 * One call per window per key and report (the legacy reports are heavy
 * queries). A call reserves the window; a call that fails releases it, so a
 * mistyped date does not cost the client 30 seconds.
 */
export class ReportWindow {
  private last = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** 0 when the call may go ahead (and the window starts), else the seconds left. */
  reserve(key: string): number {
    const now = this.clock();
    const at = this.last.get(key);
    if (at !== undefined && now - at < this.windowMs) return Math.max(1, Math.ceil((this.windowMs - (now - at)) / 1000));
    if (this.last.size > 50_000) {
      for (const [k, v] of this.last) if (now - v >= this.windowMs) this.last.delete(k);
    }
    this.last.set(key, now);
    return 0;
  }

  release(key: string): void {
    this.last.delete(key);
  }
}
