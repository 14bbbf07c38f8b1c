import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * Child users and short links (docs/child-users-and-short-links.md).
 * Same identity handling as 001.
 *
 * - `child_users` holds what a reseller gives when it creates a subaccount;
 *   the subaccount itself is an `accounts` row (role CUSTOMER, parent_id =
 *   the reseller). `email_key` (the e-mail lower-cased) is unique across all
 *   child users, so the check holds under concurrent creates.
 * - `short_links.code` is unique across every account and never freed:
 *   deleting a link only sets `deleted_at`, so a code printed in an old SMS
 *   can never start pointing somewhere else.
 */
export function childrenLinks(dialect: Dialect) {
  const { identity, idType } = identityColumn(dialect);

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('child_users')
        .addColumn('account_id', 'bigint', (c) => c.primaryKey())
        .addColumn('parent_id', 'bigint', (c) => c.notNull())
        .addColumn('full_name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('email_key', 'text', (c) => c.notNull().unique())
        .addColumn('phone', 'text', (c) => c.notNull())
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('owner_full_name', 'text', (c) => c.notNull())
        .addColumn('owner_email', 'text', (c) => c.notNull())
        .addColumn('owner_phone', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('child_users_parent_idx').on('child_users').columns(['parent_id', 'account_id']).execute();

      await db.schema
        .createTable('short_links')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull().unique())
        .addColumn('destination_url', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('access_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('human_access_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('bot_access_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema.createIndex('short_links_account_idx').on('short_links').columns(['account_id', 'id']).execute();
    },
    async down(): Promise<void> {
      throw new Error('children/links migration is not reversible');
    },
  };
}
