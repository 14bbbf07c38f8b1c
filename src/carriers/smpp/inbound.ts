/**
 * Turns deliver_sm/data_sm PDUs into receipts or inbound texts. Parts of a
 * concatenated MO (UDH IEI 0x00/0x08 or SAR TLVs) are held per
 * (source, destination, reference, total) until all have arrived; their
 * octets are joined before decoding so that a GSM escape or a UTF-16 pair
 * split by the sender comes out whole. Parts still missing after
 * `partTimeoutMs`, or at stop, are given up on: what did arrive is emitted
 * rather than dropped.
 */
import type { Inbound, Receipt } from '../carrier.ts';
import { decodeText, ESM_UDHI, DATA_CODING_UCS2 } from './encoding.ts';
import { parseReceipt, type IdOptions } from './receipt.ts';
import { pduBody, pduBuffer, pduNumber, pduString, type Pdu, type SmppLogger } from './smpp-lib.ts';
import { parseUdh, type ConcatInfo } from './udh.ts';

/** esm_class message-type bits (SMPP 3.4 §5.2.12). */
const MESSAGE_TYPE_MASK = 0x3c;
const TYPE_RECEIPT = 0x04;
const TYPE_INTERMEDIATE = 0x20;

/** Each resolves once what it was given is durable (see CarrierEvents). */
export interface InboundSinks {
  receipt(receipt: Receipt): Promise<void>;
  inbound(message: Inbound): Promise<void>;
}

interface Part {
  body: Buffer;
  dataCoding: number;
}

interface PendingMessage {
  from: string;
  to: string | null;
  at: Date;
  total: number;
  parts: Map<number, Part>;
  timer: NodeJS.Timeout;
}

/** Number as we report it: '+' added for international TON (1) numbers. */
export function formatAddress(addr: string, ton: number | undefined): string {
  return ton === 1 && /^\d+$/.test(addr) ? `+${addr}` : addr;
}

export class DeliverHandler {
  private readonly pending = new Map<string, PendingMessage>();

  constructor(
    private readonly sinks: InboundSinks,
    private readonly ids: IdOptions,
    private readonly log: SmppLogger,
    private readonly partTimeoutMs = 10 * 60_000,
  ) {}

  /**
   * Handles one deliver_sm/data_sm; the bind answers it when the promise
   * settles: once the receipt or text is written (a part of a long text:
   * once the whole text is), or at once when there is nothing to keep.
   */
  handle(pdu: Pdu): Promise<void> {
    const esmClass = pduNumber(pdu, 'esm_class') ?? 0;
    const type = esmClass & MESSAGE_TYPE_MASK;
    if (type === TYPE_RECEIPT || type === TYPE_INTERMEDIATE) return this.handleReceipt(pdu);
    if (type === 0) return this.handleMessage(pdu, esmClass);
    this.log.debug({ esmClass }, 'SMPP SME acknowledgement ignored');
    return Promise.resolve();
  }

  /** Emits every incomplete message as far as it got and forgets them. */
  flush(): void {
    for (const key of [...this.pending.keys()]) this.completeLate(key);
  }

  private handleReceipt(pdu: Pdu): Promise<void> {
    const dataCoding = pduNumber(pdu, 'data_coding') ?? 0;
    const body = pduBody(pdu);
    const text = dataCoding === DATA_CODING_UCS2 ? decodeText(body, dataCoding) : body.toString('latin1');
    const state = pduNumber(pdu, 'message_state');
    const networkErrorCode = pduBuffer(pdu, 'network_error_code');
    const parsed = parseReceipt(
      {
        text,
        receiptedMessageId: pduString(pdu, 'receipted_message_id'),
        ...(state !== undefined ? { messageState: state } : {}),
        ...(networkErrorCode ? { networkErrorCode } : {}),
      },
      this.ids,
    );
    if (!parsed) {
      this.log.warn({ text }, 'SMPP receipt without message id ignored');
      return Promise.resolve();
    }
    // The arrival time: receipt dates carry no time zone and SMSC clocks vary.
    return this.sinks.receipt({ carrierId: parsed.carrierId, status: parsed.status, details: parsed.details, at: new Date() });
  }

  private handleMessage(pdu: Pdu, esmClass: number): Promise<void> {
    const from = formatAddress(pduString(pdu, 'source_addr'), pduNumber(pdu, 'source_addr_ton'));
    const dest = pduString(pdu, 'destination_addr');
    const to = dest ? formatAddress(dest, pduNumber(pdu, 'dest_addr_ton')) : null;
    const dataCoding = pduNumber(pdu, 'data_coding') ?? 0;
    let body = pduBody(pdu);
    let concat: ConcatInfo | null = null;
    if (esmClass & ESM_UDHI) {
      const udh = parseUdh(body);
      if (udh) {
        body = udh.body;
        concat = udh.concat;
      } else {
        this.log.warn({ from }, 'SMPP inbound with malformed UDH; taken as plain text');
      }
    }
    concat ??= sarInfo(pdu);
    const at = new Date();
    if (!concat || concat.total === 1) return this.sinks.inbound({ from, to, text: decodeText(body, dataCoding), at });
    const key = `${from}|${to ?? ''}|${concat.reference}|${concat.total}`;
    let message = this.pending.get(key);
    if (!message) {
      const timer = setTimeout(() => this.completeLate(key), this.partTimeoutMs);
      message = { from, to, at, total: concat.total, parts: new Map(), timer };
      this.pending.set(key, message);
    }
    message.parts.set(concat.sequence, { body, dataCoding });
    // Earlier parts are answered at once: an SMSC that waits for each answer before the next part would wait for ever.
    return message.parts.size === message.total ? this.complete(key) : Promise.resolve();
  }

  private completeLate(key: string): void {
    this.complete(key).catch((err: unknown) => this.log.error({ err }, 'SMPP inbound text given up on could not be written'));
  }

  /**
   * Emits a message; it is forgotten once written. If it cannot be, its
   * parts are kept: the SMSC sends the part that completed it again (it was
   * answered with an error) and the text is emitted again.
   */
  private async complete(key: string): Promise<void> {
    const message = this.pending.get(key);
    if (!message) return;
    this.pending.delete(key);
    clearTimeout(message.timer);
    const parts = [...message.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, part]) => part);
    if (parts.length < message.total) {
      this.log.warn({ from: message.from, got: parts.length, total: message.total }, 'SMPP inbound parts missing; emitting what arrived');
    }
    const first = parts[0];
    const sameCoding = parts.every((p) => p.dataCoding === first?.dataCoding);
    try {
      const text = sameCoding
        ? decodeText(Buffer.concat(parts.map((p) => p.body)), first?.dataCoding ?? 0)
        : parts.map((p) => decodeText(p.body, p.dataCoding)).join('');
      await this.sinks.inbound({ from: message.from, to: message.to, text, at: message.at });
    } catch (err) {
      if (!this.pending.has(key)) this.pending.set(key, { ...message, timer: setTimeout(() => this.completeLate(key), this.partTimeoutMs).unref() });
      throw err;
    }
  }
}

/** Concatenation from the sar_* TLVs (SMPP 3.4 §5.3.2.22-24), used by some SMSCs instead of UDH. */
function sarInfo(pdu: Pdu): ConcatInfo | null {
  const reference = pduNumber(pdu, 'sar_msg_ref_num');
  const total = pduNumber(pdu, 'sar_total_segments');
  const sequence = pduNumber(pdu, 'sar_segment_seqnum');
  if (reference === undefined || total === undefined || sequence === undefined) return null;
  if (total < 1 || sequence < 1 || sequence > total) return null;
  return { reference, total, sequence };
}
