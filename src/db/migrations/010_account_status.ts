import type { Kysely } from 'kysely';

/**
 * What the operator sees of accounts and keys (docs/operator.md):
 *
 * - `accounts.deactivated_at`: when the operator deactivated the account
 *   (`active` = 0), null while it is active. `active` itself exists since
 *   the first schema.
 * - `api_keys.hint`: the last 4 characters of the key, so that a listing
 *   can tell keys apart without the secret (a key is stored only as its
 *   SHA-256). Keys issued before this migration have none: their text is
 *   not known.
 */
export const accountStatus = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('deactivated_at', 'bigint').execute();
    await db.schema.alterTable('api_keys').addColumn('hint', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('api_keys').dropColumn('hint').execute();
    await db.schema.alterTable('accounts').dropColumn('deactivated_at').execute();
  },
};
