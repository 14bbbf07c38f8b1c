/**
 * What a submit_sm carries, read and checked: addresses, times, the body
 * (short_message or message_payload) and, for a part of a long text, its
 * concatenation (UDH IEI 0x00 or 0x08, or the sar_* TLVs). Each problem is
 * the command_status it is answered with.
 */
import { decodeText, DATA_CODING_GSM, DATA_CODING_IA5, DATA_CODING_LATIN1, DATA_CODING_UCS2, ESM_UDHI } from '../carriers/smpp/encoding.ts';
import smpp, { pduBuffer, pduNumber, pduString, Status, type Pdu } from '../carriers/smpp/smpp-lib.ts';
import { parseUdh, type ConcatInfo } from '../carriers/smpp/udh.ts';
import { normalizeInternational } from '../common/phone.ts';
import { parseSmppTime } from './times.ts';
import { MAX_AHEAD_MS } from '../messaging/schedule.ts';

/**
 * The `smpp` package reads time fields (schedule_delivery_time,
 * validity_period, final_date) into Date objects, losing the UTC offset and
 * taking malformed text as some date. The server needs the text as sent
 * (times.ts reads it), so that decoding is switched off, as smpp-lib.ts does
 * for message bodies. Process-wide, like that switch: nothing else reads
 * these fields of a received PDU.
 */
(smpp.filters as unknown as { time: { decode: (value: unknown) => unknown } }).time.decode = (value: unknown) => value;

/** command_status values of the server beyond those the carrier names (SMPP 3.4 §5.1.3). */
export const ServerStatus = {
  ...Status,
  RINVCMDLEN: 0x02,
  RCANCELFAIL: 0x11,
  RINVSRCADR: 0x0a,
  RINVESMCLASS: 0x43,
  RINVSCHED: 0x61,
  RINVEXPIRY: 0x62,
  RQUERYFAIL: 0x67,
} as const;

/** data_coding values taken: GSM 03.38 (unpacked), IA5 (ASCII), Latin-1, UCS-2. */
const CODINGS = new Set([DATA_CODING_GSM, DATA_CODING_IA5, DATA_CODING_LATIN1, DATA_CODING_UCS2]);

export interface Submit {
  receiver: string;
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destAddr: string;
  destTon: number;
  destNpi: number;
  registeredDelivery: number;
  /** Epoch ms; null = now. */
  scheduleAt: number | null;
  validUntil: number | null;
  dataCoding: number;
  /** Octets of the text (UDH removed). */
  body: Buffer;
  /** Set for one part of a long text. */
  concat: ConcatInfo | null;
}

export type Refusal = { status: number; reason: string };

