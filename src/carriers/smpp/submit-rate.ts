/**
 * The submit rate an SMSC contract allows, `rate` submit_sm a second,
 * counted over any second, not on average: it keeps the times of the last
 * `n` submits and allows another only when the oldest of them is `span` ms
 * old, with n = max(1, floor(rate)) and span = n / rate seconds. So no
 * window of one second ever holds more than `rate` submits, however the
 * SMSC cuts its seconds (a token bucket would let a quiet bind send a
 * second's worth at once, then the rate: twice the contract in one second).
 * The window is 5% longer than a second: submits leave in batches and
 * cross the network with some jitter, and the SMSC counts them when they
 * arrive, so a submit sent at the end of one window may land in the
 * SMSC's next second with those sent after it. A rate of 0 or less means
 * no limit.
 */
/** How much longer than the contract's second the window is (see above). */
const SLACK = 1.05;

export class SubmitRate {
  private readonly n: number;
  private readonly spanMs: number;
  /** Times of the last n submits, oldest first, as a ring. */
  private readonly times: number[];
  private next = 0;

  constructor(
    rate: number,
    private readonly now: () => number = Date.now,
  ) {
    this.n = rate > 0 ? Math.max(1, Math.floor(rate)) : 0;
    this.spanMs = rate > 0 ? (this.n * 1000 * SLACK) / rate : 0;
    this.times = new Array<number>(this.n).fill(Number.NEGATIVE_INFINITY);
  }

  /** Counts the whole rate as used now: the next submit waits one window. */
  fill(): void {
    this.times.fill(this.now());
  }

  /** Milliseconds until a submit is allowed (0 if it is now). */
  wait(): number {
    if (this.n === 0) return 0;
    const oldest = this.times[this.next] as number;
    return Math.max(0, Math.ceil(oldest + this.spanMs - this.now()));
  }

  /** Counts a submit if one is allowed now. */
  take(): boolean {
    if (this.n === 0) return true;
    if (this.wait() > 0) return false;
    this.times[this.next] = this.now();
    this.next = (this.next + 1) % this.n;
    return true;
  }
}
