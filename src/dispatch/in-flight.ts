import { before, type Position } from './claim.ts';

interface Held {
  /** End of its lease. */
  until: number;
  connector: string;
  receiver: string;
}

interface HandedBack extends Position {
  connector: string;
  receiver: string;
  /** When its QUEUED row was committed (a tick of InFlight's clock): claims starting from then see it. Null until then. */
  writtenAt: number | null;
}

interface Reservation {
  connector: string;
  count: number;
}

/**
 * What one dispatcher has between the outbox and its carriers, per
 * connector; the Dispatcher is its only owner. Four things:
 *
 * - held: messages it claimed (or an accept handed it) whose outcome is not
 *   written yet, with the end of their lease. It never claims them again
 *   meanwhile, even past their lease: sending again would duplicate a
 *   message whose answer is about to be recorded.
 * - handed back: messages the carrier handed back for a retry. Their QUEUED
 *   row (due later) holds back their receivers' later messages in the claim
 *   and in an accept's handoff, but only once written, and a claim or an
 *   accept may read the database just before. So they hold them back from
 *   here too: in claims until written, and in the check before sending
 *   until both the next claim has started (it sees the row) and every
 *   reservation made before the row was written has ended (its accept may
 *   have read the database before the row was there, and handed off a
 *   later message of the receiver).
 * - reserved: room promised to accepts being written (handoff), each
 *   reservation a tick of the clock.
 * - unwritten: carrier answers handed to the outcome writer, not written yet.
 */
export class InFlight {
  private readonly held = new Map<string, Held>();
  private readonly handedBack = new Map<string, HandedBack>();
  /** Outstanding reservations by ticket: the clock's tick when made. */
  private readonly reservations = new Map<number, Reservation>();
  /** Orders reservations and written hand-backs (see forgetWritten). */
  private clock = 0;
  private readonly unwritten = new Map<string, number>();

  /** Holds messages leased until `until` (a claim's, or an accept's for a handoff). */
  hold<Row extends Position & { receiver: string }>(connector: string, rows: Row[], until: (row: Row) => number): void {
    for (const r of rows) this.held.set(r.id, { until: until(r), connector, receiver: r.receiver });
  }

  /** True while some message of the connector is held (in its carrier, or its answer not written). */
  holdsAny(connector: string): boolean {
    for (const h of this.held.values()) if (h.connector === connector) return true;
    return this.unwrittenFor(connector) > 0;
  }

  /** Its outcome is written, or it never reached the carrier: the lease alone speaks for it now. */
  release(id: string): void {
    this.held.delete(id);
  }

  /** Held messages whose lease ends before `before`, to renew. */
  endingBefore(time: number): string[] {
    const ids: string[] = [];
    for (const [id, h] of this.held) if (h.until < time) ids.push(id);
    return ids;
  }

  /** Their leases now end at `until`. */
  extend(ids: string[], until: number): void {
    for (const id of ids) {
      const h = this.held.get(id);
      if (h) h.until = until;
    }
  }

  /** Held messages past their lease (due again in the outbox, not to be claimed). */
  pastLease(now: number): string[] {
    const ids: string[] = [];
    for (const [id, h] of this.held) if (h.until <= now) ids.push(id);
    return ids;
  }

  /** Receivers of a connector whose later messages must wait: one handed back for a retry, or held past its lease. */
  holdBackReceivers(connector: string, now: number): string[] {
    const receivers = new Set(this.firstHandedBack(connector).keys());
    for (const h of this.held.values()) if (h.connector === connector && h.until <= now) receivers.add(h.receiver);
    return [...receivers];
  }

  /** Room for `count` messages promised to an accept; answers the reservation's ticket, for `unreserve`. */
  reserve(connector: string, count: number): number {
    const ticket = ++this.clock;
    this.reservations.set(ticket, { connector, count });
    return ticket;
  }

  /** The accept is written (or failed): its room is given back. Answers the reservation's connector (undefined if given back already). */
  unreserve(ticket: number): string | undefined {
    const connector = this.reservations.get(ticket)?.connector;
    this.reservations.delete(ticket);
    return connector;
  }

  /** Room promised to accepts being written (a few reservations at a time, one per accept in flight). */
  reservedFor(connector: string): number {
    let count = 0;
    for (const r of this.reservations.values()) if (r.connector === connector) count += r.count;
    return count;
  }

  /** A carrier answer was handed to the outcome writer; `written` when it is on disk. */
  answered(connector: string): void {
    this.unwritten.set(connector, this.unwrittenFor(connector) + 1);
  }

  written(connector: string): void {
    this.unwritten.set(connector, this.unwrittenFor(connector) - 1);
  }

  unwrittenFor(connector: string): number {
    return this.unwritten.get(connector) ?? 0;
  }

  /** The carrier handed it back for a retry; its QUEUED row is not written yet. */
  handBack(connector: string, row: Position & { receiver: string }): void {
    this.handedBack.set(row.id, { connector, receiver: row.receiver, schedule_at: row.schedule_at, id: row.id, writtenAt: null });
  }

  /** The outcome of a message is written: a handed-back one's row is there for claims and accepts to see. */
  outcomeWritten(id: string): void {
    const h = this.handedBack.get(id);
    if (h) h.writtenAt = ++this.clock;
  }

  /** Claimed again: back in line. */
  claimedAgain(ids: string[]): void {
    for (const id of ids) this.handedBack.delete(id);
  }

  /**
   * Before a claim: handed-back messages whose row is written are seen by
   * it, and forgotten here, unless a reservation made before the row was
   * written is still outstanding (its messages are checked against them
   * when adopted).
   */
  forgetWritten(connector: string): void {
    let oldest = Number.POSITIVE_INFINITY;
    for (const [ticket, r] of this.reservations) if (r.connector === connector && ticket < oldest) oldest = ticket;
    for (const [id, h] of this.handedBack) if (h.connector === connector && h.writtenAt !== null && h.writtenAt < oldest) this.handedBack.delete(id);
  }

  /** Per receiver, the earliest message of a connector handed back and waiting for its retry. */
  firstHandedBack(connector: string): Map<string, Position> {
    const first = new Map<string, Position>();
    for (const h of this.handedBack.values()) {
      if (h.connector !== connector) continue;
      const known = first.get(h.receiver);
      if (!known || before(h, known)) first.set(h.receiver, h);
    }
    return first;
  }
}
