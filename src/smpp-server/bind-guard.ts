/**
 * Who may have a bind checked. A bind's password is checked with the slow
 * scrypt hash (about a quarter of a second of a core, two at a time for the whole
 * process): unbounded, a client opening binds in a loop (an attacker with
 * made-up system_ids, or a customer's software reconnecting without pause)
 * queued thousands of checks, held both cores for minutes and made every
 * other customer's bind wait behind them. So binds are admitted before any
 * hashing, counted when they arrive:
 *
 * - at most `perAddress` binds of one address being checked at once, and
 *   `perAddressPerMinute` bind attempts of one address a minute;
 * - at most `atOnce` binds being checked in the whole server;
 * - `failureLimit` failed binds of one address within `failureWindowMs`
 *   refuse its binds for `blockMs`.
 *
 * A bind refused here is answered at once (ESME_RBINDFAIL), without a hash.
 */
export interface BindGuardOptions {
  atOnce: number;
  perAddress: number;
  perAddressPerMinute: number;
  failureLimit: number;
  failureWindowMs: number;
  blockMs: number;
}

interface AddressState {
  /** Binds being checked now. */
  checking: number;
  /** Attempts in the current minute, and when it began. */
  attempts: number;
  minuteStart: number;
  /** Failed binds in the current failure window, and when it began. */
  failures: number;
  failuresSince: number;
  blockedUntil: number;
}

/** Addresses kept before the idle ones are forgotten. */
const SWEEP_ABOVE = 10_000;
const MINUTE_MS = 60_000;

export class BindGuard {
  private readonly addresses = new Map<string, AddressState>();
  private checking = 0;

  constructor(private readonly o: BindGuardOptions) {}

  /**
   * Admits a bind of `address` for its check, or says why not. An admitted
   * bind must be followed by `done` once checked.
   */
  admit(address: string, now: number): string | null {
    const a = this.state(address, now);
    if (a.blockedUntil > now) return 'too many failed binds from this address';
    if (now - a.minuteStart >= MINUTE_MS) {
      a.attempts = 0;
      a.minuteStart = now;
    }
    if (a.attempts >= this.o.perAddressPerMinute) return `more than ${this.o.perAddressPerMinute} binds a minute from this address`;
    a.attempts++;
    if (a.checking >= this.o.perAddress) return `${a.checking} binds from this address are being checked`;
    if (this.checking >= this.o.atOnce) return `${this.checking} binds are being checked`;
    a.checking++;
    this.checking++;
    return null;
  }

  /** Ends an admitted bind's check; a failed one counts toward the address's block. Returns true when the address is now blocked. */
  done(address: string, failed: boolean, now: number): boolean {
    const a = this.state(address, now);
    // Never below zero: only an admitted bind comes here, and an address with a bind being checked is never swept.
    a.checking--;
    this.checking--;
    if (!failed) return false;
    if (now - a.failuresSince > this.o.failureWindowMs) {
      a.failures = 0;
      a.failuresSince = now;
    }
    a.failures++;
    if (a.failures < this.o.failureLimit) return false;
    a.blockedUntil = now + this.o.blockMs;
    return true;
  }

  private state(address: string, now: number): AddressState {
    let a = this.addresses.get(address);
    if (!a) {
      if (this.addresses.size >= SWEEP_ABOVE) this.sweep(now);
      a = { checking: 0, attempts: 0, minuteStart: now, failures: 0, failuresSince: now, blockedUntil: 0 };
      this.addresses.set(address, a);
    }
    return a;
  }

  /** Forgets addresses with nothing being checked, no block and no recent attempt or failure. */
  private sweep(now: number): void {
    for (const [address, a] of this.addresses)
      if (a.checking === 0 && a.blockedUntil <= now && now - a.minuteStart >= MINUTE_MS && now - a.failuresSince > this.o.failureWindowMs)
        this.addresses.delete(address);
  }
}
