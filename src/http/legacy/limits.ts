/**
 * In-process limits of the legacy interface. They are per process: behind
 * several processes a client gets each process's allowance.
 */
export type Clock = () => number;

export interface RateLimit {
  /** Requests a key may make at once. */
  capacity: number;
  /** Requests per second the allowance refills with. */
  perSecond: number;
}

/** The legacy 429: a token bucket of 100 requests at once, 20 a second sustained, per API key. */
export const DEFAULT_RATE_LIMIT: RateLimit = { capacity: 100, perSecond: 20 };

/** A token bucket per API key. */
export class KeyRateLimiter {
  private buckets = new Map<number, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly clock: Clock,
  ) {}

  /** 0 when the request may go ahead, else the seconds to wait. */
  take(keyId: number): number {
    const now = this.clock();
    const b = this.buckets.get(keyId) ?? { tokens: this.limit.capacity, at: now };
    const tokens = Math.min(this.limit.capacity, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond);
    if (tokens < 1) {
      this.buckets.set(keyId, { tokens, at: now });
      return Math.max(1, Math.ceil((1 - tokens) / this.limit.perSecond));
    }
    if (this.buckets.size > 50_000) this.buckets.clear();
    this.buckets.set(keyId, { tokens: tokens - 1, at: now });
    return 0;
  }
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
