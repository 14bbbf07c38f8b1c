/**
 * A few slots shared by accounts (the reports' connection, src/db/database.ts):
 * work that finds every slot taken waits in its account's own queue, and a
 * freed slot goes to the waiting account with the fewest slots in use, the
 * one served longest ago among those: so one account's dozen reports hold
 * another's back by one report, not by the dozen.
 */
export class AccountLanes {
  /** Accounts with work waiting. */
  private readonly waiting = new Map<number, (() => void)[]>();
  /** Accounts with work running or waiting: slots in use and when they were last given one. */
  private readonly accounts = new Map<number, { running: number; served: number }>();
  private running = 0;
  private clock = 0;

  constructor(private readonly slots: number) {}

  /** Runs `work` once a slot is free and it is the account's turn. */
  async run<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    await this.slot(accountId);
    try {
      return await work();
    } finally {
      this.running--;
      const account = this.accounts.get(accountId);
      if (account) account.running--;
      if (account?.running === 0 && !this.waiting.has(accountId)) this.accounts.delete(accountId);
      this.next();
    }
  }

  private slot(accountId: number): Promise<void> {
    if (!this.accounts.has(accountId)) this.accounts.set(accountId, { running: 0, served: -1 });
    if (this.running < this.slots && this.waiting.size === 0) {
      this.serve(accountId);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const queue = this.waiting.get(accountId);
      if (queue) queue.push(resolve);
      else this.waiting.set(accountId, [resolve]);
      this.next();
    });
  }

  private serve(accountId: number): void {
    const account = this.accounts.get(accountId);
    if (account) {
      account.running++;
      account.served = this.clock++;
    }
    this.running++;
  }

  private next(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let chosen: number | undefined;
      let best: { running: number; served: number } | undefined;
      for (const accountId of this.waiting.keys()) {
        const a = this.accounts.get(accountId) ?? { running: 0, served: -1 };
        if (!best || a.running < best.running || (a.running === best.running && a.served < best.served)) {
          chosen = accountId;
          best = a;
        }
      }
      if (chosen === undefined) return;
      const queue = this.waiting.get(chosen) ?? [];
      const resolve = queue.shift();
      if (queue.length === 0) this.waiting.delete(chosen);
      this.serve(chosen);
      resolve?.();
    }
  }
}
