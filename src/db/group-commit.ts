import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables.ts';

/**
 * Group commit: work items that arrive while a transaction is being written
 * are collected and written together in the next one. Under load, one commit
 * (one fsync) carries many requests; when idle, an item is committed at once.
 * Each item's promise settles only after its transaction committed, so an
 * answer is never sent for data that is not durable.
 */
export class GroupCommitter<In, Out> {
  private pending: { item: In; resolve: (v: Out) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    /** Writes all items in one transaction; returns one outcome per item (an Error rejects that item only). */
    private readonly write: (tx: Transaction<Database>, items: In[]) => Promise<(Out | Error)[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  /** Resolves when nothing is pending or being written. */
  async idle(): Promise<void> {
    while (this.running) await new Promise((r) => setTimeout(r, 5));
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.commit(batch);
      } catch {
        // One bad item must not fail the others it happened to share a
        // transaction with: write each alone, so only the culprit fails.
        for (const b of batch) await this.commit([b]).catch((err: unknown) => b.reject(err));
      }
    }
    this.running = false;
  }

  private async commit(batch: { item: In; resolve: (v: Out) => void; reject: (e: unknown) => void }[]): Promise<void> {
    const outcomes = await this.db.transaction().execute((tx) => this.write(tx, batch.map((b) => b.item)));
    batch.forEach((b, i) => {
      const o = outcomes[i];
      if (o instanceof Error) b.reject(o);
      else b.resolve(o as Out);
    });
  }
}
