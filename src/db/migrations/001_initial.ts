import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/** The first schema. One migration set for both dialects; only the identity column differs. */
export function initial(dialect: Dialect) {
  const { identity, idType } = identityColumn(dialect);

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', idType, identity)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('parent_id', 'bigint')
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('allowed_ips', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();

      await db.schema
        .createTable('routes')
        .addColumn('id', idType, identity)
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('product_name', 'text', (c) => c.notNull())
        .addColumn('product_id', 'integer', (c) => c.notNull())
        .addColumn('fare_price', 'bigint', (c) => c.notNull())
        .addColumn('reply_fare_price', 'bigint', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('account_routes')
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('route_id', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('account_routes_pk', ['account_id', 'route_id'])
        .execute();

      await db.schema
        .createTable('contact_groups')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addUniqueConstraint('contact_groups_name_uq', ['account_id', 'name'])
        .execute();

      await db.schema
        .createTable('contacts')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('group_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('phone', 'text', (c) => c.notNull())
        .addUniqueConstraint('contacts_phone_uq', ['group_id', 'phone'])
        .execute();

      await db.schema
        .createTable('blocklist')
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('phone', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('blocklist_pk', ['account_id', 'phone'])
        .execute();

      await db.schema
        .createTable('ledger')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ledger_account_idx').on('ledger').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('route_id', 'bigint', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('product', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('tag', 'text')
        .addColumn('custom', 'text')
        .addColumn('sender', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('message_count', 'integer', (c) => c.notNull())
        .addColumn('cost', 'bigint', (c) => c.notNull())
        .addColumn('schedule_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('requests_account_idx').on('requests').columns(['account_id', 'schedule_at', 'created_at']).execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('route_id', 'bigint', (c) => c.notNull())
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('receiver', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('payload', 'text')
        .addColumn('segments', 'integer', (c) => c.notNull())
        .addColumn('cost', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_details', 'text')
        .addColumn('tag', 'text')
        .addColumn('custom', 'text')
        .addColumn('sender', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('schedule_at', 'bigint', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('sent_at', 'bigint')
        .addColumn('carrier_id', 'text')
        .addColumn('status_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('messages_due_idx').on('messages').columns(['connector', 'status', 'due_at']).execute();
      await db.schema.createIndex('messages_account_idx').on('messages').columns(['account_id', 'created_at']).execute();
      await db.schema.createIndex('messages_request_idx').on('messages').columns(['request_id']).execute();
      await db.schema.createIndex('messages_receiver_idx').on('messages').columns(['receiver', 'created_at']).execute();

      await db.schema
        .createTable('carrier_ids')
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('carrier_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('carrier_ids_pk', ['connector', 'carrier_id'])
        .execute();

      await db.schema
        .createTable('pending_receipts')
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('carrier_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pending_receipts_idx').on('pending_receipts').columns(['connector', 'carrier_id']).execute();

      await db.schema
        .createTable('status_log')
        .addColumn('id', idType, identity)
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('details', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('status_log_message_idx').on('status_log').columns(['message_id']).execute();

      await db.schema
        .createTable('replies')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint')
        .addColumn('message_id', 'text')
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('recipient', 'text')
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('cost', 'bigint', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('replies_account_idx').on('replies').columns(['account_id', 'received_at']).execute();
    },
    async down(): Promise<void> {
      throw new Error('initial migration is not reversible');
    },
  };
}
