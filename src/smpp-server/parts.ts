/**
 * Parts of a long text submitted as several submit_sm (UDH or sar_* TLVs):
 * each part is stored (smpp_parts) before it is answered, all of them with
 * the id the message will have (chosen with the first part). The part that
 * completes the text makes the message: it is accepted (charged by the
 * length of the whole text) in a transaction that also removes the parts.
 * Parts of a text still incomplete after the part timeout are dropped:
 * nothing is sent or charged, and the customer gets a REJECTD receipt when
 * it asked for receipts (docs/smpp-server.md, "Long texts").
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { newId } from '../common/ids.ts';
import { receiptParams, wantsReceipt } from './records.ts';
import type { Submit } from './message.ts';

/** What the parts of one text share, kept with each part. */
export interface PartsHead {
  accountId: number;
  registeredDelivery: number;
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destAddr: string;
  destTon: number;
  destNpi: number;
  scheduleAt: number | null;
  validUntil: number | null;
}

export type StoredPart =
  | { complete: false; messageId: string }
  | {
      complete: true;
      messageId: string;
      groupKey: string;
      parts: { dataCoding: number; body: Buffer }[];
      /** The text's registered_delivery (receiptAsked). */
      registeredDelivery: number;
    };

/**
 * The receipt a text in parts asked for: that of the first part (in part
 * order) asking for one, else that of the first part. Senders split a text
 * asking for a receipt on one part only (Kannel on the first, whatever order
 * the parts arrive in); the message is one, and so is its receipt.
 */
export function receiptAsked(heads: Pick<PartsHead, 'registeredDelivery'>[]): number {
  return (heads.find((h) => (h.registeredDelivery & 0x03) !== 0) ?? heads[0])?.registeredDelivery ?? 0;
}

/** The key of a text's parts under a credential: sender, receiver, reference and count. */
export const groupKey = (submit: Submit): string => `${submit.sourceAddr}|${submit.receiver}|${submit.concat?.reference ?? 0}|${submit.concat?.total ?? 1}`;

/** Stores one part (a repeated part replaces nothing); answers the message id, and all the parts once every one is there. */
export async function storePart(db: Kysely<Database>, systemId: string, accountId: number, submit: Submit): Promise<StoredPart> {
  const concat = submit.concat;
  if (!concat) throw new Error('storePart: not a part');
  const key = groupKey(submit);
  const head: PartsHead = {
    accountId,
    registeredDelivery: submit.registeredDelivery,
    sourceAddr: submit.sourceAddr,
    sourceTon: submit.sourceTon,
    sourceNpi: submit.sourceNpi,
    destAddr: submit.destAddr,
    destTon: submit.destTon,
    destNpi: submit.destNpi,
    scheduleAt: submit.scheduleAt,
    validUntil: submit.validUntil,
  };
  return db.transaction().execute(async (tx) => {
    const stored = await tx
      .selectFrom('smpp_parts')
      .select(['seq', 'message_id', 'data_coding', 'body', 'submit'])
      .where('system_id', '=', systemId)
      .where('group_key', '=', key)
      .orderBy('seq')
      .execute();
    const messageId = stored[0]?.message_id ?? newId();
    if (!stored.some((p) => Number(p.seq) === concat.sequence)) {
      await tx
        .insertInto('smpp_parts')
        .values({
          system_id: systemId,
          group_key: key,
          message_id: messageId,
          total: concat.total,
          seq: concat.sequence,
          data_coding: submit.dataCoding,
          body: submit.body.toString('base64'),
          submit: JSON.stringify(head),
          received_at: Date.now(),
        })
        .execute();
      stored.push({
        seq: concat.sequence,
        message_id: messageId,
        data_coding: submit.dataCoding,
        body: submit.body.toString('base64'),
        submit: JSON.stringify(head),
      });
    }
    if (stored.length < concat.total) return { complete: false, messageId };
    stored.sort((a, b) => Number(a.seq) - Number(b.seq));
    const parts = stored.map((p) => ({ dataCoding: Number(p.data_coding), body: Buffer.from(p.body, 'base64') }));
    const registeredDelivery = receiptAsked(stored.map((p) => JSON.parse(p.submit) as PartsHead));
    return { complete: true, messageId, groupKey: key, parts, registeredDelivery };
  });
}

/** The stored parts' message of a credential, if `messageId` is one still incomplete (query_sm, cancel_sm). */
export async function pendingPartsOf(db: Kysely<Database>, systemId: string, messageId: string): Promise<string | null> {
  const row = await db
    .selectFrom('smpp_parts')
    .select('group_key')
    .where('system_id', '=', systemId)
    .where('message_id', '=', messageId)
    .limit(1)
    .executeTakeFirst();
  return row ? row.group_key : null;
}

/** Drops a text's stored parts (cancel_sm of an incomplete text). */
export async function dropParts(db: Kysely<Database>, systemId: string, key: string): Promise<void> {
  await db.deleteFrom('smpp_parts').where('system_id', '=', systemId).where('group_key', '=', key).execute();
}

/** Drops texts whose first part is older than `timeoutMs`, queuing a REJECTD receipt for those that asked for one; returns how many. */
export async function expireParts(db: Kysely<Database>, timeoutMs: number, now: number = Date.now()): Promise<number> {
  const old = await db
    .selectFrom('smpp_parts')
    .select(['system_id', 'group_key'])
    .where('received_at', '<', now - timeoutMs)
    .groupBy(['system_id', 'group_key'])
    .limit(500)
    .execute();
  for (const group of old) {
    await db.transaction().execute(async (tx) => {
      const parts = await tx
        .selectFrom('smpp_parts')
        .select(['message_id', 'submit', 'received_at'])
        .where('system_id', '=', group.system_id)
        .where('group_key', '=', group.group_key)
        .orderBy('seq')
        .execute();
      const first = parts[0];
      if (!first) return;
      await tx.deleteFrom('smpp_parts').where('system_id', '=', group.system_id).where('group_key', '=', group.group_key).execute();
      const head = JSON.parse(first.submit) as PartsHead;
      if (!wantsReceipt(receiptAsked(parts.map((p) => JSON.parse(p.submit) as PartsHead)), 'REJECTD')) return;
      const params = receiptParams({
        messageId: first.message_id,
        submit: head,
        content: '',
        submittedAt: Number(first.received_at),
        doneAt: now,
        stat: 'REJECTD',
        state: 8,
        details: 'err:002',
      });
      await tx
        .insertInto('smpp_deliveries')
        .values({
          account_id: head.accountId,
          system_id: group.system_id,
          kind: 'receipt',
          message_id: first.message_id,
          params: JSON.stringify(params),
          created_at: now,
          due_at: now,
          attempts: 0,
          lease_owner: null,
          last_error: null,
        })
        .execute();
    });
  }
  return old.length;
}
