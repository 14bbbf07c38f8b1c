/**
 * What the simulated SMSC does with a submit, by receiver suffix, and the
 * delivery receipts it writes (SMPP 3.4 Appendix B text plus the §5.3.2 TLVs).
 */
import { Status } from '../../src/carriers/smpp/smpp-lib.ts';
import type { PduParams } from '../../src/carriers/smpp/smpp-lib.ts';
import type { IdBase } from '../../src/carriers/smpp/receipt.ts';

/** Receipt stat words of SMPP 3.4 Appendix B. */
export type ReceiptStat = 'DELIVRD' | 'EXPIRED' | 'DELETED' | 'UNDELIV' | 'ACCEPTD' | 'UNKNOWN' | 'REJECTD' | 'ENROUTE';

/** message_state (SMPP 3.4 §5.2.28) of each stat word. */
export const MESSAGE_STATE: Record<ReceiptStat, number> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7,
  REJECTD: 8,
};

export interface OutcomeRule {
  /** Applies to receivers ending with this. */
  suffix: string;
  /** Refuse the submit with this command_status. */
  submitStatus?: number;
  /** Receipt stat (default DELIVRD) and err code (default 000). */
  stat?: ReceiptStat;
  err?: string;
  /** Accept but never send a receipt. */
  noReceipt?: boolean;
}

/** Default rules: ...0001 UNDELIV, ...0002 EXPIRED, ...0003 refused at submit, and one suffix per other stat. */
export const DEFAULT_RULES: OutcomeRule[] = [
  { suffix: '0001', stat: 'UNDELIV', err: '001' },
  { suffix: '0002', stat: 'EXPIRED' },
  { suffix: '0003', submitStatus: Status.RSUBMITFAIL },
  { suffix: '0004', stat: 'REJECTD', err: '002' },
  { suffix: '0005', stat: 'DELETED' },
  { suffix: '0006', stat: 'UNKNOWN' },
  { suffix: '0007', stat: 'ACCEPTD' },
  { suffix: '0008', stat: 'ENROUTE' },
  { suffix: '0009', noReceipt: true },
];

export function ruleFor(rules: OutcomeRule[], receiver: string): OutcomeRule | undefined {
  return rules.find((r) => receiver.endsWith(r.suffix));
}

/** Message id as the SMSC writes it: hex upper case zero-padded to 10, or plain decimal. */
export function formatId(n: bigint, base: IdBase): string {
  return base === 'hex' ? n.toString(16).toUpperCase().padStart(10, '0') : n.toString(10);
}

/** YYMMDDhhmm in UTC. */
export function receiptDate(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getUTCFullYear() % 100)}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}`;
}

export interface ReceiptSpec {
  /** Id as given in submit_sm_resp (goes in receipted_message_id). */
  messageId: string;
  /** Id as written in the text (10 digits for decimal, per Appendix B). */
  textId: string;
  receiver: string;
  sender: string;
  stat: ReceiptStat;
  err: string;
  submittedAt: Date;
  /** First characters of the message. */
  text: string;
  withText: boolean;
  withTlvs: boolean;
}

/** The Appendix B receipt text. */
export function receiptText(r: ReceiptSpec): string {
  const dlvrd = r.stat === 'DELIVRD' ? '001' : '000';
  const text = r.text.slice(0, 20).replace(/[^ -~]/g, '?');
  return `id:${r.textId} sub:001 dlvrd:${dlvrd} submit date:${receiptDate(r.submittedAt)} done date:${receiptDate(new Date())} stat:${r.stat} err:${r.err} text:${text}`;
}

/** deliver_sm parameters of a receipt. */
export function receiptParams(r: ReceiptSpec): PduParams {
  const params: PduParams = {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: r.receiver,
    dest_addr_ton: 0,
    dest_addr_npi: 1,
    destination_addr: r.sender,
    esm_class: 0x04,
    data_coding: 0,
    short_message: Buffer.from(r.withText ? receiptText(r) : '', 'latin1'),
  };
  if (r.withTlvs) {
    params.receipted_message_id = r.messageId;
    params.message_state = MESSAGE_STATE[r.stat];
    const err = Number.parseInt(r.err, 10) || 0;
    params.network_error_code = Buffer.from([0x03, err >> 8, err & 0xff]); // type 3 = GSM
  }
  return params;
}
