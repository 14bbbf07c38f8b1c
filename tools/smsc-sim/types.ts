/** Public types of the SMSC simulator (server.ts). */
import type { TlsOptions } from 'node:tls';
import type { IdBase } from '../../src/carriers/smpp/receipt.ts';
import type { AssembledMessage, SubmitRecord } from './checks.ts';
import type { OutcomeRule } from './outcomes.ts';

export interface SmscSimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  systemId: string;
  password: string;
  /** Base of ids in submit_sm_resp (default hex: upper case, zero-padded to 10). */
  idBase?: IdBase;
  /** Base of the id in receipt texts (default idBase; decimal ids are zero-padded to 10). */
  receiptIdBase?: IdBase;
  /** Delay between submit_sm_resp and receipt (default 10 ms). */
  receiptDelayMs?: number;
  /** Put the Appendix B text / the TLVs in receipts (both default true). */
  receiptText?: boolean;
  receiptTlvs?: boolean;
  rules?: OutcomeRule[];
  /** Key and certificate to serve SMPP over TLS. */
  tls?: Pick<TlsOptions, 'key' | 'cert'>;
  /** Where to say what it does (default: nowhere). */
  log?: (line: string) => void;
}

/** Misbehaviour switches; each call changes only the fields given. */
export interface SimModeChange {
  /** Answer ESME_RTHROTTLED to the next N submits. */
  throttleNext?: number;
  /** Answer ESME_RTHROTTLED to every submit for this long. */
  throttleForMs?: number;
  /** Answer ESME_RMSGQFUL to the next N submits. */
  queueFullNext?: number;
  /** Delay every submit_sm_resp by this much. */
  responseDelayMs?: number;
  /** Send the receipt before the submit_sm_resp. */
  receiptBeforeResp?: boolean;
  /** Leave enquire_link unanswered (a dead peer). */
  ignoreEnquireLink?: boolean;
  /** Leave submit_sm unanswered. */
  ignoreSubmits?: boolean;
  /** Cut every connection when the Nth submit from now arrives (that one unanswered); null cancels. */
  dropAfterSubmits?: number | null;
  /** Keep receipts due from now on; false sends the kept ones, in order. */
  holdReceipts?: boolean;
}

export interface SimStats {
  connections: number;
  binds: number;
  bindFailures: number;
  unbinds: number;
  enquireLinks: number;
  drops: number;
  /** Accepted submits in arrival order. */
  submits: SubmitRecord[];
  refused: Array<{ receiver: string; status: number }>;
  throttled: number;
  /** Acknowledged by the ESME. */
  receiptsSent: number;
  moSent: number;
}

export interface MoMessage {
  from: string;
  to: string;
  text: string;
  /** UCS-2 even if the text fits GSM. */
  ucs2?: boolean;
  /** Parts to send it in (default as the limits need). */
  parts?: number;
  /** 16-bit reference UDH (IEI 0x08). */
  ref16?: boolean;
  /** Send the parts last first. */
  reverse?: boolean;
}

export interface SmscSimulator {
  port: number;
  stats: SimStats;
  setMode(change: SimModeChange): void;
  dropConnections(): void;
  /** Resolves when the ESME has acknowledged every part (waits for a receiver bind if none is up). */
  injectMo(mo: MoMessage): Promise<void>;
  /** Sends enquire_link or unbind to every bound ESME; resolves with the command_status of each response (-1: not sent). */
  requestAll(command: 'enquire_link' | 'unbind'): Promise<number[]>;
  /** Accepted submits put together into messages. */
  messages(): AssembledMessage[];
  /** Receipts and MO not yet acknowledged. */
  pendingDeliveries(): number;
  close(): Promise<void>;
}
