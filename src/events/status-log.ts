import type { Transaction } from 'kysely';
import type { Database, MessageStatus } from '../db/tables.ts';
import { runRaw } from '../db/bulk.ts';
import { queueSmppReceipts } from '../smpp-server/records.ts';

export interface StatusChange {
  account_id: number;
  message_id: string;
  status: MessageStatus;
  details: string | null;
  at: number;
}

/**
 * Records status changes as events (status_log rows, which the fan-out turns
 * into webhook and legacy callback deliveries: src/events/fanout.ts), in the
 * transaction of the change itself. Only for accounts that have a
 * destination (a webhook, or a legacy status callback) when it happens: for
 * the others the row would be written, marked and never read, two writes for
 * every status change of every message. A destination added later receives
 * the changes from then on.
 */
export async function logStatuses(tx: Transaction<Database>, changes: StatusChange[]): Promise<void> {
  if (changes.length === 0) return;
  // Subscriber: delivery receipts owed to SMPP customers (src/smpp-server), in this transaction.
  await queueSmppReceipts(tx, changes);
  const listening = await listeningAccounts(tx);
  if (listening.size === 0) return;
  const rows = changes.filter((c) => listening.has(c.account_id)).map((c) => ({ message_id: c.message_id, status: c.status, details: c.details, at: c.at }));
  for (let i = 0; i < rows.length; i += 1000)
    await tx
      .insertInto('status_log')
      .values(rows.slice(i, i + 1000))
      .execute();
}

async function listeningAccounts(tx: Transaction<Database>): Promise<Set<number>> {
  const rows = await runRaw<{ account_id: number | string }>(
    tx,
    'select account_id from webhooks union select account_id from account_callbacks where status_url is not null',
    [],
  );
  return new Set(rows.map((r) => Number(r.account_id)));
}
