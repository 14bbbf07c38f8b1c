import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * Events (src/events): webhooks, the delivery outbox, legacy callback URLs,
 * opt-out keywords, and a `fanned_out` flag on the two event sources.
 *
 * Events are found by the flag, not by an id cursor: PostgreSQL hands out
 * identity values before commit, so rows become visible out of id order and
 * a cursor would skip the late ones. Rows that existed before this migration
 * are marked done (there were no webhooks to deliver them to). The partial
 * indexes hold only rows still to be fanned out, so they stay small.
 */
export function webhooks(dialect: Dialect) {
  const { identity, idType } = identityColumn(dialect);

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const table of ['status_log', 'replies']) {
        await db.schema
          .alterTable(table)
          .addColumn('fanned_out', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await sql`update ${sql.table(table)} set fanned_out = 1`.execute(db);
        await db.schema.createIndex(`${table}_fanout_idx`).on(table).column('id').where(sql.ref('fanned_out'), '=', sql.lit(0)).execute();
      }

      await db.schema
        .createTable('webhooks')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('topics', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhooks_account_idx').on('webhooks').columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'bigint')
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('event_ref', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('last_http_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_attempt_at', 'bigint')
        .addColumn('delivered_at', 'bigint')
        .execute();
      await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'due_at']).execute();
      await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
      await db.schema.createIndex('webhook_deliveries_account_idx').on('webhook_deliveries').columns(['account_id', 'format', 'created_at']).execute();

      await db.schema
        .createTable('account_callbacks')
        .addColumn('account_id', 'bigint', (c) => c.primaryKey())
        .addColumn('reply_url', 'text')
        .addColumn('status_url', 'text')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('optout_keywords')
        .addColumn('account_id', 'bigint', (c) => c.primaryKey())
        .addColumn('keywords', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(): Promise<void> {
      throw new Error('webhooks migration is not reversible');
    },
  };
}
