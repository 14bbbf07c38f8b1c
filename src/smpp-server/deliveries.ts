/**
 * The deliver_sm the gateway owes its SMPP customers (receipts and
 * replies), from the smpp_deliveries outbox to the receiver and transceiver
 * binds of their credential in this process:
 *
 * - rows are taken in id order (the order they were written), up to each
 *   bind's window of unanswered deliver_sm, leased to this process (due_at
 *   = lease end) so that another process with a bind of the same credential
 *   does not send them too;
 * - deliver_sm_resp ESME_ROK deletes the row (if the delete fails, the row
 *   is kept in memory and nothing more is taken until it is deleted, so its
 *   lease ending does not send it again); another status puts it back
 *   for a later attempt (retry schedule below, never given up: the operator
 *   sees what waits in GET /admin/accounts/{id}/smpp-deliveries);
 * - a bind that closes with rows unanswered gives them back at once, ahead
 *   of the others: a rebind gets them first, in order;
 * - a deliver_sm unanswered for responseTimeoutMs closes its bind (after a
 *   missing answer nothing on that connection can be trusted).
 *
 * Taking rows, giving them back and retrying run one at a time per
 * credential, so a rebind never overtakes rows still being given back.
 */
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/tables.ts';
import { statusText, type PduParams } from '../carriers/smpp/smpp-lib.ts';
import { OCTET_FIELDS, type StoredParams } from './records.ts';

/** A bind that can take deliver_sm (receiver or transceiver). */
export interface Receiver {
  readonly systemId: string;
  readonly window: number;
  unanswered: number;
  /** Sends a deliver_sm; false when the connection cannot write. */
  send(params: PduParams, answered: (status: number) => void): boolean;
  /** Closes the connection (an answer did not come). */
  drop(reason: string): void;
}

export interface DeliveryOptions {
  pollMs: number;
  leaseMs: number;
  /** Unit of the retry schedule (1, 5, 30, 120, 600, then every 1800 units): 1000 = seconds. */
  retryBaseMs: number;
  responseTimeoutMs: number;
}

const RETRY_UNITS = [1, 5, 30, 120, 600, 1800];

export function decodeParams(stored: string): PduParams {
  const params: PduParams = JSON.parse(stored) as StoredParams;
  for (const field of OCTET_FIELDS) {
    const value = params[field];
    if (typeof value === 'string') params[field] = Buffer.from(value, 'base64');
  }
  return params;
}

interface InFlight {
  systemId: string;
  receiver: Receiver;
  timer: NodeJS.Timeout;
}

