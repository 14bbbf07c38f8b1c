import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/**
 * One-time codes (src/tokens) that can be neither guessed nor read back:
 *
 * - `settings`: named values of the server shared by every process on the
 *   database. This migration creates `token_hmac_key` (32 random bytes,
 *   hex), the key of the HMAC-SHA256 a code is stored as. Migrations run
 *   once per database, so every process reads the same key.
 * - `token_guesses`: each account's budget of wrong guesses, one row per
 *   account: the start of its window and the guesses counted in it.
 * - `messages.otp`: 1 when the text ends with a one-time code; reports and
 *   events mask it, and the stored text is masked once the carrier has it.
 *
 * Existing tokens were stored as a plain SHA-256 of account id and code,
 * which anyone holding the database reverses by trying the million codes.
 * They cannot be re-keyed (the code is unknown), so they are retired: the
 * hash becomes a marker no code matches, and live ones end now (a code sent
 * before the upgrade must be asked for again). The texts of existing token
 * messages are marked and masked the same way as new ones, and the token
 * requests' texts are masked.
 */
const MASKED_TAIL = `substr(content, 1, length(content) - 6) || '******'`;

export const tokenSecrets = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into settings (name, value) values ('token_hmac_key', ${randomBytes(32).toString('hex')})`.execute(db);

    await db.schema
      .createTable('token_guesses')
      .addColumn('account_id', 'bigint', (c) => c.primaryKey())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .execute();

    const now = Date.now();
    await sql`update tokens set code_hash = 'retired', expires_at = case when expires_at > ${now} then ${now} else expires_at end`.execute(db);

    // Reports look up whether a token message's token is still live (src/tokens/mask.ts).
    await db.schema.createIndex('tokens_request_idx').on('tokens').column('request_id').execute();
    await db.schema
      .alterTable('messages')
      .addColumn('otp', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update messages set otp = 1 where request_id in (select id from requests where source = 'token')`.execute(db);
    await sql`update messages set content = ${sql.raw(MASKED_TAIL)}
      where otp = 1 and length(content) >= 6 and status not in ('SCHEDULED', 'QUEUED', 'SENDING')`.execute(db);
    await sql`update requests set content = ${sql.raw(MASKED_TAIL)} where source = 'token' and length(content) >= 6`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    // Retired hashes and masked texts stay as they are: the codes are gone.
    await db.schema.alterTable('messages').dropColumn('otp').execute();
    await db.schema.dropTable('token_guesses').execute();
    await db.schema.dropTable('settings').execute();
  },
};
