/**
 * The contract between the dispatcher and a carrier connection (simulator,
 * SMPP bind, RCS agent API). Carriers know nothing about HTTP, accounts or
 * storage: they take messages, answer per message, and report receipts and
 * inbound texts through the events object given at start.
 */

/** Our status values a receipt can move a message to (docs/statuses.md). */
export type ReceiptStatus = 'SENT' | 'DELIVERED' | 'UNDELIVERED' | 'EXPIRED' | 'FAILED';

export interface OutboundMessage {
  /** Our message id; stable across retries. */
  id: string;
  receiver: string;
  /** Text of an SMS (or RCS basic message / SMS fallback text). */
  content: string;
  channel: 'SMS' | 'RCS';
  /** Channel-specific payload (RCS kinds), already validated; null for SMS. */
  payload: unknown;
  /** Sender shown to the receiver where the carrier allows it; null = connection default. */
  sender: string | null;
}

export type SubmitResult =
  /** Carrier accepted the message. Several ids when it was sent in parts. */
  | { ok: true; carrierIds: string[] }
  /**
   * Carrier refused it for good: the message fails and is refunded. `noRcs`:
   * refused because the receiver has no RCS capability, so an RCS route's SMS
   * fallback may carry it instead (src/rcs/fallback.ts).
   */
  | { ok: false; retry: false; error: string; noRcs?: true }
  /**
   * Not accepted, or not known to be accepted (bind down, response timeout):
   * the dispatcher queues it again. In the unknown case the carrier may have
   * it already, so delivery is at-least-once, never at-most-once.
   * `failover`: this connection could not carry it for a temporary reason
   * (the SMSC's own failure, throttling beyond its retries, no answer), so a
   * route with a next leg moves it there (docs/carriers.md, "Failover").
   */
  | { ok: false; retry: true; error: string; failover?: true };

export interface Receipt {
  carrierId: string;
  status: ReceiptStatus;
  /** Carrier's reason, e.g. "stat:UNDELIV err:001". */
  details: string;
  at: Date;
}

export interface Inbound {
  from: string;
  to: string | null;
  text: string;
  at: Date;
}

/**
 * Where a carrier reports what arrives. Both resolve once what was reported
 * is durable (committed and on disk) and reject when it could not be
 * written: a carrier acknowledges a receipt or an inbound text to its peer
 * only after the promise resolves, and asks the peer to send it again when
 * it rejects, so that nothing acknowledged is ever lost.
 */
export interface CarrierEvents {
  receipt(receipt: Receipt): Promise<void>;
  inbound(message: Inbound): Promise<void>;
  /** Carrier ids of messages this connection accepted and has not reported final yet (after a restart). */
  unfinished(): Promise<string[]>;
}

export interface Carrier {
  readonly name: string;
  /** Binds the carrier allows on this connection, held by as many gateway processes (default 1; src/dispatch/connection-leases.ts). */
  readonly maxBinds?: number;
  /** How long all its binds may be down before a route's next leg takes its messages (default 10 s; docs/carriers.md "Failover"). */
  readonly failoverAfterMs?: number;
  /** Channels this connection can carry. */
  readonly channels: ReadonlyArray<'SMS' | 'RCS'>;
  start(events: CarrierEvents): Promise<void>;
  /**
   * Stops the connection: takes nothing more, waits for the answers in
   * flight, then closes. `withinMs`: another process may take the
   * connection over after that long (src/dispatch/connection-leases.ts), so
   * answers are waited for that long at most and the connection is closed by
   * then; what is still unanswered is handed back for a retry.
   */
  stop(options?: { withinMs?: number }): Promise<void>;
  /** True while the connection can take messages (bind up). */
  ready(): boolean;
  /**
   * How many more messages it can take right now (window and queue room);
   * back-pressure for the dispatcher. What it takes is leased to it until
   * answered (the dispatcher renews the lease), and can no longer be cancelled.
   */
  capacity(): number;
  /**
   * Sends the messages, calling onResult once per message as its answer
   * arrives (in any order). Resolves when every message has its result.
   * Must not throw: failures are results.
   */
  submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void>;
}
