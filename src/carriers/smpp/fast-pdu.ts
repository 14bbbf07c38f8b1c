/**
 * Fixed-layout decoding and encoding of the PDUs an SMPP session exchanges
 * most (submit_sm, deliver_sm, their answers, enquire_link), giving the same
 * objects and bytes as the `smpp` package does.
 *
 * Why: the package's PDU constructor, fromBuffer, _filter and toBuffer walk
 * every property of a PDU, prototype included, and run a filter per field;
 * that took about a third of the event loop. Here each command is a list of
 * fields taken from the package's own definitions at load, read and written
 * in order; a constructor and a reader per command, generated from that list
 * at load, set and get the fields by name.
 *
 * Both functions answer null for anything they do not reproduce exactly
 * (other commands, values that need the package's encode filters, input on
 * which the package throws); the caller then uses the package.
 */
import smpp, { type Pdu } from './smpp-lib.ts';

/** The parts of the package's definitions (lib/defs.js) read here; its typings do not declare them. */
interface FieldType {
  read(buffer: Buffer, offset: number, length?: number): unknown;
}
interface Filter {
  encode(this: unknown, value: unknown, skipUdh?: unknown): unknown;
  decode(this: unknown, value: unknown, skipUdh?: unknown): unknown;
}
interface ParamDef {
  type: FieldType;
  filter?: Filter;
}
interface CommandDef {
  id: number;
  params?: Record<string, ParamDef>;
  tlvMap?: Record<string, string>;
}
interface TlvDef {
  id: number;
  tag: string;
  type: FieldType;
  filter?: Filter;
  multiple?: boolean;
}
interface Defs {
  commands: Record<string, CommandDef>;
  tlvs: Record<string, TlvDef>;
  tlvsById: Record<number, TlvDef>;
  types: Record<'int8' | 'cstring' | 'buffer', FieldType> & { tlv: Record<'int8' | 'int16' | 'int32' | 'cstring' | 'string' | 'buffer', FieldType> };
  filters: Record<string, Filter> & { time: Filter };
}

const defs = smpp as unknown as Defs;
const { commands, tlvs, tlvsById, types, filters } = defs;

type Fields = Record<string, unknown>;
type ParamKind = 'int8' | 'cstring' | 'buffer';
type TlvKind = 'int8' | 'int16' | 'int32' | 'cstring' | 'string' | 'buffer';

const HEADER = 16;
const HEADER_KEYS = ['command_length', 'command_id', 'command_status', 'sequence_number', 'command'];
const COMMANDS = ['submit_sm', 'submit_sm_resp', 'deliver_sm', 'deliver_sm_resp', 'enquire_link', 'enquire_link_resp', 'generic_nack', 'data_sm_resp'];

const paramKinds = new Map<FieldType, ParamKind>([
  [types.int8, 'int8'],
  [types.cstring, 'cstring'],
  [types.buffer, 'buffer'],
]);
const tlvKinds = new Map<FieldType, TlvKind>([
  [types.tlv.int8, 'int8'],
  [types.tlv.int16, 'int16'],
  [types.tlv.int32, 'int32'],
  [types.tlv.cstring, 'cstring'],
  [types.tlv.string, 'string'],
  [types.tlv.buffer, 'buffer'],
]);

/** The package's filters whose encode returns a Buffer unchanged: with a Buffer value they do nothing. */
const bufferPassingFilters = new Set<Filter | undefined>(
  [
    'message',
    'billing_identification',
    'broadcast_area_identifier',
    'broadcast_content_type',
    'broadcast_frequency_interval',
    'callback_num',
    'callback_num_atag',
  ].map((name) => filters[name]),
);

interface Param {
  name: string;
  kind: ParamKind;
  filter: Filter | undefined;
}

/** Makes a decoded PDU with every param: header fields, then the params in order. */
type MakePdu = new (
  command_length: number,
  command_id: number,
  command_status: number,
  sequence_number: number,
  command: string,
  values: unknown[],
) => Pdu & Fields;

interface Layout {
  name: string;
  params: Param[];
  make: MakePdu;
  /** The params' values of a pdu, in order. */
  read: (pdu: Pdu) => unknown[];
  /** Params with a decode filter, in order, with their index in `params`. */
  filtered: { index: number; param: Param }[];
  tlvMap: Record<string, string>;
  /** Header and param names: a TLV never goes there. */
  reserved: Set<string>;
}

