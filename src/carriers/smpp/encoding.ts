/**
 * Text <-> short_message octets for SMPP.
 *
 * Outbound: GSM 03.38 default alphabet (+ extension table) when every
 * character fits, else UCS-2. GSM goes out unpacked, one septet per octet,
 * with data_coding 0x00 (what SMSCs expect over SMPP); UCS-2 as UTF-16BE with
 * data_coding 0x08. Long texts become concatenated parts with an 8-bit
 * reference UDH, splitting neither GSM escape sequences nor surrogate pairs.
 */
import { concatUdh } from './udh.ts';

/** Septet value -> character of the GSM 03.38 default alphabet (0x1B is the escape). */
const GSM_BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** Extension table: character -> septet following the 0x1B escape. */
const GSM_EXTENSION: ReadonlyArray<readonly [string, number]> = [
  ['\f', 0x0a],
  ['^', 0x14],
  ['{', 0x28],
  ['}', 0x29],
  ['\\', 0x2f],
  ['[', 0x3c],
  ['~', 0x3d],
  [']', 0x3e],
  ['|', 0x40],
  ['€', 0x65],
];
const ESC = 0x1b;

const gsmEncode = new Map<string, number[]>();
const gsmDecodeExt = new Map<number, string>();
for (let i = 0; i < GSM_BASIC.length; i++) {
  const ch = GSM_BASIC.charAt(i);
  if (i !== ESC) gsmEncode.set(ch, [i]);
}
for (const [ch, code] of GSM_EXTENSION) {
  gsmEncode.set(ch, [ESC, code]);
  gsmDecodeExt.set(code, ch);
}

export const DATA_CODING_GSM = 0x00;
export const DATA_CODING_IA5 = 0x01;
export const DATA_CODING_LATIN1 = 0x03;
export const DATA_CODING_UCS2 = 0x08;
/** esm_class bit telling that short_message starts with a User Data Header. */
export const ESM_UDHI = 0x40;

/** Per-message limits in units (septets for GSM, UTF-16 code units for UCS-2). */
export const LIMITS = {
  GSM: { single: 160, part: 153 },
  UCS2: { single: 70, part: 67 },
} as const;
/** An 8-bit total field allows at most 255 parts. */
export const MAX_PARTS = 255;

/** One submit_sm worth of message. */
export interface EncodedSegment {
  /** short_message octets, UDH included. */
  shortMessage: Buffer;
  esmClass: number;
  dataCoding: number;
}

export interface EncodedMessage {
  encoding: 'GSM' | 'UCS2';
  dataCoding: number;
  /** Length of the whole text in units of its encoding. */
  units: number;
  segments: EncodedSegment[];
}

/** One character's octets and how many units it counts for. */
interface Token {
  bytes: number[];
  units: number;
}

function gsmTokens(text: string): Token[] | null {
  const tokens: Token[] = [];
  for (const ch of text) {
    const bytes = gsmEncode.get(ch);
    if (!bytes) return null;
    tokens.push({ bytes, units: bytes.length });
  }
  return tokens;
}

function ucs2Tokens(text: string): Token[] {
  const tokens: Token[] = [];
  for (const ch of text) {
    const bytes: number[] = [];
    for (let i = 0; i < ch.length; i++) {
      const unit = ch.charCodeAt(i);
      bytes.push(unit >> 8, unit & 0xff);
    }
    tokens.push({ bytes, units: ch.length });
  }
  return tokens;
}

/** Septets the text needs in the GSM alphabet, or null if some character is not in it. */
export function gsmSeptets(text: string): number | null {
  const tokens = gsmTokens(text);
  return tokens ? tokens.reduce((n, t) => n + t.units, 0) : null;
}

/** Whole text as unpacked GSM septets, or null if some character is not in the alphabet. */
export function encodeGsm(text: string): Buffer | null {
  const tokens = gsmTokens(text);
  return tokens ? Buffer.from(tokens.flatMap((t) => t.bytes)) : null;
}

/** Whole text as UCS-2 (UTF-16BE). */
export function encodeUcs2(text: string): Buffer {
  return Buffer.from(ucs2Tokens(text).flatMap((t) => t.bytes));
}

/** Groups tokens into chunks of at most `max` units without splitting a token. */
function chunk(tokens: Token[], max: number): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  let units = 0;
  for (const token of tokens) {
    if (units + token.units > max) {
      chunks.push(current);
      current = [];
      units = 0;
    }
    current.push(...token.bytes);
    units += token.units;
  }
  chunks.push(current);
  return chunks;
}

