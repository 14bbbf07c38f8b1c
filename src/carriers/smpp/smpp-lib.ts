/**
 * The one place that imports the `smpp` package. Besides re-exporting it,
 * it switches off the package's decoding of message bodies and provides
 * typed reads of PDU fields.
 *
 * Why the switch: on receipt the package turns short_message/message_payload
 * into `{ udh, message: string }` using its own tables (lossy: unknown GSM
 * septets become spaces, UDH is split naively). We need the exact octets to
 * parse UDH, reassemble parts and decode them ourselves, and the simulator
 * needs them to check what the connector sent byte for byte. The switch is
 * process-wide (the package keeps its definitions in module state), but it
 * only changes decoding: encoding of Buffers, which is all we ever pass, is
 * untouched.
 */
import smpp from 'smpp';

const rawMessageBodies = (value: unknown): unknown => value;
smpp.filters.message.decode = rawMessageBodies;

export default smpp;
export type Pdu = smpp.Pdu;
export type PduParams = smpp.PduParams;
export type Session = smpp.Session;

/** command_status values the connector and simulator act upon (SMPP 3.4 §5.1.3, 5.0 for RINVDCS). */
export const Status = {
  ROK: 0x00,
  RINVMSGLEN: 0x01,
  RINVCMDID: 0x03,
  RINVBNDSTS: 0x04,
  RALYBND: 0x05,
  RSYSERR: 0x08,
  RINVDSTADR: 0x0b,
  RBINDFAIL: 0x0d,
  RINVPASWD: 0x0e,
  RMSGQFUL: 0x14,
  RSUBMITFAIL: 0x45,
  RTHROTTLED: 0x58,
  RX_T_APPN: 0x64,
  RINVDCS: 0x104,
} as const;

const namesByStatus = new Map<number, string>();
for (const [name, value] of Object.entries(smpp.errors)) {
  if (!namesByStatus.has(value)) namesByStatus.set(value, name);
}

/** "ESME_RTHROTTLED (0x58)": the form used in results and logs. */
export function statusText(status: number): string {
  const name = namesByStatus.get(status) ?? 'ESME_UNKNOWN';
  return `${name} (0x${status.toString(16).padStart(2, '0')})`;
}

/** A string field (C-string params and TLVs); '' when absent or of another type. */
export function pduString(pdu: Pdu, field: string): string {
  const value = pdu[field];
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  return '';
}

/** An integer field; undefined when absent. */
export function pduNumber(pdu: Pdu, field: string): number | undefined {
  const value = pdu[field];
  return typeof value === 'number' ? value : undefined;
}

/** An octet-string field (short_message, message_payload, buffer TLVs); undefined when absent. */
export function pduBuffer(pdu: Pdu, field: string): Buffer | undefined {
  const value = pdu[field];
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'latin1');
  return undefined;
}

/** The message body of a deliver_sm/data_sm/submit_sm: short_message, or message_payload when that is empty. */
export function pduBody(pdu: Pdu): Buffer {
  const short = pduBuffer(pdu, 'short_message');
  if (short && short.length > 0) return short;
  return pduBuffer(pdu, 'message_payload') ?? Buffer.alloc(0);
}

/** Logger shape we need; pino's Logger satisfies it. */
export interface SmppLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Logger that drops everything, for when none is given. */
export const silentLogger: SmppLogger = { debug() {}, info() {}, warn() {}, error() {} };
