import { appendFileSync } from 'node:fs';
import type { Carrier, CarrierEvents, OutboundMessage, ReceiptStatus, SubmitResult } from '../carrier.ts';
import { newId } from '../../common/ids.ts';

/**
 * The built-in carrier of the embedded default (README.md): accepts every
 * message, answers with a carrier id and reports the outcome after a delay.
 * Outcomes are chosen by the receiver's last digits so every path can be
 * shown: 0001 undelivered, 0002 expired, 0003 rejected at submit, and for
 * RCS messages 0009 no RCS capability (like tools/rbm-sim).
 *
 * Like a real SMSC it keeps receipts it still owes across a reconnect: at
 * start it asks for the messages it accepted that have no final status yet
 * and reports them.
 */
export class SimulatorCarrier implements Carrier {
  readonly name = 'simulator';
  readonly channels = ['SMS', 'RCS'] as const;
  private events: CarrierEvents | null = null;
  private timers = new Set<NodeJS.Timeout>();
  private started = false;

  constructor(
    private readonly deliveryMs: number,
    /** File the simulated carrier logs every accepted submit to, like a carrier's own records. */
    private readonly journal: string | null = null,
  ) {}

  async start(events: CarrierEvents): Promise<void> {
    this.events = events;
    this.started = true;
    for (const carrierId of await events.unfinished()) this.scheduleReceipt(carrierId);
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  ready(): boolean {
    return this.started;
  }

  capacity(): number {
    return 1000;
  }

  async submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void> {
    for (const m of messages) {
      if (m.receiver.endsWith('0003')) {
        onResult(m.id, { ok: false, retry: false, error: 'REJECTD: rejected by the simulator carrier (receiver ends in 0003)' });
        continue;
      }
      if (m.channel === 'RCS' && m.receiver.endsWith('0009')) {
        onResult(m.id, { ok: false, retry: false, error: 'no RCS capability (simulator: receiver ends in 0009)', noRcs: true });
        continue;
      }
      // The outcome travels in the carrier id, so it survives a restart. Time-ordered, like a real
      // SMSC's ids: random ones scattered each insert and receipt lookup over the whole carrier_ids index.
      const carrierId = `sim-${outcomeOf(m.receiver)}-${newId()}`;
      if (this.journal) appendFileSync(this.journal, `${m.id} ${carrierId}\n`);
      onResult(m.id, { ok: true, carrierIds: [carrierId] });
      this.scheduleReceipt(carrierId);
    }
  }

  /** A mobile-originated text, as if it came from the network (operator API); resolves once it is written. */
  inbound(from: string, to: string | null, text: string): Promise<void> {
    return this.events ? this.events.inbound({ from, to, text, at: new Date() }) : Promise.reject(new Error('simulator not started'));
  }

  /** Like an SMSC, a receipt the gateway could not write is offered again a little later, until it is. */
  private scheduleReceipt(carrierId: string, delayMs = this.deliveryMs): void {
    const status = outcomeFromId(carrierId);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.events?.receipt({ carrierId, status, details: DETAILS[status], at: new Date() }).catch(() => this.scheduleReceipt(carrierId, RECEIPT_RETRY_MS));
    }, delayMs);
    this.timers.add(timer);
  }
}

/** How soon a receipt the gateway could not write is offered again. */
const RECEIPT_RETRY_MS = 1000;

type Outcome = 'D' | 'U' | 'E';

const outcomeOf = (receiver: string): Outcome => (receiver.endsWith('0001') ? 'U' : receiver.endsWith('0002') ? 'E' : 'D');

function outcomeFromId(carrierId: string): ReceiptStatus {
  const code = carrierId.split('-')[1];
  return code === 'U' ? 'UNDELIVERED' : code === 'E' ? 'EXPIRED' : 'DELIVERED';
}

const DETAILS: Record<ReceiptStatus, string> = {
  DELIVERED: 'stat:DELIVRD err:000',
  UNDELIVERED: 'stat:UNDELIV err:001',
  EXPIRED: 'stat:EXPIRED err:000',
  FAILED: 'stat:REJECTD err:000',
  SENT: 'stat:ACCEPTD err:000',
};
