/**
 * Delivery receipts: the TLVs of SMPP 3.4 §5.3.2 (receipted_message_id,
 * message_state, network_error_code) and the de-facto text format of
 * SMPP 3.4 Appendix B:
 *   id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...
 *
 * Message ids. SMSCs do not agree on the base of ids: some answer submit_sm
 * in hex and write the receipt text id in decimal, or the other way round,
 * often zero-padded. The rule used here:
 *   - carrier ids are *canonical*: the submit_sm_resp id read as a number in
 *     `idBase` and written back in that base, lower case, without leading
 *     zeros ("000A1B" -> "a1b" for hex, "00042" -> "42" for decimal); ids
 *     that are not numbers in that base are kept as sent (trimmed);
 *   - receipted_message_id is, per the SMPP 3.4 specification, the
 *     submit_sm_resp id, so it is canonicalised with `idBase`;
 *   - the id in the receipt text is read in `receiptIdBase` (defaults to
 *     `idBase`) and converted to canonical `idBase`; if it is not a number in
 *     `receiptIdBase` it is canonicalised with `idBase` instead.
 * So the id the connector reports for a submit and the one it reports in the
 * receipt compare equal as strings.
 */
import type { ReceiptStatus } from '../carrier.ts';

export type IdBase = 'hex' | 'decimal';

/** Fields of a receipt text; absent ones are undefined. */
export interface ReceiptText {
  id?: string;
  sub?: string;
  dlvrd?: string;
  /** Dates are read as UTC: the format carries no zone. */
  submitDate?: Date;
  doneDate?: Date;
  stat?: string;
  err?: string;
  text?: string;
}

const KEY = /(?:^|\s)(id|sub|dlvrd|submit[ _]date|done[ _]date|stat|err|text)\s*:/gi;

/**
 * The form nearly every SMSC writes, in the order above with single spaces:
 * read by one anchored expression. Anything else (keys missing, in another
 * order or case variants such as `submit_date`, extra spaces) is read by
 * scanReceiptText, which gives the same fields for this form.
 */
const STANDARD = /^id:(\S*) sub:(\S*) dlvrd:(\S*) submit date:(\S*) done date:(\S*) stat:(\S*) err:(\S*)(?: text:(.*))?$/is;

/** Parses a receipt text: keys in any case and order, any of them missing; `text:` runs to the end. */
export function parseReceiptText(input: string): ReceiptText {
  const m = STANDARD.exec(input);
  if (!m) return scanReceiptText(input);
  const out: ReceiptText = {
    id: m[1] as string,
    sub: m[2] as string,
    dlvrd: m[3] as string,
    submitDate: parseReceiptDate(m[4] as string),
    doneDate: parseReceiptDate(m[5] as string),
    stat: m[6] as string,
    err: m[7] as string,
  };
  // As the scan reads it: one space after `text:` belongs to the key.
  if (m[8] !== undefined) out.text = m[8].startsWith(' ') ? m[8].slice(1) : m[8];
  return out;
}

