import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { before, claimJob, renewJob, type Claimed, type ClaimRequest } from './claim.ts';
import type { Carrier, CarrierEvents, OutboundMessage, SubmitResult } from '../carriers/carrier.ts';
import type { GroupCommitter } from '../db/group-commit.ts';
import type { Handoff } from '../messaging/accept.ts';
import type { Outcome } from '../messaging/outcomes.ts';
import { Waker } from '../common/waker.ts';
import { storageFault } from '../db/faults.ts';
import { Registry } from './registry.ts';
import { InFlight } from './in-flight.ts';
import { ConnectionLeases } from './connection-leases.ts';
import { failOverConnectionJob } from '../routing/failover.ts';

/** Longest wait between two tries to write a carrier's answer the database refused. */
const RECORD_RETRY_MAX_MS = 2000;
/** How long a partly filled claim waits before the next one. */
const GATHER_MS = 20;
/** How often a carrier with no room is looked at again. */
const FULL_MS = 2;
/**
 * Carrier answers not yet written, in batches, above which a carrier gets no
 * new claims. Answers come faster than they are written when the carrier is
 * quick (the simulator answers at once) and the database is slow; unbounded,
 * the writes would fall behind by more than the lease, and another dispatcher
 * sharing the database would take and send again messages whose answers are
 * only waiting to be written.
 */
const MAX_UNWRITTEN_BATCHES = 2;

export interface DispatcherOptions {
  leaseMs: number;
  batch: number;
  pollMs: number;
  /** Lease of a carrier connection's slot (src/dispatch/connection-leases.ts): another process takes a dead holder's connections within it. */
  connectionLeaseMs: number;
}

/** Default failoverAfterMs of a connection that does not set its own. */
const FAILOVER_AFTER_MS = 10_000;

/** What a carrier answered to a submit: accepted, handed back for a retry, or refused for good. */
export type SubmitOutcome = 'accepted' | 'retry' | 'failed';

/** Told of every carrier answer to a submit (the metrics count them); must be cheap and must not throw. */
export type OnSubmitted = (connector: string, outcome: SubmitOutcome) => void;

/**
 * Moves due messages from the outbox to their carriers. Each loop claims a
 * batch with a lease (status SENDING, due_at = lease expiry): a dispatcher
 * that dies leaves its claims to be taken again when the lease expires, and
 * on PostgreSQL `FOR UPDATE SKIP LOCKED` lets several processes share one
 * database without claiming the same message twice. A message whose carrier
 * id is recorded (SENT) is never claimed again. While this dispatcher lives,
 * it renews the leases of the messages its carriers keep (see renew), so a
 * lease only runs out when the process dies or loses its database.
 */