function layoutOf(name: string): Layout | null {
  const def = commands[name];
  if (!def) return null;
  const params: Param[] = [];
  for (const [paramName, param] of Object.entries(def.params ?? {})) {
    const kind = paramKinds.get(param.type);
    if (!kind) return null;
    params.push({ name: paramName, kind, filter: param.filter });
  }
  return {
    name,
    params,
    make: makerOf(params),
    read: readerOf(params),
    filtered: params.flatMap((param, index) => (param.filter ? [{ index, param }] : [])),
    tlvMap: def.tlvMap ?? {},
    reserved: new Set([...HEADER_KEYS, ...params.map((p) => p.name)]),
  };
}

/**
 * A constructor setting the fields by name, built from the param list: the
 * package's own `this[key] = value` costs ~30 ns a field (a megamorphic keyed
 * store adding a property), these cost ~2. Decoded PDUs thus have fast
 * properties and the package's prototype, as `new smpp.PDU(buffer)` ones do.
 */
function makerOf(params: Param[]): MakePdu {
  const body = [...HEADER_KEYS.map((key) => `this.${key} = ${key};`), ...params.map((param, i) => `this[${JSON.stringify(param.name)}] = values[${i}];`)].join(
    '\n',
  );
  const make = new Function(...HEADER_KEYS, 'values', body) as unknown as MakePdu;
  make.prototype = smpp.PDU.prototype;
  return make;
}

/** Reads the params of a pdu by name, for the same reason: keyed reads of each cost several times more. */
function readerOf(params: Param[]): (pdu: Pdu) => unknown[] {
  const list = params.map((param) => `pdu[${JSON.stringify(param.name)}]`).join(', ');
  return new Function('pdu', `return [${list}];`) as (pdu: Pdu) => unknown[];
}

const layoutsByName = new Map<string, Layout>();
const layoutsById = new Map<number, Layout>();
for (const name of COMMANDS) {
  const layout = layoutOf(name);
  const id = commands[name]?.id;
  if (layout && id !== undefined) {
    layoutsByName.set(name, layout);
    layoutsById.set(id, layout);
  }
}

const isUint32 = (value: unknown): value is number => typeof value === 'number' && value >>> 0 === value;

/** End of a C-string as the package reads it: the first NUL, or the end of the buffer when there is none. */
function cstringEnd(buffer: Buffer, offset: number): number {
  let end = offset;
  while (buffer[end]) end++;
  return end;
}

/**
 * The package's PDU for `buffer` (one whole PDU), or null when it is not one
 * of the commands above or the package would throw on it.
 */
export function decodePdu(buffer: Buffer): Pdu | null {
  if (buffer.length < HEADER) return null;
  const length = buffer.readUInt32BE(0);
  if (length !== buffer.length || length > smpp.PDU.maxLength) return null;
  const layout = layoutsById.get(buffer.readUInt32BE(4));
  if (!layout) return null;
  try {
    return decodeBody(buffer, layout);
  } catch {
    // Only the package's own filters can throw here, on input it throws on too: it gets to say so.
    return null;
  }
}

/**
 * Set on a decoded PDU (a symbol: the package's own walks of a PDU never
 * see it) to the name of the first field that ran past its end: a C-string
 * without its NUL, a length octet or a TLV length promising more octets
 * than the PDU holds. The package reads such a PDU anyway, the field cut at
 * the end; the gateway's SMPP server refuses it (src/smpp-server/server.ts).
 */
export const OVERRUN = Symbol('field past the end of the PDU');

function decodeBody(buffer: Buffer, layout: Layout): Pdu | null {
  const length = buffer.length;
  const { params } = layout;
  let overrun: string | undefined;
  // Params in order while bytes remain; a short body leaves the rest unset, as in the package.
  const values: unknown[] = new Array(params.length);
  let offset = HEADER;
  let read = 0;
  for (const param of params) {
    if (offset >= length) break;
    if (param.kind === 'int8') {
      values[read] = buffer[offset];
      offset += 1;
    } else if (param.kind === 'cstring') {
      const end = cstringEnd(buffer, offset);
      if (end >= length) overrun ??= param.name;
      values[read] = buffer.toString('ascii', offset, end);
      offset = end + 1;
    } else {
      const declared = buffer[offset] as number;
      if (offset + 1 + declared > length) overrun ??= param.name;
      const value = buffer.subarray(offset + 1, offset + 1 + declared);
      values[read] = value;
      offset += value.length + 1;
    }
    read++;
  }
  const id = buffer.readUInt32BE(4);
  const status = buffer.readUInt32BE(8);
  const sequence = buffer.readUInt32BE(12);
  const pdu = new layout.make(length, id, status, sequence, layout.name, values);
  if (read < params.length) {
    // Drop the params the body did not reach (and their keys), as the package never sets them.
    for (let i = read; i < params.length; i++) delete pdu[(params[i] as Param).name];
  }

  let filteredTags: string[] | undefined;
  while (offset + 4 <= length) {
    const id = buffer.readUInt16BE(offset);
    const size = buffer.readUInt16BE(offset + 2);
    offset += 4;
    if (offset + size > length) overrun ??= tlvsById[id]?.tag ?? `TLV 0x${id.toString(16).padStart(4, '0')}`;
    const tlv = tlvsById[id];
    if (!tlv) {
      pdu[id] = buffer.subarray(offset, offset + size);
      offset += size;
      continue;
    }
    const tag = layout.tlvMap[tlv.tag] || tlv.tag;
    const kind = tlvKinds.get(tlv.type);
    if (!kind || layout.reserved.has(tag)) return null;
    const value = readTlv(buffer, offset, size, kind);
    if (value === undefined) return null;
    if (tlvs[tag]?.filter && !Object.hasOwn(pdu, tag)) {
      filteredTags ??= [];
      filteredTags.push(tag);
    }
    if (tlv.multiple) {
      pdu[tag] ??= [];
      (pdu[tag] as unknown[]).push(value);
    } else pdu[tag] = value;
    offset += size;
  }

  // The decode filters, in key order as _filter runs them: params first, then TLVs.
  for (const { index, param } of layout.filtered) {
    if (index >= read) break;
    pdu[param.name] = param.filter?.decode.call(pdu, pdu[param.name]);
  }
  for (const tag of filteredTags ?? []) decodeTlvFilter(pdu, tag);
  if (overrun !== undefined) (pdu as unknown as Record<symbol, string>)[OVERRUN] = overrun;
  return pdu;
}

