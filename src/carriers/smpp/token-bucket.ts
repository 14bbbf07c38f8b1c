/**
 * Token bucket for the submit rate an SMSC contract allows: `rate` tokens a
 * second, at most `rate` (>= 1) banked so a quiet bind may burst one second's
 * worth. A rate of 0 or less means no limit.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly burst: number;

  constructor(
    private readonly rate: number,
    private readonly now: () => number = Date.now,
  ) {
    this.burst = Math.max(1, rate);
    this.tokens = this.burst;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rate) / 1000);
    this.last = t;
  }

  /** Takes a token if one is there. */
  take(): boolean {
    if (this.rate <= 0) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token will be there (0 if one is). */
  wait(): number {
    if (this.rate <= 0) return 0;
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }
}
