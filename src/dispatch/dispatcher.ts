import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database, MessageRow } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import type { Carrier, OutboundMessage, SubmitResult } from '../carriers/carrier.ts';
import type { GroupCommitter } from '../db/group-commit.ts';
import type { Outcome } from './outcomes.ts';

/** How long a partly filled claim waits before the next one. */
const GATHER_MS = 20;

export interface DispatcherOptions {
  leaseMs: number;
  batch: number;
  pollMs: number;
}

/**
 * Moves due messages from the outbox to their carriers. Each loop claims a
 * batch with a lease (status SENDING, due_at = lease expiry): a dispatcher
 * that dies leaves its claims to be taken again when the lease expires, and
 * on PostgreSQL `FOR UPDATE SKIP LOCKED` lets several processes share one
 * database without claiming the same message twice. A message whose carrier
 * id is recorded (SENT) is never claimed again.
 */
export class Dispatcher {
  readonly owner = randomUUID();
  private running = false;
  private wakers = new Set<() => void>();
  private loops: Promise<void>[] = [];
  private inflight = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly carriers: Map<string, Carrier>,
    private readonly outcomes: GroupCommitter<Outcome, void>,
    private readonly log: Logger,
    private readonly options: DispatcherOptions,
  ) {}

  start(): void {
    this.running = true;
    for (const carrier of this.carriers.values()) this.loops.push(this.loop(carrier));
  }

  /** Called after new messages were committed, so they go out without waiting for the next poll. */
  wake(): void {
    for (const w of this.wakers) w();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await Promise.all(this.loops);
    await Promise.all(this.inflight);
  }

  private async loop(carrier: Carrier): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        const room = carrier.ready() ? Math.min(carrier.capacity(), this.options.batch) : 0;
        if (room > 0) claimed = await this.dispatchOnce(carrier, room);
      } catch (err) {
        this.log.error({ err, connector: carrier.name }, 'dispatch failed; retrying');
      }
      // A full batch: more may be due, go on at once. Otherwise let new
      // messages gather for a moment (wake-ups included) so that a steady
      // trickle of accepts is claimed in batches, not one claim per message.
      if (claimed === 0) await this.sleep(this.options.pollMs);
      else if (claimed < this.options.batch) await new Promise((r) => setTimeout(r, GATHER_MS));
      else await new Promise((r) => setImmediate(r));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  private async dispatchOnce(carrier: Carrier, room: number): Promise<number> {
    const rows = await this.claim(carrier.name, room);
    if (rows.length === 0) return 0;
    const attempts = new Map(rows.map((r) => [r.id, r.attempts]));
    const messages: OutboundMessage[] = rows.map((r) => ({
      id: r.id,
      receiver: r.receiver,
      content: r.content,
      channel: r.channel,
      payload: r.payload ? (JSON.parse(r.payload) as unknown) : null,
      sender: r.sender,
    }));
    const results: Promise<void>[] = [];
    const onResult = (id: string, result: SubmitResult) => {
      results.push(
        this.outcomes.submit({ kind: 'result', connector: carrier.name, messageId: id, result, attempts: attempts.get(id) ?? 1 }).catch((err: unknown) => {
          // The lease expires and the message is claimed again: at-least-once.
          this.log.error({ err, messageId: id }, 'could not record a carrier result');
        }),
      );
    };
    const task = carrier
      .submit(messages, onResult)
      .catch((err: unknown) => this.log.error({ err, connector: carrier.name }, 'carrier submit threw'))
      .then(() => Promise.all(results))
      .then(() => undefined);
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
    return rows.length;
  }

  /** Claims up to `limit` due messages of one connector, oldest first. */
  private async claim(connector: string, limit: number): Promise<MessageRow[]> {
    const now = Date.now();
    const due = this.db
      .selectFrom('messages')
      .select('id')
      .where('connector', '=', connector)
      .where('status', 'in', ['QUEUED', 'SCHEDULED', 'SENDING'])
      .where('due_at', '<=', now)
      .orderBy('due_at')
      .orderBy('id')
      .limit(limit)
      .$if(this.dialect === 'postgres', (q) => q.forUpdate().skipLocked());
    const rows = await this.db
      .updateTable('messages')
      .set({ status: 'SENDING', lease_owner: this.owner, due_at: now + this.options.leaseMs, attempts: sql`attempts + 1`, status_at: now })
      .where('id', 'in', due)
      .returningAll()
      .execute();
    return rows.sort((a, b) => (a.schedule_at - b.schedule_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
