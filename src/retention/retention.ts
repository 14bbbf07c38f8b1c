import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Job } from '../db/jobs.ts';
import type { MediaStorage } from '../rcs/media-storage.ts';
import { deleteUnusedMedia } from './media.ts';
import {
  deleteCarrierIdsJob,
  deleteMessagesJob,
  deleteRepliesJob,
  type CarrierIdCursor,
  type MessageCursor,
  type MessagesBatchResult,
  type RepliesBatchResult,
  type CarrierIdsBatchResult,
} from './messages.ts';

/**
 * Retention (docs/operations.md): once a day, finished messages older than
 * RETENTION_MESSAGES_DAYS go with their status history, their requests once
 * empty, their carrier ids, old received texts and unmatched receipts; RCS
 * media unused for RETENTION_MEDIA_DAYS goes from the data directory or the
 * bucket. Both are off unless set: what must be kept, and for how long, is
 * the operator's decision (billing disputes, regulators), and deleting
 * cannot be undone.
 *
 * Every process that dispatches runs the loop; a row in `settings` makes
 * one run a day happen in one of them (the first to claim it), and the
 * steps are idempotent anyway. Each step is a small batch in its own
 * transaction (src/retention/messages.ts).
 */

const DAY_MS = 86_400_000;
/** How often a process looks whether the day's run is due. */
const CHECK_EVERY_MS = 3_600_000;
/** A run is due this long after the last one began (a little under a day, so that hourly checks do not drift). */
const RUN_EVERY_MS = DAY_MS - CHECK_EVERY_MS / 2;
/** The first look after start, once the process has settled. */
const FIRST_CHECK_MS = 60_000;
/** The `settings` row holding when the last run began (ms). */
export const LAST_RUN_SETTING = 'retention_last_run';

export interface RetentionOptions {
  messagesDays?: number | undefined;
  mediaDays?: number | undefined;
  /** The job's clock (tests pass their own: nothing waits for real days). */
  now?: () => number;
  /** Rows a batch reads (500). */
  batch?: number;
}

export interface RetentionReport {
  messages: number;
  statusLog: number;
  requests: number;
  carrierIds: number;
  replies: number;
  pendingReceipts: number;
  media: number;
  /** Old media kept because a message still to be sent names it. */
  mediaKept: number;
}

export class Retention {
  private readonly now: () => number;
  private readonly batch: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: RetentionOptions,
    /** Opened for a run that deletes media, closed after it. */
    private readonly openMedia: () => Promise<MediaStorage>,
  ) {
    this.now = options.now ?? Date.now;
    this.batch = options.batch ?? 500;
  }

  get enabled(): boolean {
    return this.options.messagesDays !== undefined || this.options.mediaDays !== undefined;
  }

  /** Looks a minute after start, then every hour, whether the day's run is due (nothing when both settings are off). */
  start(): void {
    if (!this.enabled || this.timer) return;
    const check = (ms: number) => {
      this.timer = setTimeout(() => {
        this.running = this.tick()
          .catch((err: unknown) => this.log.error({ err }, 'retention: the run failed; it is tried again at the next check'))
          .finally(() => {
            this.running = null;
            if (!this.stopping) check(CHECK_EVERY_MS);
          });
      }, ms);
      this.timer.unref();
    };
    check(FIRST_CHECK_MS);
  }

  /** Stops the loop; a run under way stops after its current batch. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * Runs when a day has passed since the last run by any process sharing the
   * database (claimed with one conditional update); null when not due.
   */
  async tick(): Promise<RetentionReport | null> {
    if (!this.enabled) return null;
    const now = this.now();
    if (!(await this.claim(now))) return null;
    return this.run(now);
  }

  private async claim(now: number): Promise<boolean> {
    const db = this.db.kysely;
    await db
      .insertInto('settings')
      .values({ name: LAST_RUN_SETTING, value: '0' })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const claimed = await db
      .updateTable('settings')
      .set({ value: String(now) })
      .where('name', '=', LAST_RUN_SETTING)
      .where(sql<number>`cast(value as bigint)`, '<=', now - RUN_EVERY_MS)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) === 1;
  }

  /** One run at `now`, without the daily claim. */
  async run(now = this.now()): Promise<RetentionReport> {
    const report: RetentionReport = { messages: 0, statusLog: 0, requests: 0, carrierIds: 0, replies: 0, pendingReceipts: 0, media: 0, mediaKept: 0 };
    const started = Date.now();
    if (this.options.messagesDays !== undefined) await this.deleteMessages(now - this.options.messagesDays * DAY_MS, report);
    if (this.options.mediaDays !== undefined && !this.stopping) {
      const storage = await this.openMedia();
      try {
        Object.assign(report, await deleteUnusedMedia(this.db.kysely, storage, now - this.options.mediaDays * DAY_MS, () => this.stopping));
      } finally {
        await storage.close();
      }
    }
    this.log.info({ ...report, ms: Date.now() - started }, 'retention: old data deleted');
    return report;
  }

  /** One batch, its own transaction (a job: on SQLite one trip to its thread). */
  private async one<Item, Result>(job: Job<Item, Result>, item: Item): Promise<Result> {
    const [result] = await this.db.run(job, [item]);
    if (result instanceof Error) throw result;
    // Between batches, the accept, claims and receipts get the database.
    await new Promise((resolve) => setImmediate(resolve));
    return result as Result;
  }

  private async deleteMessages(cutoff: number, report: RetentionReport): Promise<void> {
    const db = this.db.kysely;
    const accounts = await db.selectFrom('accounts').select('id').orderBy('id').execute();
    for (const { id } of accounts) {
      let after: MessageCursor | null = null;
      do {
        if (this.stopping) return;
        const r: MessagesBatchResult = await this.one(deleteMessagesJob, { accountId: Number(id), cutoff, after, limit: this.batch });
        report.messages += r.messages;
        report.statusLog += r.statusLog;
        report.requests += r.requests;
        after = r.next;
      } while (after !== null);
    }
    let afterId: number | null = 0;
    while (afterId !== null && !this.stopping) {
      const r: RepliesBatchResult = await this.one(deleteRepliesJob, { cutoff, afterId, limit: this.batch });
      report.replies += r.replies;
      afterId = r.next;
    }
    // Receipts that arrived before their carrier id and never matched one: a handful of rows.
    report.pendingReceipts += Number((await db.deleteFrom('pending_receipts').where('received_at', '<', cutoff).executeTakeFirst()).numDeletedRows);
    if (report.messages === 0) return;
    let after: CarrierIdCursor | null = null;
    do {
      if (this.stopping) return;
      const r: CarrierIdsBatchResult = await this.one(deleteCarrierIdsJob, { after, limit: this.batch * 2 });
      report.carrierIds += r.carrierIds;
      after = r.next;
    } while (after !== null);
  }
}
