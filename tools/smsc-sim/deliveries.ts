/**
 * deliver_sm the simulated SMSC owes ESMEs (receipts, MO). Like a real SMSC
 * it keeps each one until a receiver or transceiver bind acknowledges it:
 * none bound -> it waits; connection lost before deliver_sm_resp -> it is
 * sent again on the next bind; error answer -> retried a little later.
 */
import smpp, { type PduParams, type Session } from '../../src/carriers/smpp/smpp-lib.ts';

export interface Delivery {
  params: PduParams;
  /** Session to use when it can receive (keeps a receipt ahead of a submit_sm_resp on the same connection). */
  preferred: Session | null;
  /** Called once acknowledged with status 0. */
  done(): void;
}

export class DeliveryQueue {
  private queue: Delivery[] = [];
  private readonly outstanding = new Map<Session, Set<Delivery>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** `receivers` lists sessions currently bound as receiver or transceiver. */
  constructor(
    private readonly receivers: () => Session[],
    private readonly retryMs = 200,
  ) {}

  push(delivery: Delivery): void {
    this.queue.push(delivery);
    this.flush();
  }

  /** Sends whatever can be sent now. */
  flush(): void {
    while (this.queue.length > 0) {
      const sessions = this.receivers();
      const delivery = this.queue[0];
      if (!delivery || sessions.length === 0) return;
      const target = delivery.preferred && sessions.includes(delivery.preferred) ? delivery.preferred : sessions[0];
      if (!target) return;
      this.queue.shift();
      if (!this.send(target, delivery)) return;
    }
  }

  /** Puts back what a closed session never acknowledged. */
  sessionClosed(session: Session): void {
    const lost = this.outstanding.get(session);
    this.outstanding.delete(session);
    if (lost && lost.size > 0) this.queue.unshift(...lost);
    this.flush();
  }

  get pending(): number {
    let n = this.queue.length;
    for (const set of this.outstanding.values()) n += set.size;
    return n;
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private send(session: Session, delivery: Delivery): boolean {
    let set = this.outstanding.get(session);
    if (!set) {
      set = new Set();
      this.outstanding.set(session, set);
    }
    const mine = set;
    mine.add(delivery);
    const written = session.send(new smpp.PDU('deliver_sm', delivery.params), (resp) => {
      if (!mine.delete(delivery)) return;
      if (resp.command_status === 0) {
        delivery.done();
        return;
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.push(delivery);
      }, this.retryMs);
      this.timers.add(timer);
    });
    if (!written) {
      mine.delete(delivery);
      this.queue.unshift(delivery);
    }
    return written;
  }
}
