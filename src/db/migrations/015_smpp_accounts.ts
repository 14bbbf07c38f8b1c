import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * The gateway's SMPP server (src/smpp-server, docs/smpp-server.md):
 *
 * - `smpp_accounts`: the SMPP credentials of customer accounts: `system_id`
 *   (unique), the scrypt hash of the password, the route its submits use,
 *   an optional IP allow-list (JSON array of CIDRs), the window (deliver_sm
 *   unanswered by the customer, and submit_sm not answered yet by the
 *   gateway), the submit rate of one bind (submit_sm a second, 0 = none) and
 *   how many binds may be open at once.
 * - `smpp_submits`: what the server keeps beside each message submitted over
 *   SMPP (written in the accept's transaction): the credential, whether and
 *   which receipt the customer asked for (registered_delivery), the
 *   addresses as they came, and the validity period's end.
 * - `smpp_parts`: parts of a concatenated submit kept until the last one
 *   arrives (each part is answered once it is stored here); the message id
 *   is chosen with the first part.
 * - `smpp_deliveries`: the outbox of deliver_sm to customers (receipts and
 *   replies), kept until a receiver or transceiver bind of the credential
 *   answers deliver_sm_resp; `due_at` is the next attempt, or while sent the
 *   lease of the process that sent it.
 */
export function smppAccounts(dialect: Dialect) {
  const { idType, identity } = identityColumn(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('smpp_accounts')
        .addColumn('system_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('route_id', 'bigint', (c) => c.notNull().references('routes.id'))
        .addColumn('allowed_ips', 'text')
        .addColumn('window_size', 'integer', (c) => c.notNull())
        .addColumn('submits_per_second', 'integer', (c) => c.notNull())
        .addColumn('max_binds', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('smpp_accounts_account_idx').on('smpp_accounts').column('account_id').execute();

      await db.schema
        .createTable('smpp_submits')
        .addColumn('message_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('system_id', 'text', (c) => c.notNull())
        .addColumn('registered_delivery', 'integer', (c) => c.notNull())
        .addColumn('source_addr', 'text', (c) => c.notNull())
        .addColumn('source_ton', 'integer', (c) => c.notNull())
        .addColumn('source_npi', 'integer', (c) => c.notNull())
        .addColumn('dest_addr', 'text', (c) => c.notNull())
        .addColumn('dest_ton', 'integer', (c) => c.notNull())
        .addColumn('dest_npi', 'integer', (c) => c.notNull())
        .addColumn('valid_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // The sweep of messages past their validity reads only those that have one.
      await db.schema.createIndex('smpp_submits_valid_idx').on('smpp_submits').column('valid_until').execute();
      // Records of messages the retention deleted are looked for among the old ones.
      await db.schema.createIndex('smpp_submits_created_idx').on('smpp_submits').column('created_at').execute();

      await db.schema
        .createTable('smpp_parts')
        .addColumn('id', idType, identity)
        .addColumn('system_id', 'text', (c) => c.notNull())
        .addColumn('group_key', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data_coding', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('submit', 'text', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('smpp_parts_group_idx').on('smpp_parts').columns(['system_id', 'group_key', 'seq']).unique().execute();

      await db.schema
        .createTable('smpp_deliveries')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('system_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text')
        .addColumn('params', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('last_error', 'text')
        .execute();
      await db.schema.createIndex('smpp_deliveries_system_idx').on('smpp_deliveries').columns(['system_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('smpp_deliveries').execute();
      await db.schema.dropTable('smpp_parts').execute();
      await db.schema.dropTable('smpp_submits').execute();
      await db.schema.dropTable('smpp_accounts').execute();
    },
  };
}
