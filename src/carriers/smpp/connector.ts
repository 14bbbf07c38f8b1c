/**
 * SMPP 3.4 carrier (ESME side). Messages become one submit_sm per part and
 * go through a window of outstanding submits, the contract's submit rate
 * and, by default, one outstanding submit per receiver (keeps each
 * receiver's parts and messages in order even when the SMSC throttles).
 * What each answer does is in status-class.ts: throttle answers pause the
 * whole bind with back-off and put the part back in its place; temporary
 * failures hand the message back for a retry (or another leg); the rest
 * fail the message.
 *
 * Delivery guarantee: at least once. A submit whose response never comes
 * (bind lost, response timeout) may or may not have been taken by the SMSC;
 * we cannot know, so the message is handed back with `retry: true` and the
 * dispatcher sends it again, possibly twice to the handset. Failing it
 * instead would lose messages the SMSC never got. Multi-part messages reuse
 * their concatenation reference on resend, so handsets can merge duplicates.
 */
import type { Carrier, CarrierEvents, OutboundMessage, SubmitResult } from '../carrier.ts';
import { SmppBind, type BindConfig, type BindType } from './bind.ts';
import { encodeMessage, messageReference } from './encoding.ts';
import { DeliverHandler } from './inbound.ts';
import { resolveOptions, smppAddress, type ResolvedOptions, type SmppCarrierOptions } from './options.ts';
import { canonicalId } from './receipt.ts';
import { Status, pduString, statusText, type Pdu, type PduParams } from './smpp-lib.ts';
import { SubmitRate } from './submit-rate.ts';
import { statusClass } from './status-class.ts';

export type { SmppCarrierOptions } from './options.ts';

interface Job {
  message: OutboundMessage;
  ids: string[];
  /** Parts not accepted yet. */
  left: number;
  done: boolean;
  finish(result: SubmitResult): void;
}

interface Part {
  job: Job;
  index: number;
  receiver: string;
  /** Global submit order, to put throttled parts back in place. */
  order: number;
  params: PduParams;
  throttled: number;
  sentAt: number;
}

export class SmppCarrier implements Carrier {
  readonly name: string;
  readonly maxBinds: number;
  readonly failoverAfterMs: number;
  readonly channels = ['SMS'] as const;
  private readonly o: ResolvedOptions;
  private readonly transmitter: SmppBind;
  private readonly receiver: SmppBind | null;
  private readonly rate: SubmitRate;
  private deliver: DeliverHandler | null = null;
  private running = false;
  private queue: Part[] = [];
  private readonly inflight = new Set<Part>();
  private readonly busyReceivers = new Map<string, number>();
  private order = 0;
  private pausedUntil = 0;
  private throttleBackoffMs = 0;
  private lastThrottleAt = 0;
  private pumpTimer: NodeJS.Timeout | null = null;
  private drained: Array<() => void> = [];

  constructor(options: SmppCarrierOptions) {
    this.o = resolveOptions(options);
    this.name = this.o.name;
    this.maxBinds = this.o.maxBinds;
    this.failoverAfterMs = this.o.failoverAfterMs;
    this.rate = new SubmitRate(this.o.maxSubmitsPerSecond);
    const split = this.o.bindMode === 'transmitter_receiver';
    this.transmitter = this.makeBind(split ? 'transmitter' : 'transceiver', true);
    this.receiver = split ? this.makeBind('receiver', false) : null;
  }

  async start(events: CarrierEvents): Promise<void> {
    if (this.running) return;
    this.running = true;
    // A new bind counts as if it had just sent a full second: the one it takes over from (another process, before a
    // restart) may have sent that second's worth, and the contract's rate holds over any second (submit-rate.ts).
    this.rate.fill();
    const ids = { idBase: this.o.idBase, ...(this.o.receiptIdBase ? { receiptIdBase: this.o.receiptIdBase } : {}) };
    const sinks = { receipt: events.receipt.bind(events), inbound: events.inbound.bind(events) };
    this.deliver = new DeliverHandler(sinks, ids, this.o.logger, this.o.inboundPartTimeoutMs);
    await Promise.all([this.transmitter.start(), this.receiver?.start()]);
  }

