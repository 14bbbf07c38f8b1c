import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { logStatuses } from '../events/status-log.ts';
import { DomainError, notFound } from '../common/errors.ts';
import { refund } from '../billing/ledger.ts';
import { maskedContent } from '../tokens/mask.ts';

/**
 * Cancel: every SCHEDULED or QUEUED message of the request is
 * cancelled and refunded in one transaction. The status condition in the
 * UPDATE is what makes it atomic against the dispatcher, which claims with
 * the same condition: each message is either claimed or cancelled, never both.
 */
export async function cancelRequest(db: Kysely<Database>, accountId: number, requestId: string) {
  return db.transaction().execute(async (tx) => {
    const request = await tx.selectFrom('requests').select('id').where('id', '=', requestId).where('account_id', '=', accountId).executeTakeFirst();
    if (!request) throw notFound(`Request ${requestId}`);
    const now = Date.now();
    const cancelled = await tx
      .updateTable('messages')
      // A cancelled token message never reaches the phone: its code is not kept either.
      .set({ status: 'CANCELLED', status_details: 'cancelled by the client', status_at: now, lease_owner: null, content: maskedContent('messages') })
      .where('request_id', '=', requestId)
      .where('account_id', '=', accountId)
      .where('status', 'in', ['SCHEDULED', 'QUEUED'])
      .returning(['id', 'cost'])
      .execute();
    if (cancelled.length === 0) {
      throw new DomainError('NOT_CANCELLABLE', `No message of request ${requestId} can be cancelled: they were already sent or cancelled.`);
    }
    await logStatuses(
      tx,
      cancelled.map((m) => ({ account_id: accountId, message_id: m.id, status: 'CANCELLED', details: null, at: now })),
    );
    const amount = cancelled.reduce((sum, m) => sum + m.cost, 0);
    await refund(tx, accountId, amount, requestId, 'refund: cancelled');
    return { cancelled: cancelled.length, refunded: amount };
  });
}