/** parseReceiptText for any form: finds each key, its value runs to the next key. */
export function scanReceiptText(input: string): ReceiptText {
  const found: Array<{ key: string; start: number; end: number }> = [];
  for (const m of input.matchAll(KEY)) {
    const key = (m[1] ?? '').toLowerCase().replace('_', ' ');
    found.push({ key, start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
    if (key === 'text') break;
  }
  const out: ReceiptText = {};
  found.forEach((f, i) => {
    const next = found[i + 1];
    const raw = input.slice(f.end, next ? next.start : input.length);
    const value = f.key === 'text' ? raw.replace(/^ /, '') : raw.trim();
    if (f.key === 'id') out.id = value;
    else if (f.key === 'sub') out.sub = value;
    else if (f.key === 'dlvrd') out.dlvrd = value;
    else if (f.key === 'submit date') out.submitDate = parseReceiptDate(value);
    else if (f.key === 'done date') out.doneDate = parseReceiptDate(value);
    else if (f.key === 'stat') out.stat = value;
    else if (f.key === 'err') out.err = value;
    else out.text = value;
  });
  return out;
}

/** Two decimal digits of `s` at `at`, or NaN. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - 48;
  const b = s.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : Number.NaN;
}

/** YYMMDDhhmm or YYMMDDhhmmss (UTC, years 2000-2099) -> Date; undefined when malformed. */
export function parseReceiptDate(value: string): Date | undefined {
  if (value.length !== 10 && value.length !== 12) return undefined;
  const [yy, mo, dd, hh, mi] = [0, 2, 4, 6, 8].map((at) => twoDigits(value, at)) as [number, number, number, number, number];
  const ss = value.length === 12 ? twoDigits(value, 10) : 0;
  if ([yy, mo, dd, hh, mi, ss].some(Number.isNaN)) return undefined;
  const date = new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
  return date.getUTCMonth() === mo - 1 && hh < 24 && mi < 60 ? date : undefined;
}

const STAT_STATUS: Record<string, ReceiptStatus> = {
  DELIVRD: 'DELIVERED',
  DELIVERED: 'DELIVERED',
  UNDELIV: 'UNDELIVERED',
  UNDELIVERABLE: 'UNDELIVERED',
  EXPIRED: 'EXPIRED',
  REJECTD: 'FAILED',
  REJECTED: 'FAILED',
  DELETED: 'FAILED',
  ACCEPTD: 'SENT',
  ACCEPTED: 'SENT',
  UNKNOWN: 'SENT',
  ENROUTE: 'SENT',
};

/** Receipt `stat:` word -> our status; null for words outside SMPP 3.4 Appendix B. */
export function statStatus(stat: string): ReceiptStatus | null {
  return STAT_STATUS[stat.trim().toUpperCase()] ?? null;
}

/** message_state values 1..8 (SMPP 3.4 §5.2.28) as their Appendix B stat words. */
const STATE_STAT = ['', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD'];

/** message_state -> stat word, or null outside 1..8. */
export function messageStateStat(state: number): string | null {
  return STATE_STAT[state] || null;
}

/** message_state -> our status, or null outside 1..8. */
export function messageStateStatus(state: number): ReceiptStatus | null {
  const stat = messageStateStat(state);
  return stat ? statStatus(stat) : null;
}

/** Canonical form of an id in a base; see the module comment. */
export function canonicalId(id: string, base: IdBase): string {
  const trimmed = id.trim();
  const valid = base === 'hex' ? /^[0-9a-f]+$/i : /^[0-9]+$/;
  if (!valid.test(trimmed)) return trimmed;
  const value = BigInt(base === 'hex' ? `0x${trimmed}` : trimmed);
  return value.toString(base === 'hex' ? 16 : 10);
}

/** A receipt-text id in `from` base as a canonical id in `to` base; see the module comment. */
export function convertId(id: string, from: IdBase, to: IdBase): string {
  const trimmed = id.trim();
  const valid = from === 'hex' ? /^[0-9a-f]+$/i : /^[0-9]+$/;
  if (!valid.test(trimmed)) return canonicalId(trimmed, to);
  const value = BigInt(from === 'hex' ? `0x${trimmed}` : trimmed);
  return value.toString(to === 'hex' ? 16 : 10);
}

/** What a deliver_sm/data_sm receipt carries, read from its PDU. */
export interface ReceiptInput {
  /** Body decoded as text, '' when empty. */
  text: string;
  receiptedMessageId?: string;
  messageState?: number;
  /** network_error_code TLV: network type octet + 2-octet error code. */
  networkErrorCode?: Buffer;
}

export interface ParsedReceipt {
  carrierId: string;
  status: ReceiptStatus;
  /** e.g. "stat:UNDELIV err:001". */
  details: string;
  doneDate?: Date;
}

export interface IdOptions {
  idBase: IdBase;
  receiptIdBase?: IdBase;
}

/**
 * Reads a receipt: TLVs when present, else the text. Returns null only when
 * no message id can be found (nothing to attach the receipt to). A stat word
 * we do not know maps to SENT (not final) and is kept in details.
 */
export function parseReceipt(input: ReceiptInput, ids: IdOptions): ParsedReceipt | null {
  const text = parseReceiptText(input.text);
  let carrierId: string | null = null;
  if (input.receiptedMessageId?.trim()) {
    carrierId = canonicalId(input.receiptedMessageId, ids.idBase);
  } else if (text.id) {
    carrierId = convertId(text.id, ids.receiptIdBase ?? ids.idBase, ids.idBase);
  }
  if (carrierId === null) return null;

  const stateStat = input.messageState !== undefined ? messageStateStat(input.messageState) : null;
  const stat = stateStat ?? text.stat?.toUpperCase() ?? 'UNKNOWN';
  const status = statStatus(stat) ?? 'SENT';
  let err = text.err;
  if (err === undefined && input.networkErrorCode && input.networkErrorCode.length >= 3) {
    err = String(input.networkErrorCode.readUInt16BE(1)).padStart(3, '0');
  }
  const details = err !== undefined && err !== '' ? `stat:${stat} err:${err}` : `stat:${stat}`;
  const parsed: ParsedReceipt = { carrierId, status, details };
  if (text.doneDate) parsed.doneDate = text.doneDate;
  return parsed;
}
