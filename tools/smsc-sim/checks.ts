/**
 * The simulator's strict side: checks of submitted bodies, reassembly of
 * accepted parts for assertions, and building of MO parts to inject.
 */
import { decodeText, encodeGsm, encodeUcs2, ESM_UDHI } from '../../src/carriers/smpp/encoding.ts';
import { Status } from '../../src/carriers/smpp/smpp-lib.ts';
import { parseUdh } from '../../src/carriers/smpp/udh.ts';

/** An accepted submit_sm, as received. */
export interface SubmitRecord {
  messageId: string;
  receiver: string;
  sender: string;
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /** short_message octets, UDH included. */
  bytes: Buffer;
}

/** data_coding values the simulated SMSC takes: GSM default, IA5, octets, Latin-1, octets, UCS-2. */
const ACCEPTED_CODINGS = new Set([0x00, 0x01, 0x02, 0x03, 0x04, 0x08]);

/**
 * command_status for a submit body: ESME_RINVDCS (SMPP 5.0; 3.4 has no code
 * for it) for an unknown data_coding, ESME_RSYSERR for a malformed UDH or a
 * non-septet octet under data_coding 0, ESME_RINVMSGLEN when the message
 * would not fit one SMS: over 140 octets, or over 160 septets for GSM, where
 * the octets are unpacked septets and the UDH counts as ceil(octets*8/7).
 */
export function checkSubmit(dataCoding: number, esmClass: number, bytes: Buffer): number {
  if (!ACCEPTED_CODINGS.has(dataCoding)) return Status.RINVDCS;
  let udhOctets = 0;
  let body = bytes;
  if (esmClass & ESM_UDHI) {
    const udh = parseUdh(bytes);
    if (!udh) return Status.RSYSERR;
    udhOctets = udh.length;
    body = udh.body;
  }
  if (dataCoding === 0x00) {
    if (body.some((b) => b > 0x7f)) return Status.RSYSERR;
    const septets = Math.ceil((udhOctets * 8) / 7) + body.length;
    return septets > 160 ? Status.RINVMSGLEN : Status.ROK;
  }
  if (dataCoding === 0x08 && body.length % 2 !== 0) return Status.RINVMSGLEN;
  return bytes.length > 140 ? Status.RINVMSGLEN : Status.ROK;
}

/** A message as the handset would show it, put together from accepted parts. */
export interface AssembledMessage {
  receiver: string;
  sender: string;
  text: string;
  dataCoding: number;
  parts: SubmitRecord[];
  complete: boolean;
}

/**
 * Groups accepted submits into messages (UDH concatenation by receiver,
 * reference and total), in arrival order, as a handset does: parts collect
 * in the one open group of their key; a part whose number that group already
 * has starts a new one and leaves the old incomplete for good (a resend, or
 * another message that happens to share the 8-bit reference).
 */
export function assemble(records: SubmitRecord[]): AssembledMessage[] {
  type Group = { key: string | null; total: number; parts: Array<{ seq: number; body: Buffer; rec: SubmitRecord }> };
  const out: Group[] = [];
  const open = new Map<string, Group>();
  for (const rec of records) {
    const udh = rec.esmClass & ESM_UDHI ? parseUdh(rec.bytes) : null;
    if (!udh?.concat) {
      out.push({ key: null, total: 1, parts: [{ seq: 1, body: udh ? udh.body : rec.bytes, rec }] });
      continue;
    }
    const { reference, total, sequence } = udh.concat;
    const key = `${rec.receiver}|${reference}|${total}`;
    let group = open.get(key);
    if (!group || group.parts.some((p) => p.seq === sequence)) {
      group = { key, total, parts: [] };
      out.push(group);
      open.set(key, group);
    }
    group.parts.push({ seq: sequence, body: udh.body, rec });
    if (group.parts.length === total) open.delete(key);
  }
  return out.map((g) => {
    const parts = [...g.parts].sort((a, b) => a.seq - b.seq);
    const first = parts[0]?.rec;
    const dataCoding = first?.dataCoding ?? 0;
    return {
      receiver: first?.receiver ?? '',
      sender: first?.sender ?? '',
      text: decodeText(Buffer.concat(parts.map((p) => p.body)), dataCoding),
      dataCoding,
      parts: parts.map((p) => p.rec),
      complete: parts.length === g.total,
    };
  });
}

export interface MoBody {
  dataCoding: number;
  /** short_message of each part, UDH included when there are several. */
  parts: Buffer[];
  esmClass: number;
}

/**
 * Splits an MO text into `parts` parts (default: as many as the limits need)
 * at character boundaries (never inside a GSM escape; UCS-2 at any code unit,
 * as some phones do), each with an 8-bit (IEI 0x00) or 16-bit (0x08) reference UDH.
 */
export function moBody(text: string, opts: { ucs2?: boolean; parts?: number; ref16?: boolean; reference: number }): MoBody {
  const gsm = opts.ucs2 ? null : encodeGsm(text);
  const bytes = gsm ?? encodeUcs2(text);
  const dataCoding = gsm ? 0x00 : 0x08;
  const unitBytes = gsm ? 1 : 2;
  const perPart = gsm ? (opts.ref16 ? 152 : 153) : opts.ref16 ? 66 : 67;
  const single = gsm ? 160 : 70;
  const units = bytes.length / unitBytes;
  const count = opts.parts ?? (units <= single ? 1 : Math.ceil(units / perPart));
  if (count <= 1) return { dataCoding, parts: [bytes], esmClass: 0 };
  const chunks: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    let end = i === count - 1 ? bytes.length : start + Math.ceil((bytes.length - start) / (count - i) / unitBytes) * unitBytes;
    if (gsm && end < bytes.length && bytes[end - 1] === 0x1b) end++;
    chunks.push(bytes.subarray(start, end));
    start = end;
  }
  const ref = opts.reference;
  const parts = chunks.map((chunk, i) => {
    const udh = opts.ref16
      ? Buffer.from([0x06, 0x08, 0x04, (ref >> 8) & 0xff, ref & 0xff, count, i + 1])
      : Buffer.from([0x05, 0x00, 0x03, ref & 0xff, count, i + 1]);
    return Buffer.concat([udh, chunk]);
  });
  return { dataCoding, parts, esmClass: ESM_UDHI };
}
