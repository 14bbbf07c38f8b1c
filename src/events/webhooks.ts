import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import type { Executor } from '../db/executor.ts';
import { DomainError, notFound, validation } from '../common/errors.ts';
import { SafeFetchError } from '../net/policy.ts';
import { newSecret } from './signing.ts';
import { TOPICS, eventsDb, type DeliveryRow, type EventTables, type Topic, type WebhookRow } from './tables.ts';

/**
 * Webhooks of the gateway interface (docs/webhooks.md): an
 * account registers URLs for the topics it wants; every event of those
 * topics is delivered to each, signed with the webhook's secret.
 */

/** Registration-time URL check (scheme, port, literal addresses): SafeFetcher.check. */
export type UrlCheck = (url: string) => URL;

export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

export interface PublicWebhook {
  id: number;
  url: string;
  topics: Topic[];
  createdAt: string;
}

export interface PublicDelivery {
  id: string;
  eventType: string;
  status: string;
  attempts: number;
  lastHttpStatus: number | null;
  lastError: string | null;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(Number(ms)).toISOString());

export const topicsOf = (json: string): Topic[] => {
  const value: unknown = JSON.parse(json);
  return Array.isArray(value) ? TOPICS.filter((t) => value.includes(t)) : [];
};

export const publicWebhook = (row: WebhookRow): PublicWebhook => ({
  id: Number(row.id),
  url: row.url,
  topics: topicsOf(row.topics),
  createdAt: new Date(Number(row.created_at)).toISOString(),
});

export function publicDelivery(row: DeliveryRow): PublicDelivery {
  const waiting = row.status === 'PENDING' || row.status === 'DELIVERING';
  return {
    id: row.id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastHttpStatus: row.last_http_status,
    lastError: row.last_error,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastAttemptAt: iso(row.last_attempt_at),
    nextAttemptAt: waiting ? iso(row.due_at) : null,
    deliveredAt: iso(row.delivered_at),
  };
}

/** Checks a customer-given callback URL; a refusal is a 400 naming the field. */
export function checkedUrl(check: UrlCheck, field: string, url: string): string {
  try {
    return check(url.trim()).toString();
  } catch (err) {
    if (err instanceof SafeFetchError) throw validation([`${field}: ${err.message}`]);
    throw err;
  }
}

/** Registers a webhook; the answer is the only place the secret is shown. */
export async function createWebhook(
  db: Executor,
  check: UrlCheck,
  accountId: number,
  input: { url: string; topics: string[] },
): Promise<PublicWebhook & { secret: string }> {
  const url = checkedUrl(check, 'url', input.url);
  const topics = TOPICS.filter((t) => input.topics.includes(t));
  if (topics.length === 0) throw validation([`topics: give at least one of ${TOPICS.join(', ')}`]);
  const edb = eventsDb(db);
  const count = await edb.selectFrom('webhooks').select(sql<number | string>`count(*)`.as('n')).where('account_id', '=', accountId).executeTakeFirst();
  if (Number(count?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT)
    throw validation([`url: an account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first`]);
  const secret = newSecret();
  const row = await edb
    .insertInto('webhooks')
    .values({ account_id: accountId, url, topics: JSON.stringify(topics), secret, created_at: Date.now() })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...publicWebhook(row), secret };
}

export async function listWebhooks(db: Executor, accountId: number): Promise<PublicWebhook[]> {
  const rows = await eventsDb(db).selectFrom('webhooks').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map(publicWebhook);
}

async function ownWebhook(db: Executor, accountId: number, id: number): Promise<WebhookRow> {
  const row = await eventsDb(db).selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  if (!row) throw notFound(`Webhook ${id}`);
  return row;
}

/** Deletes a webhook with its delivery log; deliveries not made yet are dropped. */
export async function deleteWebhook(db: Executor, dialect: Dialect, accountId: number, id: number): Promise<PublicWebhook> {
  const row = await ownWebhook(db, accountId, id);
  const edb = eventsDb(db);
  await edb.deleteFrom('webhooks').where('id', '=', id).where('account_id', '=', accountId).execute();
  const deliveries = edb.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).where('account_id', '=', accountId);
  await lockDeliveries(dialect, deliveries);
  await edb.deleteFrom('webhook_deliveries').where('id', 'in', deliveries).execute();
  return publicWebhook(row);
}

/**
 * Locks deliveries in id order (PostgreSQL; SQLite runs one transaction at a
 * time). Every transaction that writes several deliveries (deleting a
 * webhook, recording a round of attempts) takes their locks this way first,
 * so two of them never wait on each other in a circle.
 */
export async function lockDeliveries(dialect: Dialect, ids: SelectQueryBuilder<Database & EventTables, 'webhook_deliveries', { id: string }>): Promise<void> {
  if (dialect === 'postgres') await ids.orderBy('id').forUpdate().execute();
}

/** The delivery log of one webhook, newest first. */
export async function listDeliveries(db: Executor, accountId: number, webhookId: number, page: { skip: number; limit: number }) {
  await ownWebhook(db, accountId, webhookId);
  const edb = eventsDb(db);
  const base = edb.selectFrom('webhook_deliveries').where('account_id', '=', accountId).where('webhook_id', '=', webhookId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.skip).limit(page.limit).execute(),
    base.select(sql<number | string>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { records: rows.map(publicDelivery), total: Number(total?.n ?? 0) };
}

/**
 * Sends a FAILED delivery again: due now, its retry schedule started over
 * (the delays and the 24-hour limit count from now), its attempts kept.
 * Another account's webhook or delivery is 404; a delivery in any other
 * status is a CONFLICT naming it. The caller wakes the deliverer.
 */
export async function resendDelivery(db: Executor, accountId: number, webhookId: number, deliveryId: string): Promise<PublicDelivery> {
  await ownWebhook(db, accountId, webhookId);
  const edb = eventsDb(db);
  const row = await edb
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('account_id', '=', accountId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
  if (!row) throw notFound(`Delivery ${deliveryId} of webhook ${webhookId}`);
  if (row.status !== 'FAILED') throw new DomainError('CONFLICT', `Delivery ${deliveryId} is ${row.status}: only a FAILED delivery can be sent again.`);
  const now = Date.now();
  const updated = await edb
    .updateTable('webhook_deliveries')
    .set({ status: 'PENDING', due_at: now, lease_owner: null, schedule_from: now, schedule_attempts: row.attempts })
    .where('id', '=', deliveryId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'FAILED')
    .returningAll()
    .executeTakeFirst();
  // Another request sent it again in between: it is no longer FAILED.
  if (!updated) throw new DomainError('CONFLICT', `Delivery ${deliveryId} is no longer FAILED: only a FAILED delivery can be sent again.`);
  return publicDelivery(updated);
}
