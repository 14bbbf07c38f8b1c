import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/tables.ts';
import type { Db } from '../db/database.ts';
import { GroupCommitter } from '../db/group-commit.ts';
import { SafeFetchError, type SafeFetcher } from '../net/safe-fetch.ts';
import { deliveryHeaders } from './signing.ts';
import { fanOut } from './fanout.ts';
import { eventsDb, type DeliveryRow } from './tables.ts';
import { claimDeliveriesJob } from './claim.ts';
import { lockDeliveries } from './webhooks.ts';
import { Waker } from '../common/waker.ts';

export interface DelivererOptions {
  pollMs: number;
  /** Deliveries in flight at once, over all endpoints. */
  concurrency: number;
  /** Deliveries in flight at once for one account (src/events/claim.ts). */
  perAccount: number;
  /** Per attempt: connect, send, answer. */
  timeoutMs: number;
  /** Unit of the retry schedule: 1000 = seconds (tests use 1). */
  retryBaseMs: number;
  /** Delivered and failed deliveries are removed from the log after this many days. */
  logDays: number;
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
}

/**
 * Retry schedule, in units of `retryBaseMs`: 5 s, 30 s, 2 min, 10 min,
 * 30 min, 1 h, then every 2 h; an attempt that fails once 24 h have passed
 * since the event is the last, and the delivery is FAILED. A FAILED delivery
 * the account sends again (resendDelivery) starts the schedule over: its
 * delays and the 24 h count from the resend.
 */
export const RETRY_SCHEDULE = [5, 30, 120, 600, 1800, 3600] as const;
export const RETRY_EVERY = 7200;
export const GIVE_UP_AFTER = 86_400;

/** Delay before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelay(attempts: number, baseMs: number): number {
  return (RETRY_SCHEDULE[attempts - 1] ?? RETRY_EVERY) * baseMs;
}

interface AttemptResult {
  id: string;
  owner: string;
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  at: number;
  attempts: number;
  /** Where the retry schedule starts: the event, or the account's last resend. */
  scheduleFrom: number;
  scheduleAttempts: number;
}

const RESPONSE_BYTES = 4096;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The webhook deliverer: its own loop beside the dispatcher, never in its
 * way. Each turn it fans out new events, then claims due deliveries with a
 * lease (like the dispatcher: a process that dies leaves its claims to be
 * taken again when the lease expires; SKIP LOCKED shares the work between
 * processes on PostgreSQL) and posts them, at most `concurrency` at once,
 * each bounded by `timeoutMs`. Results are written in group commits.
 * Delivery is at-least-once: receivers de-duplicate by `webhook-id`.
 */
export class Deliverer {
  readonly owner = randomUUID();
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private waker = new Waker();
  private inflight = new Set<Promise<void>>();
  /** Attempts in flight per account: a claim leaves out accounts at DelivererOptions.perAccount. */
  private readonly inflightBy = new Map<number, number>();
  /** Behind a backlog, the account the last claim looked at last: the next one starts after it (src/common/turns.ts). */
  private lastTurn = 0;
  private readonly abort = new AbortController();
  private readonly results: GroupCommitter<AttemptResult, void>;
  private lastPrune = 0;

  constructor(
    private readonly store: Db,
    private readonly fetcher: SafeFetcher,
    private readonly log: Logger,
    private readonly options: DelivererOptions,
  ) {
    this.results = new GroupCommitter<AttemptResult, void>((items) => this.store.kysely.transaction().execute((tx) => this.writeResults(tx, items)));
  }

