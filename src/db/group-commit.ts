interface Pending<In, Out> {
  item: In;
  resolve: (v: Out) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit: work items that arrive while a transaction is being written
 * are collected and written together in the next one. Under load, one commit
 * (one fsync) carries many requests; when idle, an item is committed at once.
 * Each item's promise settles only after its transaction committed and is
 * durable, so an answer is never sent for data that is not on disk.
 *
 * Two batches may be in flight: while one waits for its commit to reach the
 * disk (an fsync, which takes from a fraction of a millisecond to several
 * on cloud volumes), the next one is written. The database orders them
 * (SQLite: one writer; PostgreSQL: row locks taken in the same order).
 */
export class GroupCommitter<In, Out> {
  private pending: Pending<In, Out>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Writes all items in one transaction (e.g. a job, src/db/jobs.ts); returns one outcome per item. */
    private readonly write: (items: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
    /**
     * The rows an item writes, and the most a batch may write (at least one
     * item always goes): a batch of send requests of thousands of receivers
     * each would hold the database (on SQLite, its one thread) for long
     * enough that the dispatcher's claims and answers wait behind it, and
     * nothing is sent while a bulk load is accepted.
     */
    private readonly size: { of: (item: In) => number; max: number } | null = null,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Items submitted in the same turn of the event loop share a batch.
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Resolves when nothing is pending or being written. */
  async idle(): Promise<void> {
    while (this.scheduled || this.inFlight > 0 || this.pending.length > 0) await new Promise((r) => setTimeout(r, 5));
  }

  private pump(): void {
    while (this.pending.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.pending.splice(0, this.batchLength());
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** How many pending items the next batch takes: maxBatch, fewer when they write more than size.max rows. */
  private batchLength(): number {
    const end = Math.min(this.maxBatch, this.pending.length);
    if (!this.size) return end;
    let rows = 0;
    for (let i = 0; i < end; i++) {
      rows += this.size.of((this.pending[i] as Pending<In, Out>).item);
      if (rows > this.size.max) return Math.max(1, i);
    }
    return end;
  }

  private async run(batch: Pending<In, Out>[]): Promise<void> {
    try {
      await this.commit(batch);
    } catch {
      // One bad item must not fail the others it happened to share a
      // transaction with: write each alone, so only the culprit fails.
      for (const b of batch) await this.commit([b]).catch((err: unknown) => b.reject(err));
    }
  }

  private async commit(batch: Pending<In, Out>[]): Promise<void> {
    const outcomes = await this.write(batch.map((b) => b.item));
    for (const [i, b] of batch.entries()) b.resolve(outcomes[i] as Out);
  }
}