  /**
   * Lets outstanding submits finish (up to responseTimeoutMs, or `withinMs`
   * when sooner), unbinds, and stops reconnecting; by `withinMs` at the
   * latest the binds are closed (what is still in flight is handed back for
   * a retry).
   */
  async stop(options: { withinMs?: number } = {}): Promise<void> {
    const deadline = options.withinMs === undefined ? undefined : Date.now() + options.withinMs;
    if (!this.running) return;
    this.running = false;
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.pumpTimer = null;
    this.failQueued('carrier stopped');
    const wait = Math.min(this.o.responseTimeoutMs, options.withinMs ?? Number.POSITIVE_INFINITY);
    if (this.inflight.size > 0 && wait > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.drained.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const left = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
    await Promise.all([this.transmitter.stop(left), this.receiver?.stop(left)]);
    this.deliver?.flush();
  }

  ready(): boolean {
    return this.running && this.transmitter.isBound();
  }

  /**
   * The free window plus `queueSize` parts held ready: a slot that frees is
   * refilled from the queue at once, not after the dispatcher's next claim
   * (waiting for that round trip at every slot cost about a third of the
   * bulk rate in bench:smpp). Under a rate limit, no more than a second of
   * submits waits here: what waits here can no longer be cancelled.
   */
  capacity(): number {
    if (!this.ready()) return 0;
    const { windowSize, queueSize, maxSubmitsPerSecond: rate } = this.o;
    let limit = windowSize - this.inflight.size + queueSize;
    if (rate > 0) limit = Math.min(limit, Math.ceil(rate));
    return Math.max(0, limit - this.queue.length);
  }

  submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void> {
    return new Promise((resolve) => {
      let left = messages.length;
      if (left === 0) return resolve();
      for (const message of messages) {
        const job: Job = {
          message,
          ids: [],
          left: 0,
          done: false,
          finish: (result) => {
            if (job.done) return;
            job.done = true;
            try {
              onResult(message.id, result);
            } catch (err) {
              this.o.logger.error({ carrier: this.name, err, id: message.id }, 'onResult threw');
            }
            if (--left === 0) resolve();
          },
        };
        this.enqueue(job);
      }
      this.pump();
    });
  }

  private makeBind(bindType: BindType, transmits: boolean): SmppBind {
    const o = this.o;
    const config: BindConfig = {
      label: o.name,
      host: o.host,
      port: o.port,
      tls: o.tls,
      systemId: o.systemId,
      password: o.password,
      systemType: o.systemType,
      bindType,
      responseTimeoutMs: o.responseTimeoutMs,
      enquireLinkMs: o.enquireLinkMs,
      reconnectMinMs: o.reconnectMinMs,
      reconnectMaxMs: o.reconnectMaxMs,
      ...(o.tlsOptions ? { tlsOptions: o.tlsOptions } : {}),
    };
    return new SmppBind(
      config,
      {
        bound: () => (transmits ? this.pump() : undefined),
        unbound: (reason) => (transmits ? this.onUnbound(reason) : undefined),
        deliver: (pdu) => this.deliver?.handle(pdu) ?? Promise.reject(new Error('SMPP connection not started')),
      },
      o.logger,
    );
  }

  private enqueue(job: Job): void {
    const { message } = job;
    if (!this.ready()) return job.finish({ ok: false, retry: true, error: 'SMPP bind not up' });
    if (message.channel !== 'SMS') return job.finish({ ok: false, retry: false, error: `channel ${message.channel} not supported by SMPP` });
    let encoded: ReturnType<typeof encodeMessage>;
    try {
      encoded = encodeMessage(message.content, messageReference(message.id));
    } catch (err) {
      return job.finish({ ok: false, retry: false, error: err instanceof Error ? err.message : String(err) });
    }
    const o = this.o;
    const dest = smppAddress(message.receiver, { ton: o.destTon, npi: o.destNpi });
    const src = message.sender
      ? smppAddress(message.sender, { ton: o.sourceTon, npi: o.sourceNpi })
      : { addr: o.sourceAddr.replace(/^\+/, ''), ton: o.sourceTon, npi: o.sourceNpi };
    job.left = encoded.segments.length;
    encoded.segments.forEach((segment, index) => {
      const params: PduParams = {
        source_addr_ton: src.ton,
        source_addr_npi: src.npi,
        source_addr: src.addr,
        dest_addr_ton: o.destTon,
        dest_addr_npi: o.destNpi,
        destination_addr: dest.addr,
        esm_class: segment.esmClass,
        registered_delivery: o.registeredDelivery,
        data_coding: segment.dataCoding,
        short_message: segment.shortMessage,
      };
      this.queue.push({ job, index, receiver: dest.addr, order: ++this.order, params, throttled: 0, sentAt: 0 });
    });
  }

  /** Sends queued parts while the window, the rate, the throttle pause and receiver order allow. */
  private pump(): void {
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.pumpTimer = null;
    while (this.running && this.transmitter.isBound() && this.inflight.size < this.o.windowSize) {
      const now = Date.now();
      if (now < this.pausedUntil) return this.pumpLater(this.pausedUntil - now);
      const index = this.nextIndex();
      if (index < 0) return;
      const wait = this.rate.wait();
      if (wait > 0 || !this.rate.take()) return this.pumpLater(Math.max(wait, 1));
      const [part] = this.queue.splice(index, 1);
      if (part) this.send(part);
    }
  }

  private pumpLater(ms: number): void {
    this.pumpTimer = setTimeout(() => this.pump(), ms);
  }

  /** Index of the first part that may go now, dropping parts of finished messages. */
  private nextIndex(): number {
    for (let i = 0; i < this.queue.length; i++) {
      const part = this.queue[i];
      if (!part) continue;
      if (part.job.done) {
        this.queue.splice(i--, 1);
        continue;
      }
      if (!this.o.orderPerReceiver || !this.busyReceivers.has(part.receiver)) return i;
    }
    return -1;
  }

  private send(part: Part): void {
    this.inflight.add(part);
    this.busyReceivers.set(part.receiver, (this.busyReceivers.get(part.receiver) ?? 0) + 1);
    part.sentAt = Date.now();
    this.transmitter.request('submit_sm', part.params).then(
      (resp) => this.onResponse(part, resp),
      (err: unknown) => {
        this.release(part);
        // At-least-once: the SMSC may have taken it (see the module comment).
        const reason = err instanceof Error ? err.message : String(err);
        part.job.finish({ ok: false, retry: true, error: `submit_sm unanswered: ${reason}`, failover: true });
        this.pump();
      },
    );
  }

  private onResponse(part: Part, resp: Pdu): void {
    this.release(part);
    const { job } = part;
    const status = resp.command === 'generic_nack' && resp.command_status === Status.ROK ? Status.RSYSERR : resp.command_status;
    if (job.done) {
      // A part of a message that already failed or was handed back.
    } else if (status === Status.ROK) {
      job.ids[part.index] = canonicalId(pduString(resp, 'message_id'), this.o.idBase);
      if (part.sentAt > this.lastThrottleAt) this.throttleBackoffMs = 0;
      if (--job.left === 0) job.finish({ ok: true, carrierIds: job.ids });
    } else {
      const kind = statusClass(status);
      if (kind === 'throttle') this.onThrottled(part, status);
      else if (kind === 'bind') {
        // The SMSC does not consider us bound: the bind is broken, not the message.
        job.finish({ ok: false, retry: true, error: statusText(status) });
        this.transmitter.drop(`submit_sm answered ${statusText(status)}`);
      } else if (kind === 'temporary') this.handBack(part, statusText(status));
      else job.finish({ ok: false, retry: false, error: statusText(status) });
    }
    this.pump();
  }

  private onThrottled(part: Part, status: number): void {
    part.throttled++;
    if (part.throttled > this.o.maxThrottleRetries) return this.handBack(part, `${statusText(status)} after ${part.throttled} tries`);
    let i = this.queue.findIndex((p) => p.order > part.order);
    if (i < 0) i = this.queue.length;
    this.queue.splice(i, 0, part);
    // Answers to parts sent before the last throttle are the same news: back off further only on new ones.
    if (part.sentAt > this.lastThrottleAt) {
      const { throttleBackoffMinMs: min, throttleBackoffMaxMs: max } = this.o;
      this.throttleBackoffMs = this.throttleBackoffMs ? Math.min(max, this.throttleBackoffMs * 2) : min;
      this.lastThrottleAt = Date.now();
      this.pausedUntil = this.lastThrottleAt + this.throttleBackoffMs;
      this.o.logger.warn({ carrier: this.name, status: statusText(status), pauseMs: this.throttleBackoffMs }, 'SMSC throttling; pausing submits');
    }
  }

  /**
   * The SMSC could not take the message now: back to the dispatcher for a
   * retry, or for the route's next leg (`failover`). The receiver's later
   * messages queued here go back with it, so that none overtakes it.
   */
  private handBack(part: Part, error: string): void {
    part.job.finish({ ok: false, retry: true, error, failover: true });
    for (const later of this.queue) {
      if (later.receiver === part.receiver && later.order > part.order)
        later.job.finish({ ok: false, retry: true, error: `behind a message handed back: ${error}`, failover: true });
    }
  }

  private release(part: Part): void {
    this.inflight.delete(part);
    const n = (this.busyReceivers.get(part.receiver) ?? 1) - 1;
    if (n > 0) this.busyReceivers.set(part.receiver, n);
    else this.busyReceivers.delete(part.receiver);
    if (this.inflight.size === 0) {
      const waiters = this.drained;
      this.drained = [];
      for (const resolve of waiters) resolve();
    }
  }

  private onUnbound(reason: string): void {
    this.failQueued(`SMPP bind lost: ${reason}`);
    this.pausedUntil = 0;
    this.throttleBackoffMs = 0;
    this.lastThrottleAt = 0;
  }

  /** Hands back every message that has parts still queued; parts in flight are answered by the bind. */
  private failQueued(reason: string): void {
    const parts = this.queue;
    this.queue = [];
    for (const part of parts) part.job.finish({ ok: false, retry: true, error: reason });
  }
}
