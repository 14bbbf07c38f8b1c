import { sql, type Insertable, type Kysely } from 'kysely';
import { newId } from '../common/ids.ts';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import { eventsDb, type DeliveryFormat, type EventsDb, type Topic, type WebhookDeliveriesTable } from './tables.ts';
import { topicsOf } from './webhooks.ts';
import { maskCode } from '../tokens/mask.ts';
import { legacyReplyBody, legacyStatusBody, replyBody, statusBody, type ReplyEvent, type StatusEvent } from './payloads.ts';

/**
 * Fan-out: turns new events into deliveries. The events are the rows the
 * use cases already write in the same transaction as the change itself
 * (status_log for status changes, replies for received texts), so no event
 * is lost between a change and its webhook. One transaction claims a batch
 * of rows not fanned out yet (FOR UPDATE SKIP LOCKED on PostgreSQL, so
 * several processes share the work), inserts one delivery per destination,
 * and marks the rows: each event becomes deliveries exactly once.
 */

interface Target {
  format: DeliveryFormat;
  webhookId: number | null;
  url: string;
  timezone: string;
}

type NewDelivery = Insertable<WebhookDeliveriesTable>;

/** Fans out up to `limit` status changes and `limit` replies; returns how many rows were claimed. */
export async function fanOut(db: Kysely<Database>, dialect: Dialect, limit: number): Promise<{ statuses: number; replies: number }> {
  return { statuses: await fanOutStatuses(db, dialect, limit), replies: await fanOutReplies(db, dialect, limit) };
}

// `fanned_out = 0` is written as a literal so that SQLite (and PostgreSQL's
// generic plans) can use the partial index, which a bound parameter prevents.
const UNPROCESSED = sql.lit(0);

