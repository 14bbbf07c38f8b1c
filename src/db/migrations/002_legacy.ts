import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * Tables of the Legacy v2 interface: context (auto-reply) rules, the
 * conversations they start (pending context per receiver, and the context
 * report), and SMS verification tokens. Same identity handling as 001.
 */
export function legacy(dialect: Dialect) {
  const { identity, idType } = identityColumn(dialect);

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('context_rules')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('positive_context', 'text', (c) => c.notNull())
        .addColumn('positive_response', 'text')
        .addColumn('negative_context', 'text', (c) => c.notNull())
        .addColumn('negative_response', 'text')
        .addColumn('default_response', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('context_rules_name_uq', ['account_id', 'name'])
        .execute();

      await db.schema
        .createTable('context_sends')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('rule_id', 'bigint', (c) => c.notNull())
        .addColumn('rule_name', 'text', (c) => c.notNull())
        .addColumn('receiver', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('last_request_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('default_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('reply_content', 'text')
        .addColumn('replied_at', 'bigint')
        .addColumn('answer_content', 'text')
        .addColumn('answer_request_id', 'text')
        .execute();
      await db.schema.createIndex('context_sends_pending_idx').on('context_sends').columns(['account_id', 'receiver', 'status']).execute();
      await db.schema.createIndex('context_sends_account_idx').on('context_sends').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('tokens')
        .addColumn('id', idType, identity)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('phone', 'text', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('enforce_phone', 'integer', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('tokens_code_idx').on('tokens').columns(['account_id', 'code_hash']).execute();
      await db.schema.createIndex('tokens_phone_idx').on('tokens').columns(['account_id', 'phone', 'created_at']).execute();
    },
    async down(): Promise<void> {
      throw new Error('legacy migration is not reversible');
    },
  };
}