/** A TLV value as the package's type reads it; undefined where the package would throw (a read past the end). */
function readTlv(buffer: Buffer, offset: number, size: number, kind: TlvKind): unknown {
  switch (kind) {
    // Integer reads ignore the TLV's length, as the package's do.
    case 'int8':
      return offset + 1 <= buffer.length ? buffer[offset] : undefined;
    case 'int16':
      return offset + 2 <= buffer.length ? buffer.readUInt16BE(offset) : undefined;
    case 'int32':
      return offset + 4 <= buffer.length ? buffer.readUInt32BE(offset) : undefined;
    // So does the C-string read: up to the next NUL, even past the TLV.
    case 'cstring':
      return buffer.toString('ascii', offset, cstringEnd(buffer, offset));
    case 'string':
      return buffer.toString('ascii', offset, offset + size);
    case 'buffer':
      return buffer.subarray(offset, offset + size);
  }
}

function decodeTlvFilter(pdu: Pdu & Fields, tag: string): void {
  const def = tlvs[tag] as TlvDef;
  const filter = def.filter as Filter;
  if (def.multiple) {
    const values = pdu[tag] as unknown[];
    values.forEach((value, i) => {
      values[i] = filter.decode.call(pdu, value, true);
    });
  } else if (tag === 'message_payload') {
    // As _filter: no UDH split of the payload when short_message already held a decoded message.
    const short = pdu.short_message as { message?: { length?: number } } | undefined;
    const skipUdh = short?.message?.length; // the filter only tests it for truth
    pdu[tag] = filter.decode.call(pdu, pdu[tag], skipUdh);
  } else {
    pdu[tag] = filter.decode.call(pdu, pdu[tag], true);
  }
}

/** A value encode refuses: the package's toBuffer is left to handle (or throw on) it. */
const UNSUPPORTED = Symbol('unsupported');
type Encodable = number | string | Buffer;

/** What `filter.encode` would give for `value`, when that is known without running it on the pdu. */
function filtered(filter: Filter | undefined, value: unknown): unknown {
  if (!filter) return value;
  // The time filter only formats its value (pads short relative times, formats Dates).
  if (filter === filters.time) return filter.encode.call(null, value);
  return Buffer.isBuffer(value) && bufferPassingFilters.has(filter) ? value : UNSUPPORTED;
}

function paramValue(param: Param, raw: unknown): Encodable | typeof UNSUPPORTED {
  const value = filtered(param.filter, raw);
  switch (param.kind) {
    case 'int8':
      if (value === null) return 0; // data_coding's default
      return typeof value === 'number' && (value & 0xff) === value ? value : UNSUPPORTED;
    case 'cstring':
      return typeof value === 'string' || Buffer.isBuffer(value) ? value : UNSUPPORTED;
    case 'buffer':
      return Buffer.isBuffer(value) && value.length <= 0xff ? value : UNSUPPORTED;
  }
}

const INT_MASKS = { int8: 0xff, int16: 0xffff, int32: 0xffffffff } as const;

function tlvValue(kind: TlvKind, filter: Filter | undefined, raw: unknown): Encodable | typeof UNSUPPORTED {
  const value = filtered(filter, raw);
  if (kind === 'int8' || kind === 'int16' || kind === 'int32') {
    if (value === undefined || value === null) return 0; // the package writes `value || 0`
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= INT_MASKS[kind] ? value : UNSUPPORTED;
  }
  return typeof value === 'string' || Buffer.isBuffer(value) ? value : UNSUPPORTED;
}