async function hasUnprocessed(db: EventsDb, table: 'status_log' | 'replies'): Promise<boolean> {
  return (await db.selectFrom(table).select('id').where('fanned_out', '=', UNPROCESSED).limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Most gateways have few or no destinations: when no account has any, a
 * batch is only marked, without reading it back or looking up its messages.
 */
async function anyDestination(db: EventsDb): Promise<boolean> {
  const hook = await db.selectFrom('webhooks').select('id').limit(1).executeTakeFirst();
  return hook !== undefined || (await db.selectFrom('account_callbacks').select('account_id').limit(1).executeTakeFirst()) !== undefined;
}

async function fanOutStatuses(db: Kysely<Database>, dialect: Dialect, limit: number): Promise<number> {
  if (!(await hasUnprocessed(eventsDb(db), 'status_log'))) return 0;
  return db.transaction().execute(async (tx) => {
    const t = eventsDb(tx);
    const batch = t.selectFrom('status_log').select('id').where('fanned_out', '=', UNPROCESSED).orderBy('id').limit(limit);
    const claim = dialect === 'postgres' ? batch.forUpdate().skipLocked() : batch;
    if (!(await anyDestination(t)))
      return Number((await t.updateTable('status_log').set({ fanned_out: 1 }).where('id', 'in', claim).executeTakeFirst()).numUpdatedRows);
    const rows = await t
      .updateTable('status_log')
      .set({ fanned_out: 1 })
      .where('id', 'in', claim)
      .returning(['id', 'message_id', 'status', 'details', 'at'])
      .execute();
    if (rows.length === 0) return 0;
    const messages = new Map<
      string,
      { account_id: number; request_id: string; receiver: string; custom: string | null; tag: string | null; sender: string | null }
    >();
    for (const ids of chunks([...new Set(rows.map((r) => r.message_id))])) {
      const found = await t
        .selectFrom('messages')
        .select(['id', 'account_id', 'request_id', 'receiver', 'custom', 'tag', 'sender'])
        .where('id', 'in', ids)
        .execute();
      for (const m of found) messages.set(m.id, { ...m, account_id: Number(m.account_id) });
    }
    const targets = await targetsFor(t, [...new Set([...messages.values()].map((m) => m.account_id))], 'message.status');
    const deliveries: NewDelivery[] = [];
    for (const row of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
      const m = messages.get(row.message_id);
      if (!m) continue;
      const event: StatusEvent = {
        messageId: row.message_id,
        requestId: m.request_id,
        receiver: m.receiver,
        status: row.status,
        statusDetails: row.details,
        custom: m.custom,
        tag: m.tag,
        sender: m.sender,
        at: Number(row.at),
      };
      for (const target of targets.get(m.account_id) ?? []) {
        const body = target.format === 'standard' ? statusBody(event) : legacyStatusBody(event);
        deliveries.push(delivery(m.account_id, target, 'message.status', `status_log:${row.id}`, body));
      }
    }
    for (const part of chunks(deliveries, 500)) await t.insertInto('webhook_deliveries').values(part).execute();
    return rows.length;
  });
}

async function fanOutReplies(db: Kysely<Database>, dialect: Dialect, limit: number): Promise<number> {
  if (!(await hasUnprocessed(eventsDb(db), 'replies'))) return 0;
  return db.transaction().execute(async (tx) => {
    const t = eventsDb(tx);
    const batch = t.selectFrom('replies').select('id').where('fanned_out', '=', UNPROCESSED).orderBy('id').limit(limit);
    const claim = dialect === 'postgres' ? batch.forUpdate().skipLocked() : batch;
    if (!(await anyDestination(t)))
      return Number((await t.updateTable('replies').set({ fanned_out: 1 }).where('id', 'in', claim).executeTakeFirst()).numUpdatedRows);
    const rows = await t
      .updateTable('replies')
      .set({ fanned_out: 1 })
      .where('id', 'in', claim)
      .returning(['id', 'account_id', 'message_id', 'sender', 'content', 'received_at'])
      .execute();
    // Texts nobody sent to have no account: marked, delivered nowhere.
    const owned = rows.filter((r): r is typeof r & { account_id: number } => r.account_id !== null);
    if (owned.length === 0) return rows.length;
    const messageIds = [...new Set(owned.map((r) => r.message_id).filter((id): id is string => id !== null))];
    const messages = new Map<
      string,
      {
        account_id: number;
        request_id: string;
        receiver: string;
        content: string;
        custom: string | null;
        tag: string | null;
        sender: string | null;
        sent_at: number | null;
      }
    >();
    for (const ids of chunks(messageIds)) {
      const found = await t
        .selectFrom('messages')
        .select(['id', 'account_id', 'request_id', 'receiver', 'content', 'otp', 'custom', 'tag', 'sender', 'sent_at'])
        .where('id', 'in', ids)
        .execute();
      // A one-time code is never in an event (src/tokens/mask.ts).
      for (const { otp, ...m } of found) messages.set(m.id, { ...m, account_id: Number(m.account_id), content: otp === 1 ? maskCode(m.content) : m.content });
    }
    const targets = await targetsFor(t, [...new Set(owned.map((r) => Number(r.account_id)))], 'message.reply');
    const deliveries: NewDelivery[] = [];
    for (const row of owned.sort((a, b) => Number(a.id) - Number(b.id))) {
      const accountId = Number(row.account_id);
      const m = row.message_id === null ? undefined : messages.get(row.message_id);
      const event: ReplyEvent = {
        sender: row.sender,
        content: row.content,
        receivedAt: Number(row.received_at),
        message:
          m && m.account_id === accountId
            ? {
                id: row.message_id ?? '',
                requestId: m.request_id,
                receiver: m.receiver,
                content: m.content,
                custom: m.custom,
                tag: m.tag,
                sender: m.sender,
                sentAt: m.sent_at,
              }
            : null,
      };
      for (const target of targets.get(accountId) ?? []) {
        const body = target.format === 'standard' ? replyBody(event) : legacyReplyBody(event, target.timezone);
        deliveries.push(delivery(accountId, target, 'message.reply', `replies:${row.id}`, body));
      }
    }
    for (const part of chunks(deliveries, 500)) await t.insertInto('webhook_deliveries').values(part).execute();
    return rows.length;
  });
}

/** Where the events of a topic go, per account: its webhooks for the topic, and its legacy callback. */
async function targetsFor(db: EventsDb, accountIds: number[], topic: Topic): Promise<Map<number, Target[]>> {
  const out = new Map<number, Target[]>();
  const add = (accountId: number, target: Target) => out.set(accountId, [...(out.get(accountId) ?? []), target]);
  for (const ids of chunks(accountIds)) {
    const hooks = await db.selectFrom('webhooks').select(['id', 'account_id', 'url', 'topics']).where('account_id', 'in', ids).orderBy('id').execute();
    for (const h of hooks) {
      if (topicsOf(h.topics).includes(topic)) add(Number(h.account_id), { format: 'standard', webhookId: Number(h.id), url: h.url, timezone: 'UTC' });
    }
    const callbacks = await db
      .selectFrom('account_callbacks')
      .innerJoin('accounts', 'accounts.id', 'account_callbacks.account_id')
      .select(['account_callbacks.account_id', 'account_callbacks.reply_url', 'account_callbacks.status_url', 'accounts.timezone'])
      .where('account_callbacks.account_id', 'in', ids)
      .execute();
    for (const c of callbacks) {
      const url = topic === 'message.reply' ? c.reply_url : c.status_url;
      if (url) add(Number(c.account_id), { format: 'legacy', webhookId: null, url, timezone: c.timezone });
    }
  }
  return out;
}

function delivery(accountId: number, target: Target, eventType: Topic, eventRef: string, body: string): NewDelivery {
  const now = Date.now();
  return {
    id: newId(),
    account_id: accountId,
    format: target.format,
    webhook_id: target.webhookId,
    url: target.url,
    event_type: eventType,
    event_ref: eventRef,
    body,
    status: 'PENDING',
    attempts: 0,
    due_at: now,
    lease_owner: null,
    last_http_status: null,
    last_error: null,
    created_at: now,
    last_attempt_at: null,
    delivered_at: null,
  };
}

function chunks<T>(items: T[], size = 1000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
