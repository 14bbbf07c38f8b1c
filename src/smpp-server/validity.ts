/**
 * validity_period: a message submitted over SMPP that is still waiting in
 * the outbox (scheduled, or queued and not handed to a carrier yet) when
 * its validity period ends is taken out: cancelled and refunded in one
 * transaction, with the same status condition as a cancel (so it is either
 * claimed by the dispatcher or taken out, never both). Its receipt, if the
 * customer asked for receipts, says EXPIRED. A message a carrier already
 * has is left to the carrier.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { logStatuses } from '../events/status-log.ts';
import { refund } from '../billing/ledger.ts';
import { VALIDITY_ENDED } from './records.ts';

/** Takes out up to 500 waiting messages whose validity has ended; returns how many. */
export async function expireWaiting(db: Kysely<Database>, now: number = Date.now()): Promise<number> {
  const due = await db
    .selectFrom('smpp_submits as s')
    .innerJoin('messages as m', 'm.id', 's.message_id')
    .select(['m.id'])
    .where('s.valid_until', '<=', now)
    .where('m.status', 'in', ['SCHEDULED', 'QUEUED'])
    .limit(500)
    .execute();
  if (due.length === 0) return 0;
  return db.transaction().execute(async (tx) => {
    const taken = await tx
      .updateTable('messages')
      .set({ status: 'CANCELLED', status_details: VALIDITY_ENDED, status_at: now, lease_owner: null })
      .where(
        'id',
        'in',
        due.map((d) => d.id),
      )
      .where('status', 'in', ['SCHEDULED', 'QUEUED'])
      .returning(['id', 'account_id', 'cost', 'request_id'])
      .execute();
    await logStatuses(
      tx,
      taken.map((m) => ({ account_id: Number(m.account_id), message_id: m.id, status: 'CANCELLED' as const, details: VALIDITY_ENDED, at: now })),
    );
    // Accounts in id order, as the accept batch locks them: no deadlock with it on PostgreSQL.
    taken.sort((a, b) => Number(a.account_id) - Number(b.account_id));
    for (const m of taken) await refund(tx, Number(m.account_id), Number(m.cost), m.request_id, 'refund: validity period ended');
    return taken.length;
  });
}