function tlvSize(kind: TlvKind, value: Encodable): number {
  switch (kind) {
    case 'int8':
      return 1;
    case 'int16':
      return 2;
    case 'int32':
      return 4;
    case 'cstring':
      return (value as string | Buffer).length + 1;
    default:
      return (value as string | Buffer).length;
  }
}

/** Writes a string or Buffer as the package does: strings as one octet per UTF-16 unit (Buffer.from(value, 'ascii')). */
function writeOctets(buffer: Buffer, offset: number, value: string | Buffer): number {
  if (typeof value === 'string') {
    for (let i = 0; i < value.length; i++) buffer[offset + i] = value.charCodeAt(i);
  } else value.copy(buffer, offset);
  return offset + value.length;
}

/** The TLVs of `pdu` to write, in its key order, with their values; null when one cannot be written here. */
function tlvsOf(pdu: Fields, layout: Layout): { def: TlvDef; kind: TlvKind; values: Encodable[] }[] | null {
  const found: { def: TlvDef; kind: TlvKind; values: Encodable[] }[] = [];
  for (const key of Object.keys(pdu)) {
    if (layout.reserved.has(key)) continue;
    const def = tlvs[key];
    if (def === undefined) continue; // unknown TLVs kept by decoding under their id are not written by the package either
    const kind = tlvKinds.get(def.type);
    if (!Object.hasOwn(tlvs, key) || !kind) return null;
    const raw = pdu[key];
    if (def.multiple && !Array.isArray(raw)) return null;
    const values: Encodable[] = [];
    for (const item of def.multiple ? (raw as unknown[]) : [raw]) {
      const value = tlvValue(kind, def.filter, item);
      if (value === UNSUPPORTED || tlvSize(kind, value) > 0xffff) return null;
      values.push(value);
    }
    found.push({ def, kind, values });
  }
  return found;
}

/**
 * The bytes `pdu.toBuffer()` gives, for the commands above, or null when the
 * pdu holds values only the package's encode filters or checks deal with.
 * Changes nothing on the pdu but command_length, which toBuffer sets too.
 */
export function encodePdu(pdu: Pdu): Buffer | null {
  const layout = layoutsByName.get(pdu.command);
  if (!layout) return null;
  const { command_id, command_status, sequence_number } = pdu;
  if (!isUint32(command_id) || !isUint32(command_status) || !isUint32(sequence_number)) return null;
  if (command_status !== 0) return header(pdu, HEADER);

  const values = layout.read(pdu);
  let length = HEADER;
  for (let i = 0; i < values.length; i++) {
    const value = paramValue(layout.params[i] as Param, values[i]);
    if (value === UNSUPPORTED) return null;
    values[i] = value;
    length += typeof value === 'number' ? 1 : value.length + 1;
  }
  const found = tlvsOf(pdu as Pdu & Fields, layout);
  if (!found) return null;
  for (const { kind, values } of found) {
    for (const value of values) length += 4 + tlvSize(kind, value);
  }

  const buffer = header(pdu, length);
  let offset = HEADER;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as Encodable;
    if (typeof value === 'number') buffer[offset++] = value;
    else if ((layout.params[i] as Param).kind === 'buffer') {
      buffer[offset] = value.length;
      offset = writeOctets(buffer, offset + 1, value);
    } else {
      offset = writeOctets(buffer, offset, value);
      buffer[offset++] = 0;
    }
  }
  for (const { def, kind, values: items } of found) {
    for (const value of items) {
      buffer.writeUInt16BE(def.id, offset);
      buffer.writeUInt16BE(tlvSize(kind, value), offset + 2);
      offset += 4;
      if (kind === 'int8') buffer[offset] = value as number;
      else if (kind === 'int16') buffer.writeUInt16BE(value as number, offset);
      else if (kind === 'int32') buffer.writeUInt32BE(value as number, offset);
      else {
        const end = writeOctets(buffer, offset, value as string | Buffer);
        if (kind === 'cstring') buffer[end] = 0;
      }
      offset += tlvSize(kind, value);
    }
  }
  return buffer;
}

function header(pdu: Pdu, length: number): Buffer {
  pdu.command_length = length;
  const buffer = Buffer.allocUnsafe(length);
  buffer.writeUInt32BE(length, 0);
  buffer.writeUInt32BE(pdu.command_id, 4);
  buffer.writeUInt32BE(pdu.command_status, 8);
  buffer.writeUInt32BE(pdu.sequence_number, 12);
  return buffer;
}