  private get leaseMs(): number {
    return this.options.timeoutMs + 30_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** New events were written: look at once instead of at the next poll. */
  wake(): void {
    this.waker.wake();
  }

  /** Stops claiming, aborts attempts in flight (they are retried later) and waits for their results to be written. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    this.abort.abort();
    await Promise.all(this.inflight);
    await this.results.idle();
  }

  private async loop(): Promise<void> {
    const batch = this.options.fanOutBatch ?? 500;
    while (this.running) {
      let more = false;
      try {
        const fanned = await fanOut(this.store.kysely, this.store.dialect, batch);
        more = fanned.statuses >= batch || fanned.replies >= batch;
        const room = this.options.concurrency - this.inflight.size;
        if (room > 0) {
          const claimed = await this.claim(room);
          for (const d of claimed) this.spawn(d);
          more ||= claimed.length === room;
        }
        if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) await this.prune();
      } catch (err) {
        this.log.error({ err }, 'webhook delivery loop failed; retrying');
      }
      if (more) await new Promise((r) => setImmediate(r));
      else await this.sleep(this.options.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return this.waker.sleep(ms);
  }

  /** Claims up to `room` due deliveries (src/events/claim.ts). */
  private async claim(room: number): Promise<(DeliveryRow & { secret: string | null })[]> {
    const [claimed] = await this.store.run(claimDeliveriesJob, [
      {
        owner: this.owner,
        now: Date.now(),
        leaseMs: this.leaseMs,
        room,
        perAccount: this.options.perAccount,
        inFlight: [...this.inflightBy],
        afterAccount: this.lastTurn,
      },
    ]);
    if (claimed?.lastTurn !== undefined) this.lastTurn = claimed.lastTurn;
    return claimed?.rows ?? [];
  }

  private spawn(d: DeliveryRow & { secret: string | null }): void {
    const account = Number(d.account_id);
    this.inflightBy.set(account, (this.inflightBy.get(account) ?? 0) + 1);
    const task = this.attempt(d)
      .catch((err: unknown) => this.log.error({ err, deliveryId: d.id }, 'could not record a webhook attempt'))
      .finally(() => {
        this.inflight.delete(task);
        const left = (this.inflightBy.get(account) ?? 0) - 1;
        if (left > 0) this.inflightBy.set(account, left);
        else this.inflightBy.delete(account);
        this.wake();
      });
    this.inflight.add(task);
  }

  private async attempt(d: DeliveryRow & { secret: string | null }): Promise<void> {
    let ok = false;
    let httpStatus: number | null = null;
    let error: string | null = null;
    if (d.format === 'standard' && d.secret === null) {
      error = 'the webhook was deleted';
    } else {
      try {
        const res = await this.fetcher.fetch(d.url, {
          method: 'POST',
          headers: deliveryHeaders(d.id, d.body, d.secret),
          body: d.body,
          timeoutMs: this.options.timeoutMs,
          maxBytes: RESPONSE_BYTES,
          onTooLarge: 'truncate',
          // A webhook answers where it was registered; a redirect is a failed attempt.
          maxRedirects: 0,
          signal: this.abort.signal,
        });
        httpStatus = res.status;
        ok = res.status >= 200 && res.status < 300;
        if (!ok) error = `HTTP ${res.status}${res.body.length ? `: ${res.body.toString('utf8', 0, 200)}` : ''}`;
      } catch (err) {
        error = err instanceof SafeFetchError ? `${err.code}: ${err.message}` : String(err);
        if (this.abort.signal.aborted) error = 'interrupted by shutdown';
      }
    }
    await this.results.submit({
      id: d.id,
      owner: this.owner,
      ok,
      httpStatus,
      error,
      at: Date.now(),
      attempts: d.attempts,
      scheduleFrom: Number(d.schedule_from ?? d.created_at),
      scheduleAttempts: Number(d.schedule_attempts),
    });
  }

  private async writeResults(tx: Transaction<Database>, items: AttemptResult[]): Promise<undefined[]> {
    const t = eventsDb(tx);
    const ids = items.map((r) => r.id);
    await lockDeliveries(this.store.dialect, t.selectFrom('webhook_deliveries').select('id').where('id', 'in', ids));
    for (const r of items) {
      const giveUp = !r.ok && r.at - r.scheduleFrom >= GIVE_UP_AFTER * this.options.retryBaseMs;
      await t
        .updateTable('webhook_deliveries')
        .set({
          status: r.ok ? 'DELIVERED' : giveUp ? 'FAILED' : 'PENDING',
          due_at: r.ok || giveUp ? r.at : r.at + retryDelay(r.attempts - r.scheduleAttempts, this.options.retryBaseMs),
          lease_owner: null,
          last_http_status: r.httpStatus,
          last_error: r.error === null ? null : r.error.slice(0, 500),
          last_attempt_at: r.at,
          ...(r.ok ? { delivered_at: r.at } : {}),
        })
        .where('id', '=', r.id)
        .where('lease_owner', '=', r.owner)
        .where('status', '=', 'DELIVERING')
        .execute();
    }
    return items.map(() => undefined);
  }

  /** Removes delivered and failed deliveries older than the log's retention. */
  private async prune(): Promise<void> {
    this.lastPrune = Date.now();
    const edb = eventsDb(this.store.kysely);
    const old = edb
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', 'in', ['DELIVERED', 'FAILED'])
      .where('created_at', '<', this.lastPrune - this.options.logDays * 86_400_000)
      .limit(5000);
    // Rows another transaction holds (a webhook being deleted) are left for the next prune, never waited for.
    await edb
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', this.store.dialect === 'postgres' ? old.forUpdate().skipLocked() : old)
      .execute();
  }
}
