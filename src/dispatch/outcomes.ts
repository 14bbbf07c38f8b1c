import { sql, type Transaction } from 'kysely';
import type { Database, MessageStatus } from '../db/tables.ts';
import type { Receipt, SubmitResult } from '../carriers/carrier.ts';

/** One thing that changes a message after it was accepted. */
export type Outcome =
  | { kind: 'result'; connector: string; messageId: string; result: SubmitResult; attempts: number }
  | { kind: 'receipt'; connector: string; receipt: Receipt };

const FINAL_FAILURES: MessageStatus[] = ['UNDELIVERED', 'EXPIRED', 'FAILED'];

/** Seconds before a message whose send must be retried is due again. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.min(attempts, 6));
}

/** Writes a batch of submit results and receipts in one transaction. */
export async function writeOutcomes(tx: Transaction<Database>, outcomes: Outcome[]): Promise<void[]> {
  for (const o of outcomes) {
    if (o.kind === 'result') await writeResult(tx, o.connector, o.messageId, o.result, o.attempts);
    else await writeReceipt(tx, o.connector, o.receipt);
  }
  return outcomes.map(() => undefined);
}

async function writeResult(tx: Transaction<Database>, connector: string, messageId: string, result: SubmitResult, attempts: number) {
  const now = Date.now();
  if (result.ok) {
    const updated = await tx
      .updateTable('messages')
      .set({ status: 'SENT', carrier_id: result.carrierIds[0] ?? null, sent_at: now, status_at: now, status_details: null, lease_owner: null })
      .where('id', '=', messageId)
      .where('status', '=', 'SENDING')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return;
    await tx.insertInto('status_log').values({ message_id: messageId, status: 'SENT', details: null, at: now }).execute();
    if (result.carrierIds.length) {
      await tx
        .insertInto('carrier_ids')
        .values(result.carrierIds.map((carrier_id) => ({ connector, carrier_id, message_id: messageId })))
        .onConflict((oc) => oc.columns(['connector', 'carrier_id']).doUpdateSet({ message_id: messageId }))
        .execute();
      // Receipts that overtook the submit response wait here (SMPP allows it).
      const early = await tx
        .selectFrom('pending_receipts')
        .selectAll()
        .where('connector', '=', connector)
        .where('carrier_id', 'in', result.carrierIds)
        .orderBy('received_at')
        .execute();
      if (early.length) {
        await tx.deleteFrom('pending_receipts').where('connector', '=', connector).where('carrier_id', 'in', result.carrierIds).execute();
        for (const r of early) await applyReceipt(tx, messageId, r.status as MessageStatus, r.details, r.received_at);
      }
    }
  } else if (result.retry) {
    await tx
      .updateTable('messages')
      .set({ status: 'QUEUED', due_at: now + retryDelayMs(attempts), status_at: now, status_details: result.error, lease_owner: null })
      .where('id', '=', messageId)
      .where('status', '=', 'SENDING')
      .execute();
  } else {
    const row = await tx
      .updateTable('messages')
      .set({ status: 'FAILED', status_details: result.error, status_at: now, lease_owner: null })
      .where('id', '=', messageId)
      .where('status', '=', 'SENDING')
      .returning(['account_id', 'cost', 'request_id'])
      .executeTakeFirst();
    if (!row) return;
    await tx.insertInto('status_log').values({ message_id: messageId, status: 'FAILED', details: result.error, at: now }).execute();
    await refund(tx, row.account_id, row.cost, row.request_id, 'refund: rejected by carrier');
  }
}

export async function refund(tx: Transaction<Database>, accountId: number, amount: number, requestId: string, reason: string) {
  if (amount <= 0) return;
  await tx.updateTable('accounts').set({ balance: sql`balance + ${amount}` }).where('id', '=', accountId).execute();
  await tx.insertInto('ledger').values({ account_id: accountId, amount, reason, request_id: requestId, created_at: Date.now() }).execute();
}

async function writeReceipt(tx: Transaction<Database>, connector: string, receipt: Receipt) {
  const link = await tx
    .selectFrom('carrier_ids')
    .select('message_id')
    .where('connector', '=', connector)
    .where('carrier_id', '=', receipt.carrierId)
    .executeTakeFirst();
  if (!link) {
    await tx
      .insertInto('pending_receipts')
      .values({ connector, carrier_id: receipt.carrierId, status: receipt.status, details: receipt.details, received_at: receipt.at.getTime() })
      .execute();
    return;
  }
  await applyReceipt(tx, link.message_id, receipt.status, receipt.details, receipt.at.getTime());
}

/**
 * Receipts move a message forward only: SENT -> final. For a message sent in
 * parts, a failed part outweighs a delivered one; a final failure is kept.
 */
async function applyReceipt(tx: Transaction<Database>, messageId: string, status: MessageStatus, details: string, at: number) {
  if (status === 'SENT') return;
  const allowedFrom: MessageStatus[] = FINAL_FAILURES.includes(status) ? ['SENT', 'DELIVERED'] : ['SENT'];
  const updated = await tx
    .updateTable('messages')
    .set({ status, status_details: details, status_at: at })
    .where('id', '=', messageId)
    .where('status', 'in', allowedFrom)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) {
    await tx.insertInto('status_log').values({ message_id: messageId, status, details, at }).execute();
  }
}
