import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/tables.ts';
import { logStatuses } from '../events/status-log.ts';
import { chargedSegments } from '../billing/segments.ts';
import { fallbackText } from './payload.ts';
import { isRcsPayload, type RcsPayload } from '../carriers/rcs-message.ts';

/**
 * SMS fallback (docs/rcs.md "SMS fallback"): a carrier found that the
 * receiver of an RCS message has no RCS capability (a `noRcs` result). If
 * the message's route names a fallback route, the message is rewritten, in
 * the outcome transaction, as an SMS on that route: its text is
 * fallbackText(payload), it is charged at the fallback route's farePrice per
 * segment (the RCS charge refunded, both as ledger rows of the same request),
 * and it is queued again, due now, on the fallback route's connector.
 *
 * Returns false, changing nothing, when there is no fallback route or the
 * balance cannot cover what the SMS costs more than the RCS message did: the
 * caller then fails and refunds the message as for any refusal.
 *
 * The dispatcher wakes once the results of a submit with a refusal are
 * written (the same waker for every connector), so the re-queued message
 * goes out at once; otherwise its next poll takes it.
 */
export async function fallBackToSms(tx: Transaction<Database>, messageId: string, now: number): Promise<boolean> {
  // A write that changes nothing but, on PostgreSQL, locks the row (and
  // re-checks the status after a concurrent writer) until the rewrite below.
  const message = await tx
    .updateTable('messages')
    .set({ status: 'SENDING' })
    .where('id', '=', messageId)
    .where('status', '=', 'SENDING')
    .where('channel', '=', 'RCS')
    .returning(['account_id', 'route_id', 'cost', 'request_id', 'payload'])
    .executeTakeFirst();
  if (!message) return false;
  const fallback = await tx
    .selectFrom('routes as r')
    .innerJoin('routes as f', 'f.id', 'r.fallback_route_id')
    .select(['f.id', 'f.channel', 'f.connector', 'f.fare_price'])
    .where('r.id', '=', message.route_id)
    .executeTakeFirst();
  const payload = parsePayload(message.payload);
  if (fallback?.channel !== 'SMS' || !payload) return false;
  const text = fallbackText(payload);
  if (text.trim() === '') return false;

  const segments = chargedSegments(text);
  const cost = segments * fallback.fare_price;
  // The RCS charge comes back and the SMS is charged: only the difference must be covered.
  const extra = cost - message.cost;
  const charged = await tx
    .updateTable('accounts')
    .set({ balance: sql`balance - ${extra}` })
    .where('id', '=', message.account_id)
    .$if(extra > 0, (q) => q.where('balance', '>=', extra))
    .executeTakeFirst();
  if (Number(charged.numUpdatedRows) === 0) return false;
  const entry = (amount: number, reason: string) => ({ account_id: message.account_id, amount, reason, request_id: message.request_id, created_at: now });
  const ledger = [entry(message.cost, 'refund: no RCS capability, sent as SMS'), entry(-cost, 'send: SMS fallback')].filter((e) => e.amount !== 0);
  if (ledger.length) await tx.insertInto('ledger').values(ledger).execute();

  const details = `no RCS capability: sent as SMS on route ${fallback.id}`;
  await tx
    .updateTable('messages')
    .set({
      channel: 'SMS',
      route_id: Number(fallback.id),
      connector: fallback.connector,
      content: text,
      payload: null,
      segments,
      cost,
      status: 'QUEUED',
      status_details: details,
      status_at: now,
      due_at: now,
      lease_owner: null,
      attempts: 0,
    })
    .where('id', '=', messageId)
    .execute();
  await logStatuses(tx, [{ account_id: message.account_id, message_id: messageId, status: 'QUEUED', details, at: now }]);
  return true;
}

function parsePayload(json: string | null): RcsPayload | null {
  if (json === null) return null;
  try {
    const value: unknown = JSON.parse(json);
    return isRcsPayload(value) ? value : null;
  } catch {
    return null;
  }
}
