import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * The browser panel's sign-in (src/panel, docs/panel.md):
 *
 * - `panel_users`: who signs in with an e-mail and a password. `account_id`
 *   is the account whose panel the user opens; null: an operator (the
 *   operator console). `email_key` (lower-cased) is unique.
 * - `panel_sessions`: one row per signed-in browser, found by the SHA-256
 *   of the session id its cookie holds (the id itself is never stored), so
 *   every process on the database sees the same sessions and a sign-out or
 *   password change ends them everywhere. A session belongs to a panel user
 *   (`user_id`), a child user (`child_account_id`: its owner credential) or
 *   the operator token (`operator_token_sha256`: the SHA-256 of the token
 *   it was opened with, so a new operator token ends such sessions).
 * - `panel_sign_in_failures`: failed sign-ins per e-mail (known or not, so
 *   a lock tells nothing about who exists): the window's start, the count,
 *   and until when the e-mail is locked.
 * - `settings.panel_cookie_secret`: the key the session cookie is signed
 *   with, shared by every process on the database.
 */
export function panelUsers(dialect: Dialect) {
  const { idType, identity } = identityColumn(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('panel_users')
        .addColumn('id', idType, identity)
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('email_key', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('account_id', 'bigint', (c) => c.references('accounts.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('disabled_at', 'bigint')
        .execute();
      await db.schema.createIndex('panel_users_account_idx').on('panel_users').column('account_id').execute();

      await db.schema
        .createTable('panel_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.references('panel_users.id').onDelete('cascade'))
        .addColumn('child_account_id', 'bigint', (c) => c.references('accounts.id'))
        .addColumn('operator_token_sha256', 'text')
        .addColumn('csrf_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('panel_sessions_user_idx').on('panel_sessions').column('user_id').execute();
      await db.schema.createIndex('panel_sessions_child_idx').on('panel_sessions').column('child_account_id').execute();

      await db.schema
        .createTable('panel_sign_in_failures')
        .addColumn('email_key', 'text', (c) => c.primaryKey())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('locked_until', 'bigint')
        .execute();

      await sql`insert into settings (name, value) values ('panel_cookie_secret', ${randomBytes(32).toString('hex')})`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`delete from settings where name = 'panel_cookie_secret'`.execute(db);
      await db.schema.dropTable('panel_sign_in_failures').execute();
      await db.schema.dropTable('panel_sessions').execute();
      await db.schema.dropTable('panel_users').execute();
    },
  };
}