export function readSubmit(pdu: Pdu, now: number = Date.now()): Submit | Refusal {
  const destAddr = pduString(pdu, 'destination_addr');
  const receiver = normalizeInternational(destAddr);
  if (!receiver) return { status: ServerStatus.RINVDSTADR, reason: `destination_addr ${JSON.stringify(destAddr)} is not an international number` };
  const dataCoding = pduNumber(pdu, 'data_coding') ?? 0;
  if (!CODINGS.has(dataCoding)) return { status: ServerStatus.RINVDCS, reason: `data_coding ${dataCoding} not supported (0, 1, 3 or 8)` };
  const esmClass = pduNumber(pdu, 'esm_class') ?? 0;
  // Message mode bits 0-1 (store and forward, datagram, transaction: all taken alike) and UDHI; no receipts, no reply path.
  if ((esmClass & 0x3c) !== 0)
    return { status: ServerStatus.RINVESMCLASS, reason: `esm_class 0x${esmClass.toString(16)}: only a plain message (with or without UDH) may be submitted` };
  const short = pduBuffer(pdu, 'short_message') ?? Buffer.alloc(0);
  const payload = pduBuffer(pdu, 'message_payload');
  if (short.length > 0 && payload && payload.length > 0)
    return { status: ServerStatus.RINVMSGLEN, reason: 'short_message and message_payload both given: send the text in one of them' };
  let body = payload && payload.length > 0 ? payload : short;
  let concat: ConcatInfo | null = null;
  if (esmClass & ESM_UDHI) {
    const udh = parseUdh(body);
    if (!udh) return { status: ServerStatus.RINVMSGLEN, reason: 'the User Data Header is malformed' };
    body = udh.body;
    concat = udh.concat;
  }
  concat ??= sarInfo(pdu);
  if (concat && concat.total === 1) concat = null;
  if (body.length === 0) return { status: ServerStatus.RINVMSGLEN, reason: 'the message is empty' };
  const schedule = parseSmppTime(pduString(pdu, 'schedule_delivery_time'), now);
  if (schedule === 'invalid') return { status: ServerStatus.RINVSCHED, reason: 'schedule_delivery_time is not an SMPP time (YYMMDDhhmmsstnnp)' };
  if (schedule !== null && schedule > now + MAX_AHEAD_MS)
    return { status: ServerStatus.RINVSCHED, reason: 'schedule_delivery_time is more than a year ahead (as over HTTP)' };
  const validity = parseSmppTime(pduString(pdu, 'validity_period'), now);
  if (validity === 'invalid') return { status: ServerStatus.RINVEXPIRY, reason: 'validity_period is not an SMPP time (YYMMDDhhmmsstnnp)' };
  if (validity !== null && validity <= Math.max(now, schedule ?? 0))
    return { status: ServerStatus.RINVEXPIRY, reason: 'validity_period ends before the message could be sent' };
  return {
    receiver,
    sourceAddr: pduString(pdu, 'source_addr'),
    sourceTon: pduNumber(pdu, 'source_addr_ton') ?? 0,
    sourceNpi: pduNumber(pdu, 'source_addr_npi') ?? 0,
    destAddr,
    destTon: pduNumber(pdu, 'dest_addr_ton') ?? 1,
    destNpi: pduNumber(pdu, 'dest_addr_npi') ?? 1,
    registeredDelivery: pduNumber(pdu, 'registered_delivery') ?? 0,
    scheduleAt: schedule !== null && schedule > now ? schedule : null,
    validUntil: validity,
    dataCoding,
    body,
    concat,
  };
}

/** The text of parts joined in order: octets joined before decoding when they share a coding (a GSM escape or UTF-16 pair split by the sender stays whole); null when UCS-2 octets come to an odd number. */
export function joinParts(parts: { dataCoding: number; body: Buffer }[]): string | null {
  const first = parts[0];
  if (!first) return '';
  const oddUcs2 = (coding: number, bytes: Buffer) => coding === DATA_CODING_UCS2 && bytes.length % 2 !== 0;
  if (parts.every((p) => p.dataCoding === first.dataCoding)) {
    const joined = Buffer.concat(parts.map((p) => p.body));
    return oddUcs2(first.dataCoding, joined) ? null : decodeText(joined, first.dataCoding);
  }
  if (parts.some((p) => oddUcs2(p.dataCoding, p.body))) return null;
  return parts.map((p) => decodeText(p.body, p.dataCoding)).join('');
}

/** The sender shown to the receiver: source_addr, '+' for an international (TON 1) number; null when empty. */
export function senderOf(submit: Submit): string | null {
  if (submit.sourceAddr === '') return null;
  return submit.sourceTon === 1 && /^\d+$/.test(submit.sourceAddr) ? `+${submit.sourceAddr}` : submit.sourceAddr;
}

function sarInfo(pdu: Pdu): ConcatInfo | null {
  const reference = pduNumber(pdu, 'sar_msg_ref_num');
  const total = pduNumber(pdu, 'sar_total_segments');
  const sequence = pduNumber(pdu, 'sar_segment_seqnum');
  if (reference === undefined || total === undefined || sequence === undefined) return null;
  if (total < 1 || sequence < 1 || sequence > total) return null;
  return { reference, total, sequence };
}
