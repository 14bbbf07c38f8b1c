/**
 * What the SMPP server writes inside other features' transactions, so that
 * nothing it owes a customer can be lost between a change and its record:
 *
 * - at accept (src/messaging/accept.ts): the message's SMPP submit
 *   (credential, registered_delivery, addresses, validity), the stored parts
 *   it completes removed, and the receipt of a blocked receiver;
 * - at a status change (src/events/status-log.ts): the delivery receipt the
 *   customer asked for, queued in smpp_deliveries;
 * - at an inbound text (src/messaging/replies.ts): the reply to a message
 *   sent over SMPP, queued for the credential that sent it.
 *
 * Plain database code (it also runs on the SQLite thread): no state.
 */
import { SqliteAdapter, type Transaction } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import type { Database, MessageStatus } from '../db/tables.ts';
import { insertRows, rowsText, runRaw, sizedChunks } from '../db/bulk.ts';
import { encodeGsm, encodeUcs2, DATA_CODING_GSM, DATA_CODING_UCS2 } from '../carriers/smpp/encoding.ts';

/** What the SMPP server keeps beside a submitted message (one message: one submit_sm, or the parts of one). */
export interface SmppSubmitRecord {
  systemId: string;
  registeredDelivery: number;
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destAddr: string;
  destTon: number;
  destNpi: number;
  /** Epoch ms the validity period ends; null: none given. */
  validUntil: number | null;
  /** The concatenated submit whose stored parts this message completes (src/smpp-server/parts.ts). */
  partsKey?: string | undefined;
}

/** One accepted message with its SMPP record, as the accept gives it. */
export interface SmppAccepted {
  record: SmppSubmitRecord;
  accountId: number;
  messageId: string;
  content: string;
  blocked: boolean;
  at: number;
}

/** deliver_sm parameters as stored: octet strings in base64 under the names in OCTET_FIELDS. */
export type StoredParams = Record<string, string | number>;
export const OCTET_FIELDS = ['short_message', 'message_payload'] as const;

/** The receipt's stat word and message_state (SMPP 3.4 §5.2.28) of a final status. */
const FINAL: Partial<Record<MessageStatus, { stat: string; state: number }>> = {
  DELIVERED: { stat: 'DELIVRD', state: 2 },
  UNDELIVERED: { stat: 'UNDELIV', state: 5 },
  EXPIRED: { stat: 'EXPIRED', state: 3 },
  FAILED: { stat: 'REJECTD', state: 8 },
  CANCELLED: { stat: 'DELETED', state: 4 },
  BLOCKED: { stat: 'REJECTD', state: 8 },
};

/** Marks the cancel of a message whose validity period ended (src/smpp-server/validity.ts): its receipt says EXPIRED. */
export const VALIDITY_ENDED = 'validity period ended before it was sent';

/** The stat word and message_state of a final status, null for others. */
export function finalState(status: MessageStatus, details: string | null): { stat: string; state: number } | null {
  if (status === 'CANCELLED' && details === VALIDITY_ENDED) return { stat: 'EXPIRED', state: 3 };
  return FINAL[status] ?? null;
}

/** registered_delivery bits 0-1: 1 (and the reserved 3) a receipt on any final outcome, 2 on a failure only. */
export function wantsReceipt(registeredDelivery: number, stat: string): boolean {
  const wanted = registeredDelivery & 0x03;
  return wanted === 1 || wanted === 3 || (wanted === 2 && stat !== 'DELIVRD');
}

/** The last minute formatted: receipts come many a minute. */
let lastMinute = -1;
let lastText = '';

