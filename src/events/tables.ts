import type { Generated, Kysely, Selectable } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';

/**
 * Tables of events (migration 004): webhooks, the delivery outbox (one row
 * per event and destination, its attempts and outcome), legacy callback
 * URLs and opt-out keywords per account, and the `fanned_out` flag that
 * marks status_log and replies rows already turned into deliveries.
 */

export const TOPICS = ['message.status', 'message.reply'] as const;
export type Topic = (typeof TOPICS)[number];

export interface WebhooksTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  /** JSON array of topics. */
  topics: string;
  /** `whsec_<base64>`: the HMAC key. Kept as is: signing needs the key itself. */
  secret: string;
  created_at: number;
}

/** `standard`: signed `{type, timestamp, data}` to a webhook; `legacy`: a Legacy v2 panel callback. */
export type DeliveryFormat = 'standard' | 'legacy';
export type DeliveryStatus = 'PENDING' | 'DELIVERING' | 'DELIVERED' | 'FAILED';

export interface WebhookDeliveriesTable {
  /** UUIDv7; sent as `webhook-id`, the same on every attempt so receivers can de-duplicate. */
  id: string;
  account_id: number;
  format: DeliveryFormat;
  /** The webhook; null for legacy callbacks. */
  webhook_id: number | null;
  url: string;
  event_type: Topic;
  /** Where the event came from, e.g. `status_log:42` or `replies:7`. */
  event_ref: string;
  /** The exact body posted on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** Next attempt, or lease expiry while DELIVERING. */
  due_at: number;
  lease_owner: string | null;
  last_http_status: number | null;
  last_error: string | null;
  created_at: number;
  last_attempt_at: number | null;
  delivered_at: number | null;
  /** When the retry schedule restarted after a resend (migration 017); null: at `created_at`. */
  schedule_from: number | null;
  /** Attempts made before that restart. */
  schedule_attempts: Generated<number>;
}

export interface AccountCallbacksTable {
  account_id: number;
  reply_url: string | null;
  status_url: string | null;
  updated_at: number;
}

export interface OptOutKeywordsTable {
  account_id: number;
  /** JSON array of keywords as the operator gave them. */
  keywords: string;
  updated_at: number;
}

export type EventTables = {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  account_callbacks: AccountCallbacksTable;
  optout_keywords: OptOutKeywordsTable;
  status_log: { fanned_out: Generated<number> };
  replies: { fanned_out: Generated<number> };
};

export type EventsDb = Kysely<Database & EventTables>;

/** The event tables live beside the core schema (migration 004). */
export const eventsDb = (db: Executor): EventsDb => (db as Kysely<Database>).withTables<EventTables>();

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