export class Deliverer {
  private readonly receivers = new Map<string, Set<Receiver>>();
  private readonly inFlight = new Map<number, InFlight>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly queued = new Set<string>();
  private readonly done: number[] = [];
  private flushing = false;
  /** A delete of answered deliveries failed: they wait in `done`, and none is taken until they are gone. */
  private undeleted = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly owner: string,
    private readonly log: Logger,
    private readonly o: DeliveryOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.o.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.chains.values()]);
    await this.flushDone();
  }

  /** Looks for deliveries owed to every credential bound here. */
  wake(): void {
    for (const systemId of this.receivers.keys()) this.schedule(systemId);
  }

  add(receiver: Receiver): void {
    let set = this.receivers.get(receiver.systemId);
    if (!set) {
      set = new Set();
      this.receivers.set(receiver.systemId, set);
    }
    set.add(receiver);
    this.schedule(receiver.systemId);
  }

  /** A bind closed: what it left unanswered is given back, ahead of the rest. */
  remove(receiver: Receiver): void {
    const set = this.receivers.get(receiver.systemId);
    set?.delete(receiver);
    if (set && set.size === 0) this.receivers.delete(receiver.systemId);
    const ids: number[] = [];
    for (const [id, f] of this.inFlight)
      if (f.receiver === receiver) {
        clearTimeout(f.timer);
        this.inFlight.delete(id);
        ids.push(id);
      }
    receiver.unanswered = 0;
    if (ids.length === 0) return;
    void this.exclusive(receiver.systemId, async () => {
      await this.db
        .updateTable('smpp_deliveries')
        .set({ lease_owner: null, due_at: Date.now() })
        .where('id', 'in', ids)
        .where('lease_owner', '=', this.owner)
        .execute();
    }).then(() => this.schedule(receiver.systemId));
  }

  private exclusive(systemId: string, fn: () => Promise<void>): Promise<void> {
    const before = this.chains.get(systemId) ?? Promise.resolve();
    const run = before.then(fn).catch((err: unknown) => this.log.error({ err, systemId }, 'SMPP deliveries: could not read or write the outbox; trying again'));
    this.chains.set(systemId, run);
    void run.then(() => {
      if (this.chains.get(systemId) === run) this.chains.delete(systemId);
    });
    return run;
  }

  private schedule(systemId: string): void {
    if (this.stopped || this.queued.has(systemId)) return;
    this.queued.add(systemId);
    void this.exclusive(systemId, async () => {
      this.queued.delete(systemId);
      await this.pump(systemId);
    });
  }

  private async pump(systemId: string): Promise<void> {
    if (this.undeleted) {
      await this.flushDone();
      if (this.undeleted) return;
    }
    const receivers = [...(this.receivers.get(systemId) ?? [])];
    let room = receivers.reduce((n, r) => n + Math.max(0, r.window - r.unanswered), 0);
    if (room <= 0) return;
    const now = Date.now();
    const any = await this.db
      .selectFrom('smpp_deliveries')
      .select('id')
      .where('system_id', '=', systemId)
      .where('due_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    if (!any) return;
    const due = this.db.selectFrom('smpp_deliveries').select('id').where('system_id', '=', systemId).where('due_at', '<=', now).orderBy('id').limit(room);
    const rows = await this.db
      .updateTable('smpp_deliveries')
      .set({ lease_owner: this.owner, due_at: now + this.o.leaseMs, attempts: sql<number>`attempts + 1` })
      .where('id', 'in', due)
      .where('due_at', '<=', now)
      .returning(['id', 'params', 'attempts'])
      .execute();
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    let next = 0;
    for (const row of rows) {
      const id = Number(row.id);
      // The binds still here, with room, in turn.
      const live = [...(this.receivers.get(systemId) ?? [])].filter((r) => r.unanswered < r.window);
      const receiver = live[next++ % Math.max(1, live.length)];
      if (!receiver || !this.sendRow(systemId, receiver, id, row.params, Number(row.attempts))) {
        await this.db.updateTable('smpp_deliveries').set({ lease_owner: null, due_at: Date.now() }).where('id', '=', id).execute();
        continue;
      }
      room--;
    }
    // More may be waiting than one window took.
    if (rows.length > 0 && room <= 0) return;
  }

  private sendRow(systemId: string, receiver: Receiver, id: number, stored: string, attempts: number): boolean {
    receiver.unanswered++;
    const timer = setTimeout(() => {
      if (this.inFlight.get(id)?.receiver !== receiver) return;
      receiver.drop(`no deliver_sm_resp within ${this.o.responseTimeoutMs}ms`);
    }, this.o.responseTimeoutMs);
    this.inFlight.set(id, { systemId, receiver, timer });
    const sent = receiver.send(decodeParams(stored), (status) => {
      const f = this.inFlight.get(id);
      if (f?.receiver !== receiver) return; // given back when its bind closed
      clearTimeout(f.timer);
      this.inFlight.delete(id);
      receiver.unanswered = Math.max(0, receiver.unanswered - 1);
      if (status === 0) {
        this.done.push(id);
        void this.flushDone();
      } else {
        const wait = (RETRY_UNITS[Math.min(attempts, RETRY_UNITS.length) - 1] ?? 1800) * this.o.retryBaseMs;
        void this.exclusive(systemId, async () => {
          await this.db
            .updateTable('smpp_deliveries')
            .set({ lease_owner: null, due_at: Date.now() + wait, last_error: `deliver_sm answered ${statusText(status)}` })
            .where('id', '=', id)
            .execute();
        });
      }
      // Refilled in batches (each take is a write): once half the window is free, or nothing is left in flight; else by the poll.
      if (receiver.unanswered <= receiver.window / 2) this.schedule(systemId);
    });
    if (!sent) {
      clearTimeout(timer);
      this.inFlight.delete(id);
      receiver.unanswered = Math.max(0, receiver.unanswered - 1);
    }
    return sent;
  }

  /**
   * Answered deliveries are deleted together (one statement for those
   * answered meanwhile). When the delete fails (a full disk), they are kept
   * here and nothing more is taken until it succeeds (pump): their leases
   * end meanwhile, and taken again they would be sent twice.
   */
  private async flushDone(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.done.length > 0) {
        const ids = this.done.slice(0, 500);
        try {
          await this.db.deleteFrom('smpp_deliveries').where('id', 'in', ids).execute();
        } catch (err) {
          if (!this.undeleted) this.log.error({ err }, 'SMPP deliveries: could not delete answered deliveries; kept, and tried again before any other is sent');
          this.undeleted = true;
          return;
        }
        this.done.splice(0, ids.length);
        if (this.undeleted) this.log.info('SMPP deliveries: the answered deliveries kept are deleted; sending goes on');
        this.undeleted = false;
      }
    } finally {
      this.flushing = false;
    }
  }
}