/** YYMMDDhhmm in UTC. */
export function receiptDate(ms: number): string {
  const minute = Math.floor(ms / 60_000);
  if (minute === lastMinute) return lastText;
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  lastText = `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
  lastMinute = minute;
  return lastText;
}

interface ReceiptSource {
  messageId: string;
  submit: Pick<SmppSubmitRecord, 'sourceAddr' | 'sourceTon' | 'sourceNpi' | 'destAddr' | 'destTon' | 'destNpi'>;
  content: string;
  submittedAt: number;
  doneAt: number;
  stat: string;
  state: number;
  details: string | null;
}

/** The receipt text: `id:<id> sub:001 dlvrd:001 submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DELIVRD err:000 text:<first 20 characters>`. */
export function receiptText(r: ReceiptSource): string {
  const err = /err:\s*(\w{1,3})/i.exec(r.details ?? '')?.[1] ?? '000';
  const text = [...r.content]
    .slice(0, 20)
    .join('')
    .replace(/[^ -~]/g, '?');
  const dlvrd = r.stat === 'DELIVRD' ? '001' : '000';
  return `id:${r.messageId} sub:001 dlvrd:${dlvrd} submit date:${receiptDate(r.submittedAt)} done date:${receiptDate(r.doneAt)} stat:${r.stat} err:${err.padStart(3, '0')} text:${text}`;
}

/** deliver_sm of a receipt: from the handset to the customer's sender, esm_class 0x04, text and TLVs. */
export function receiptParams(r: ReceiptSource): StoredParams {
  return {
    source_addr_ton: r.submit.destTon,
    source_addr_npi: r.submit.destNpi,
    source_addr: r.submit.destAddr,
    dest_addr_ton: r.submit.sourceTon,
    dest_addr_npi: r.submit.sourceNpi,
    destination_addr: r.submit.sourceAddr,
    esm_class: 0x04,
    data_coding: 0,
    short_message: Buffer.from(receiptText(r), 'latin1').toString('base64'),
    receipted_message_id: r.messageId,
    message_state: r.state,
  };
}

type DeliveryRow = Omit<Database['smpp_deliveries'], 'id'>;
const DELIVERY_COLUMNS = ['account_id', 'system_id', 'kind', 'message_id', 'params', 'created_at', 'due_at', 'attempts', 'lease_owner', 'last_error'] as const;
const SUBMIT_COLUMNS = [
  'message_id',
  'account_id',
  'system_id',
  'registered_delivery',
  'source_addr',
  'source_ton',
  'source_npi',
  'dest_addr',
  'dest_ton',
  'dest_npi',
  'valid_until',
  'created_at',
] as const;

const delivery = (accountId: number, systemId: string, kind: 'receipt' | 'reply', messageId: string | null, params: StoredParams, at: number): DeliveryRow => ({
  account_id: accountId,
  system_id: systemId,
  kind,
  message_id: messageId,
  params: JSON.stringify(params),
  created_at: at,
  due_at: at,
  attempts: 0,
  lease_owner: null,
  last_error: null,
});

/** In the accept's transaction: the SMPP records of its messages; a blocked receiver's receipt; the parts a message completes. */
export async function recordSmppSubmits(tx: Transaction<Database>, dialect: Dialect, accepted: SmppAccepted[]): Promise<void> {
  if (accepted.length === 0) return;
  await insertRows(
    tx,
    dialect,
    'smpp_submits',
    SUBMIT_COLUMNS,
    accepted.map((a) => ({
      message_id: a.messageId,
      account_id: a.accountId,
      system_id: a.record.systemId,
      registered_delivery: a.record.registeredDelivery,
      source_addr: a.record.sourceAddr,
      source_ton: a.record.sourceTon,
      source_npi: a.record.sourceNpi,
      dest_addr: a.record.destAddr,
      dest_ton: a.record.destTon,
      dest_npi: a.record.destNpi,
      valid_until: a.record.validUntil,
      created_at: a.at,
    })),
  );
  const receipts: DeliveryRow[] = [];
  for (const a of accepted) {
    if (a.record.partsKey !== undefined)
      await tx.deleteFrom('smpp_parts').where('system_id', '=', a.record.systemId).where('group_key', '=', a.record.partsKey).execute();
    const final = finalState('BLOCKED', null);
    if (!a.blocked || !final || !wantsReceipt(a.record.registeredDelivery, final.stat)) continue;
    const params = receiptParams({
      messageId: a.messageId,
      submit: a.record,
      content: a.content,
      submittedAt: a.at,
      doneAt: a.at,
      ...final,
      details: 'err:001',
    });
    receipts.push(delivery(a.accountId, a.record.systemId, 'receipt', a.messageId, params, a.at));
  }
  await insertRows(tx, dialect, 'smpp_deliveries', DELIVERY_COLUMNS, receipts);
}

/** A status change as src/events/status-log.ts has it. */
export interface ChangedStatus {
  account_id: number;
  message_id: string;
  status: MessageStatus;
  details: string | null;
  at: number;
}

/** In a status change's transaction: the receipts owed to SMPP customers for the final statuses among `changes`. */
export async function queueSmppReceipts(tx: Transaction<Database>, changes: ChangedStatus[]): Promise<void> {
  let finals = changes.filter((c) => FINAL[c.status] !== undefined);
  if (finals.length === 0) return;
  // Only accounts with SMPP credentials can owe one (most have none: one small lookup instead of one per message).
  const accounts = [...new Set(finals.map((c) => Number(c.account_id)))];
  const smppAccounts = new Set<number>();
  for (let i = 0; i < accounts.length; i += 500) {
    const rows = await tx
      .selectFrom('smpp_accounts')
      .select('account_id')
      .where('account_id', 'in', accounts.slice(i, i + 500))
      .execute();
    for (const r of rows) smppAccounts.add(Number(r.account_id));
  }
  finals = finals.filter((c) => smppAccounts.has(Number(c.account_id)));
  if (finals.length === 0) return;
  const dialect: Dialect = tx.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
  const rows: DeliveryRow[] = [];
  for (const chunk of sizedChunks(finals, 512)) {
    // Set-based, its text made once per size (src/db/bulk.ts): this runs in every receipt's transaction.
    const submits = await runRaw<SubmitWithMessage>(
      tx,
      `select s.message_id, s.account_id, s.system_id, s.registered_delivery, s.source_addr, s.source_ton, s.source_npi,
        s.dest_addr, s.dest_ton, s.dest_npi, m.content, m.created_at
      from (values ${rowsText(dialect, chunk.length, 1)}) as v
      join smpp_submits s on s.message_id = v.column1
      join messages m on m.id = s.message_id
      join smpp_accounts a on a.system_id = s.system_id`,
      chunk.map((c) => c.message_id),
    );
    if (submits.length === 0) continue;
    const byId = new Map(submits.map((s) => [s.message_id, s]));
    for (const change of chunk) {
      const s = byId.get(change.message_id);
      const final = finalState(change.status, change.details);
      if (!s || !final || !wantsReceipt(Number(s.registered_delivery), final.stat)) continue;
      const submit = {
        sourceAddr: s.source_addr,
        sourceTon: Number(s.source_ton),
        sourceNpi: Number(s.source_npi),
        destAddr: s.dest_addr,
        destTon: Number(s.dest_ton),
        destNpi: Number(s.dest_npi),
      };
      const params = receiptParams({
        messageId: s.message_id,
        submit,
        content: s.content,
        submittedAt: Number(s.created_at),
        doneAt: change.at,
        ...final,
        details: change.details,
      });
      rows.push(delivery(Number(s.account_id), s.system_id, 'receipt', s.message_id, params, Date.now()));
    }
  }
  await insertRows(tx, dialect, 'smpp_deliveries', DELIVERY_COLUMNS, rows);
}

interface SubmitWithMessage {
  message_id: string;
  account_id: number | string;
  system_id: string;
  registered_delivery: number | string;
  source_addr: string;
  source_ton: number | string;
  source_npi: number | string;
  dest_addr: string;
  dest_ton: number | string;
  dest_npi: number | string;
  content: string;
  created_at: number | string;
}

/** A stored inbound text as src/messaging/replies.ts has it. */
export interface StoredInbound {
  messageId: string | null;
  sender: string;
  content: string;
  receivedAt: number;
}

/** Octets of short_message at most; longer texts go in message_payload. */
const SHORT_MESSAGE_MAX = 254;

/** In an inbound text's transaction: a reply to a message sent over SMPP, queued for the credential that sent it. */
export async function queueSmppReply(tx: Transaction<Database>, reply: StoredInbound): Promise<void> {
  if (reply.messageId === null) return;
  const s = await tx
    .selectFrom('smpp_submits as s')
    .innerJoin('smpp_accounts as a', 'a.system_id', 's.system_id')
    .selectAll('s')
    .where('s.message_id', '=', reply.messageId)
    .executeTakeFirst();
  if (!s) return;
  const gsm = encodeGsm(reply.content);
  const body = gsm ?? encodeUcs2(reply.content);
  const params: StoredParams = {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: reply.sender,
    dest_addr_ton: s.source_ton,
    dest_addr_npi: s.source_npi,
    destination_addr: s.source_addr,
    esm_class: 0,
    data_coding: gsm ? DATA_CODING_GSM : DATA_CODING_UCS2,
    [body.length <= SHORT_MESSAGE_MAX ? 'short_message' : 'message_payload']: body.toString('base64'),
  };
  await tx
    .insertInto('smpp_deliveries')
    .values(delivery(Number(s.account_id), s.system_id, 'reply', reply.messageId, params, Date.now()))
    .execute();
}