export class Dispatcher {
  readonly owner = randomUUID();
  private running = false;
  private waker = new Waker();
  /** The dispatch loop of each connection this dispatcher holds, and the number of its run (see loop). */
  private readonly loops = new Map<string, { run: number; done: Promise<void> }>();
  private runs = 0;
  /** Connections being let go: gained again, one starts only once this is done. */
  private readonly lettingGo = new Map<string, Promise<void>>();
  private readonly leases: ConnectionLeases;
  private leaseTimer: NodeJS.Timeout | null = null;
  private leasing: Promise<void> = Promise.resolve();
  /** Since when each held connection has been down (not ready), for failover. */
  private readonly downSince = new Map<string, number>();
  /** Per held connection, the timer that closes it if its lease is not renewed in time. */
  private readonly watchdogs = new Map<string, NodeJS.Timeout>();
  private inflight = new Set<Promise<void>>();
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;
  /** Held, handed back, reserved and unwritten messages, per connector (see InFlight). */
  private readonly inFlight = new InFlight();
  /** Reservations made for accepts (see reserve), until released or adopted. */
  private readonly reservations = new WeakMap<Handoff, number>();
  private readonly registry: Registry;
  /** Other dispatchers on the database, not known to be gone: while there are, nothing is handed off at accept (see reserve). */
  private others = 0;
  /**
   * Connectors whose last claim took fewer messages than it could (nothing
   * more was due for them), while no other dispatcher shared the database,
   * and nothing since has said otherwise (a wake). Their carriers' accepted
   * answers need no claim after them (see send).
   */
  private readonly drained = new Set<string>();
  /** Per connector behind a backlog, the account whose turn came last in its claim: the next claim starts after it (src/dispatch/claim.ts, fairShare). */
  private readonly lastTurn = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly carriers: Map<string, Carrier>,
    private readonly outcomes: GroupCommitter<Outcome, void>,
    private readonly log: Logger,
    private readonly options: DispatcherOptions,
    private readonly eventsFor: (connector: string) => CarrierEvents,
    private readonly onSubmitted: OnSubmitted = () => {},
    private readonly onConnections: (held: string[]) => void = () => {},
  ) {
    this.registry = new Registry(db.kysely, this.owner, options.leaseMs);
    const connections = [...carriers.values()].map((c) => ({ name: c.name, maxBinds: c.maxBinds ?? 1 }));
    this.leases = new ConnectionLeases(db.kysely, this.owner, options.connectionLeaseMs, connections);
  }

  /**
   * Joins the registry and, before the first claim, takes back the leases
   * of dispatchers that are gone (this process before a crash, most often),
   * so that their messages go out now and in their place, not after a lease.
   */
  async start(): Promise<void> {
    await this.lookAround();
    this.running = true;
    await this.tickLeases();
    this.leaseTimer = setInterval(() => {
      this.leasing = this.leasing.then(() => this.tickLeases());
    }, this.options.connectionLeaseMs / 5);
    this.leaseTimer.unref();
    this.renewTimer = setInterval(() => {
      void this.renew();
      void this.lookAround();
    }, this.options.leaseMs / 4);
    this.renewTimer.unref();
  }

  /** Says this dispatcher is alive and recovers the leases of those that are gone. */
  private async lookAround(): Promise<void> {
    try {
      await this.registry.beat();
      const { others, recovered } = await this.registry.sweep([...this.carriers.keys()]);
      this.others = others;
      if (recovered > 0) {
        this.log.warn({ messages: recovered }, 'took back the leased messages of a dispatcher that is gone');
        this.wake();
      }
    } catch (err) {
      this.log.error({ err }, 'could not check the other dispatchers; trying again later');
    }
  }

  /** Called after new messages were committed, so they go out without waiting for the next poll. */
  wake(): void {
    this.drained.clear();
    this.waker.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
    await this.leasing;
    for (const timer of this.watchdogs.values()) clearTimeout(timer);
    this.watchdogs.clear();
    this.wake();
    await Promise.all([...this.loops.values()].map((l) => l.done));
    await Promise.all(this.lettingGo.values());
    // The carriers answer what they still hold (handed back when they stop), and those answers are written.
    for (const name of this.leases.list()) await this.carriers.get(name)?.stop();
    await Promise.all(this.inflight);
    await this.leases.release().catch((err: unknown) => this.log.error({ err }, 'could not give back the carrier connections'));
    this.onConnections([]);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    // What the carriers never answered goes back to the outbox now, not after its lease.
    await this.registry.leave([...this.carriers.keys()]).catch((err: unknown) => this.log.error({ err }, 'could not leave the dispatcher registry'));
  }

  /**
   * Extends by a whole lease the leases of held messages past half of theirs
   * (every quarter lease): a carrier may keep a message longer than a lease
   * (a queue behind a rate limit, an SMSC throttling for minutes, a slow
   * HTTP API), and another dispatcher on the same database must not take it
   * and send it again meanwhile. If renewing fails, the lease runs out and
   * `held` still keeps this dispatcher from claiming it again.
   */
  private async renew(): Promise<void> {
    const now = Date.now();
    const ids = this.inFlight.endingBefore(now + this.options.leaseMs / 2);
    if (ids.length === 0 || this.renewing) return;
    this.renewing = true;
    try {
      const until = now + this.options.leaseMs;
      await this.db.run(renewJob, [{ owner: this.owner, ids, until }]);
      this.inFlight.extend(ids, until);
    } catch (err) {
      this.log.warn({ err, messages: ids.length }, 'could not renew leases; retrying');
    } finally {
      this.renewing = false;
    }
  }

  /** True when this dispatcher holds the connection (runs it and sends its messages). */
  holds(connector: string): boolean {
    return this.leases.holds(connector);
  }

  /**
   * Renews the connection leases and takes free slots; starts the
   * connections gained, stops those lost; and moves the messages of a held
   * connection down longer than its failoverAfterMs to their next legs.
   */
  private async tickLeases(): Promise<void> {
    if (!this.running) return;
    const { gained, lost, error } = await this.leases.tick((name) => this.carriers.get(name)?.ready() ?? false);
    if (error) this.log.warn({ err: error }, 'could not renew or take carrier connection leases; trying again');
    for (const name of lost) {
      this.log.warn({ connector: name }, 'lost the lease of a carrier connection; another process runs it now');
      await this.letGo(name);
    }
    for (const name of gained) {
      const carrier = this.carriers.get(name);
      // Taken again while its last run still winds down (its watchdog let it go): that run ends first.
      await this.lettingGo.get(name);
      if (!carrier || !this.running) continue;
      this.log.info({ connector: name }, 'holding a carrier connection');
      try {
        await carrier.start(this.eventsFor(name));
      } catch (err) {
        this.log.error({ err, connector: name }, 'could not start a carrier connection');
      }
      // Set before the loop starts: it runs while it is the connection's current run.
      const current = { run: ++this.runs, done: Promise.resolve() };
      this.loops.set(name, current);
      current.done = this.loop(carrier, current.run);
    }
    if (gained.length || lost.length) this.onConnections(this.leases.list());
    for (const name of this.leases.list()) this.watch(name);
    await this.failOver();
  }

  /**
   * Closes a held connection a little before its lease ends unless the lease
   * is renewed meanwhile: a process whose renewals are late (a full disk, a
   * database busy with other writers, a long pause) must have let the
   * connection go before another process may take it, so that the carrier
   * never sees more binds than maxBinds. It stops submitting a little
   * earlier still and lets the answers in flight come until then, so that
   * what the carrier has is answered rather than sent again.
   */
  private watch(name: string): void {
    const end = this.leases.endOf(name);
    if (end === undefined) return;
    clearTimeout(this.watchdogs.get(name));
    const closeBy = end - this.leases.marginMs;
    const timer = setTimeout(
      () => {
        if (this.leases.endOf(name) !== end || !this.running) return;
        this.log.warn({ connector: name }, 'could not renew the lease of a carrier connection in time; closing it');
        this.leases.forget(name);
        this.onConnections(this.leases.list());
        void this.letGo(name, closeBy - Date.now());
      },
      Math.max(0, closeBy - this.leases.drainMs - Date.now()),
    );
    timer.unref();
    this.watchdogs.set(name, timer);
  }

  /**
   * Stops running a connection this dispatcher no longer holds: its loop,
   * then the connection itself, closed within `withinMs` (answers in flight
   * are waited for until then; none when another process holds it already).
   */
  private letGo(name: string, withinMs = 0): Promise<void> {
    const going = this.lettingGo.get(name) ?? this.stopRunning(name, Math.max(0, withinMs)).finally(() => this.lettingGo.delete(name));
    this.lettingGo.set(name, going);
    return going;
  }

  private async stopRunning(name: string, withinMs: number): Promise<void> {
    const loop = this.loops.get(name);
    this.loops.delete(name);
    clearTimeout(this.watchdogs.get(name));
    this.watchdogs.delete(name);
    this.downSince.delete(name);
    const carrier = this.carriers.get(name);
    // First, so that nothing more is submitted while the loop winds down.
    const stopped = carrier?.stop({ withinMs });
    this.wake();
    await loop?.done;
    await stopped;
  }

  /** Held connections down longer than their failoverAfterMs (and up in no other process): their messages move to the next legs. */
  private async failOver(): Promise<void> {
    const now = Date.now();
    for (const name of this.leases.list()) {
      const carrier = this.carriers.get(name);
      if (!carrier || carrier.ready()) {
        this.downSince.delete(name);
        continue;
      }
      const since = this.downSince.get(name) ?? now;
      this.downSince.set(name, since);
      if (now - since < (carrier.failoverAfterMs ?? FAILOVER_AFTER_MS) || this.inFlight.holdsAny(name)) continue;
      try {
        if (await this.leases.upElsewhere(name)) continue;
        const [moved] = await this.db.run(failOverConnectionJob, [{ connector: name, now }]);
        if (moved) {
          this.log.warn({ connector: name, messages: moved, downMs: now - since }, 'carrier connection down: moved its messages to the next legs');
          this.wake();
        }
      } catch (err) {
        this.log.error({ err, connector: name }, 'could not move the messages of a connection that is down; trying again');
      }
    }
  }

  /** Runs until the dispatcher stops or lets the connection go; a later run (the connection taken again) is another loop. */
  private async loop(carrier: Carrier, run: number): Promise<void> {
    while (this.running && this.leases.holds(carrier.name) && this.loops.get(carrier.name)?.run === run) {
      let claimed = 0;
      let room = 0;
      try {
        room = carrier.ready() ? Math.max(0, this.room(carrier)) : 0;
        if (room > 0) claimed = await this.dispatchOnce(carrier, room);
      } catch (err) {
        this.log.error({ err, connector: carrier.name }, 'dispatch failed; retrying');
      }
      // No room (the carrier's window full, or its answers not written yet):
      // look again shortly, room comes back answer by answer. As many as there
      // was room for: more are probably due, go on at once (the window and
      // the claim's own round trip pace the loop). Fewer: the outbox is
      // drained, so let new messages gather for a moment so that a steady
      // trickle of accepts is claimed in batches, not one claim per message.
      // Nothing due: sleep until woken (accepts, written answers) or the poll.
      if (room === 0 && carrier.ready()) await new Promise((r) => setTimeout(r, FULL_MS));
      else if (claimed === 0) await this.sleep(this.options.pollMs);
      else if (claimed < room) await new Promise((r) => setTimeout(r, GATHER_MS));
      else await new Promise((r) => setImmediate(r));
    }
  }

  private sleep(ms: number): Promise<void> {
    return this.waker.sleep(ms);
  }

  private async dispatchOnce(carrier: Carrier, room: number): Promise<number> {
    const rows = await this.claim(carrier.name, room);
    if (rows.length === 0) return 0;
    this.send(carrier, rows);
    return rows.length;
  }

  /**
   * Offers an accept of `wanted` messages for `connector` to send up to that
   * many itself, straight from the accept (see Handoff in
   * src/messaging/accept.ts): the room is kept for them until `adopt` or
   * `release`. Null when this dispatcher cannot send for the connector now.
   */
  reserve(connector: string, wanted: number): Handoff | null {
    const carrier = this.carriers.get(connector);
    // Another dispatcher's leased messages (alive, or gone and not recovered yet) are not seen here: only the claim keeps order behind them.
    if (!this.running || this.others > 0 || !carrier || !carrier.ready() || wanted <= 0) return null;
    const count = Math.min(wanted, this.room(carrier));
    if (count <= 0) return null;
    const ticket = this.inFlight.reserve(connector, count);
    // Receivers with a message handed back for a retry, or held past its lease (due again in the outbox, where a claim would wait for it too).
    const handoff = { connector, owner: this.owner, leaseMs: this.options.leaseMs, count, holdBack: this.inFlight.holdBackReceivers(connector, Date.now()) };
    this.reservations.set(handoff, ticket);
    return handoff;
  }

  /** Gives back the room of a reservation (the accept failed, or its messages were adopted); answers its connector. */
  release(handoff: Handoff): string | undefined {
    const ticket = this.reservations.get(handoff);
    if (ticket === undefined) return undefined;
    this.reservations.delete(handoff);
    return this.inFlight.unreserve(ticket);
  }

  /**
   * Sends messages an accept wrote claimed for this dispatcher under a
   * reservation (its room is given back), as if claimed now. Those behind
   * a message of their receiver handed back meanwhile wait for it (see
   * send). Stopped meanwhile: they stay leased, and are claimed again when
   * the lease runs out.
   */
  adopt(handoff: Handoff, rows: Claimed[]): void {
    const connector = this.release(handoff);
    const carrier = connector === undefined ? undefined : this.carriers.get(connector);
    if (!carrier || !this.running || rows.length === 0) return;
    // The lease the accept wrote: from its time (the messages' schedule_at), never later, or a claim could take them while held.
    this.inFlight.hold(carrier.name, rows, (r) => r.schedule_at + this.options.leaseMs);
    this.send(carrier, rows);
  }

  /** Room for more messages: the carrier's, less answers not written yet and reservations. */
  private room(carrier: Carrier): number {
    const writable = MAX_UNWRITTEN_BATCHES * this.options.batch - this.inFlight.unwrittenFor(carrier.name);
    return Math.min(carrier.capacity(), this.options.batch, writable) - this.inFlight.reservedFor(carrier.name);
  }

  /** Hands claimed messages (held by this dispatcher) to their carrier and has its answers written. */
  private send(carrier: Carrier, rows: Claimed[]): void {
    this.inFlight.claimedAgain(rows.map((r) => r.id));
    // The carrier may have handed back a message while the claim ran: its receiver's later messages claimed meanwhile wait for it, unsent.
    const handedBack = this.inFlight.firstHandedBack(carrier.name);
    const behind = rows.filter((r) => {
      const first = handedBack.get(r.receiver);
      return first !== undefined && before(first, r);
    });
    const attempts = new Map(rows.map((r) => [r.id, r.attempts]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const messages: OutboundMessage[] = rows
      .filter((r) => !behind.includes(r))
      .map((r) => ({
        id: r.id,
        receiver: r.receiver,
        content: r.content,
        channel: r.channel,
        payload: r.payload ? (JSON.parse(r.payload) as unknown) : null,
        // `sender` is the client's internal identifier (Legacy v2 `Sender`), shown in
        // reports, not an originator address: the connection's own source is used.
        sender: null,
      }));
    const results: Promise<void>[] = [];
    let allAccepted = behind.length === 0;
    const onResult = (id: string, result: SubmitResult) => {
      if (!result.ok) allAccepted = false;
      this.inFlight.answered(carrier.name);
      const row = byId.get(id);
      if (!result.ok && result.retry && row) this.inFlight.handBack(carrier.name, row);
      results.push(
        this.record({ kind: 'result', connector: carrier.name, messageId: id, result, attempts: attempts.get(id) ?? 1 }).finally(() => {
          this.inFlight.written(carrier.name);
          this.inFlight.release(id);
          this.inFlight.outcomeWritten(id);
        }),
      );
    };
    for (const r of behind) onResult(r.id, { ok: false, retry: true, error: 'behind a message of the same receiver waiting for a retry' });
    // The carrier's own answers (not the ones above, which never reached it) are reported.
    const onCarrierResult = (id: string, result: SubmitResult) => {
      this.onSubmitted(carrier.name, result.ok ? 'accepted' : result.retry ? 'retry' : 'failed');
      onResult(id, result);
    };
    const task = carrier
      .submit(messages, onCarrierResult)
      .catch((err: unknown) => this.log.error({ err, connector: carrier.name }, 'carrier submit threw'))
      .then(() => Promise.all(results))
      .then(() => {
        for (const r of rows) this.inFlight.release(r.id); // any the carrier never answered: their lease expires
        // Written: the carrier has room again, and later messages of these receivers may be claimed now.
        // Not when the carrier took them all and the last claim found nothing more due: a claim would find
        // nothing either (about one claim per outcome batch when accepts hand every message off).
        // A message handed back, refused or moved (an RCS message falling back to SMS) wakes every loop.
        if (!allAccepted || results.length < rows.length || !this.drained.has(carrier.name)) this.wake();
      });
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
  }

  /**
   * Writes a carrier's answer. While the database cannot write (disk full,
   * I/O error, unreachable) the answer is kept and written again and again,
   * the message held meanwhile, so that it is never claimed and sent twice.
   * Given up only when the dispatcher stops or on an error that is not the
   * storage's: then the lease runs out and the message is sent again
   * (at-least-once).
   */
  private async record(outcome: Outcome & { kind: 'result' }): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.outcomes.submit(outcome);
        return;
      } catch (err) {
        const retry = this.running && storageFault(err) !== null;
        this.log.error(
          { err, messageId: outcome.messageId, attempt },
          retry ? 'could not record a carrier result; retrying' : 'could not record a carrier result',
        );
        if (!retry) return;
        await new Promise((r) => setTimeout(r, Math.min(RECORD_RETRY_MAX_MS, 50 * 2 ** attempt)));
      }
    }
  }

  /**
   * Claims up to `limit` due messages of one connector, oldest first by
   * (schedule_at, id), keeping each receiver's messages in that order: a
   * message is not claimed while an earlier one of the same receiver on the
   * same connector is waiting for a retry (QUEUED, due later). Messages in
   * flight keep their order in the carrier connection, which submits a
   * receiver's messages one after the other in the order they were handed
   * over and hands later ones back with an earlier one that must be retried;
   * not waiting for them here keeps a busy receiver from being sent to one
   * message per claim.
   * Without this, a message handed back with `retry` (bind lost, throttled
   * too often) would be overtaken by the receiver's later messages while it
   * waits out retryDelayMs. An earlier message that is due is itself a
   * candidate ahead of the later one (same order), so it is claimed with it
   * or, if it is blocked, blocks the later one too. A message handed back
   * whose row is not written yet blocks from `handedBack` (and, if handed
   * back while this claim ran, in the check after it in dispatchOnce).
   *
   * A message this dispatcher still holds (in the carrier, or its answer not
   * written yet) is not claimed again when its lease runs out: sending it
   * again would duplicate a message whose answer is about to be recorded.
   * Its lease only matters if this process dies.
   */
  private async claim(connector: string, limit: number): Promise<Claimed[]> {
    this.inFlight.forgetWritten(connector);
    const now = Date.now();
    // Only a held message whose lease has run out is due again: the others need not be named.
    const held = this.inFlight.pastLease(now);
    const request: ClaimRequest = {
      connector,
      limit,
      now,
      owner: this.owner,
      leaseMs: this.options.leaseMs,
      held,
      handedBack: [...this.inFlight.firstHandedBack(connector)],
      afterAccount: this.lastTurn.get(connector),
    };
    const [result] = await this.db.run(claimJob, [request]);
    const rows = result?.rows;
    if (result?.lastTurn !== undefined) this.lastTurn.set(connector, result.lastTurn);
    // With other dispatchers, their leased rows can hold a claim short of what is due (and nothing is handed off): always claim again.
    if ((rows?.length ?? 0) < limit && this.others === 0) this.drained.add(connector);
    else this.drained.delete(connector);
    this.inFlight.hold(connector, rows ?? [], () => now + this.options.leaseMs);
    return rows ?? [];
  }
}