/**
 * Encodes a text into the submit_sm bodies to send. `reference` (0..255) is
 * the concatenation reference; derive it from the message id so a resent
 * message reuses it. Throws RangeError above 255 parts.
 */
export function encodeMessage(text: string, reference: number): EncodedMessage {
  const known = singles.get(text);
  if (known) return known;
  const encoded = encodeWith(text, reference);
  // A campaign sends one text to many receivers: a text that fits one segment encodes the same for all of them (no reference).
  if (encoded.segments.length === 1) {
    if (singles.size >= 1000) singles.clear();
    singles.set(text, encoded);
  }
  return encoded;
}

/** Texts that fit one segment, encoded (shared: callers only read them). */
const singles = new Map<string, EncodedMessage>();

function encodeWith(text: string, reference: number): EncodedMessage {
  const gsm = gsmTokens(text);
  const encoding = gsm ? 'GSM' : 'UCS2';
  const tokens = gsm ?? ucs2Tokens(text);
  const dataCoding = gsm ? DATA_CODING_GSM : DATA_CODING_UCS2;
  const limits = LIMITS[encoding];
  const units = tokens.reduce((n, t) => n + t.units, 0);
  if (units <= limits.single) {
    const shortMessage = Buffer.from(tokens.flatMap((t) => t.bytes));
    return { encoding, dataCoding, units, segments: [{ shortMessage, esmClass: 0, dataCoding }] };
  }
  const chunks = chunk(tokens, limits.part);
  if (chunks.length > MAX_PARTS) {
    throw new RangeError(`message needs ${chunks.length} parts, at most ${MAX_PARTS} allowed`);
  }
  const segments = chunks.map((bytes, i) => ({
    shortMessage: Buffer.concat([concatUdh(reference, chunks.length, i + 1), Buffer.from(bytes)]),
    esmClass: ESM_UDHI,
    dataCoding,
  }));
  return { encoding, dataCoding, units, segments };
}

/** 8-bit concatenation reference from a message id (FNV-1a), stable across retries. */
export function messageReference(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash ^ (hash >>> 8) ^ (hash >>> 16) ^ (hash >>> 24)) & 0xff;
}

/**
 * Unpacked GSM septets -> text. An escape followed by a code outside the
 * extension table shows the basic character (3GPP TS 23.038 §6.2.1.1);
 * octets above 0x7F are not septets and become U+FFFD.
 */
export function decodeGsm(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    if (b === ESC) {
      const next = bytes[i + 1];
      if (next === undefined) break;
      i++;
      out += gsmDecodeExt.get(next) ?? (next < 0x80 && next !== ESC ? GSM_BASIC.charAt(next) : '');
      continue;
    }
    out += b < 0x80 ? GSM_BASIC.charAt(b) : '\ufffd';
  }
  return out;
}

/** UTF-16BE -> text, keeping code units as they are (halves of a pair split by the sender join up when texts are concatenated). */
export function decodeUcs2(bytes: Buffer): string {
  const units: number[] = [];
  for (let i = 0; i + 1 < bytes.length; i += 2) units.push(bytes.readUInt16BE(i));
  let out = '';
  for (let i = 0; i < units.length; i += 4096) out += String.fromCharCode(...units.slice(i, i + 4096));
  return out;
}

/**
 * Decodes a message body by its SMPP data_coding: 0 GSM (unpacked), 1 IA5
 * (ASCII), 3 Latin-1, 8 UCS-2; the GSM 03.38 "message class" group 0xF0..0xFF
 * by its alphabet bit. Anything else is read as Latin-1, which never fails
 * and keeps ASCII readable.
 */
export function decodeText(bytes: Buffer, dataCoding: number): string {
  if ((dataCoding & 0xf0) === 0xf0) {
    return dataCoding & 0x04 ? bytes.toString('latin1') : decodeGsm(bytes);
  }
  switch (dataCoding) {
    case DATA_CODING_GSM:
      return decodeGsm(bytes);
    case DATA_CODING_IA5:
      return Buffer.from(bytes.map((b) => b & 0x7f)).toString('ascii');
    case DATA_CODING_UCS2:
      return decodeUcs2(bytes);
    default:
      return bytes.toString('latin1');
  }
}
