import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Inbound } from '../carriers/carrier.ts';
import { addLedgerEntry } from '../billing/ledger.ts';
import { queueSmppReply } from '../smpp-server/records.ts';
import { storableText } from '../common/text.ts';

export interface StoredReply {
  id: number;
  accountId: number | null;
  messageId: string | null;
  sender: string;
  content: string;
  receivedAt: number;
}

/**
 * A mobile-originated text is matched to the latest message any account sent
 * to that number, stored for that account's received report, and charged
 * the route's replyFarePrice. A text nobody sent to is kept unmatched.
 */
export async function recordInbound(db: Kysely<Database>, connector: string, inbound: Inbound): Promise<StoredReply> {
  const sender = inbound.from.replace(/^\+/, '');
  // A carrier may send what no store keeps as sent (src/common/text.ts): the same text on every database.
  const content = storableText(inbound.text);
  return db.transaction().execute(async (tx) => {
    const last = await tx
      .selectFrom('messages')
      .innerJoin('routes', 'routes.id', 'messages.route_id')
      .select(['messages.id', 'messages.account_id', 'messages.request_id', 'routes.reply_fare_price'])
      .where('messages.receiver', '=', sender)
      .where('messages.status', 'not in', ['BLOCKED', 'CANCELLED', 'SCHEDULED', 'QUEUED'])
      .orderBy('messages.created_at', 'desc')
      .orderBy('messages.id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const cost = last ? last.reply_fare_price : 0;
    const receivedAt = inbound.at.getTime();
    const row = await tx
      .insertInto('replies')
      .values({
        account_id: last ? last.account_id : null,
        message_id: last ? last.id : null,
        connector,
        sender,
        recipient: inbound.to,
        content,
        cost,
        received_at: receivedAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (last && cost > 0) await addLedgerEntry(tx, last.account_id, -cost, 'reply', last.request_id);
    // Subscriber: a reply to a message sent over SMPP goes to its customer as deliver_sm (src/smpp-server), in this transaction.
    await queueSmppReply(tx, { messageId: last ? last.id : null, sender, content, receivedAt });
    return { id: Number(row.id), accountId: last ? last.account_id : null, messageId: last ? last.id : null, sender, content, receivedAt };
  });
}
