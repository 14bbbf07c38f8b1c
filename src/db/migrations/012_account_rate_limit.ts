import type { Kysely } from 'kysely';

/**
 * Per-account request rate limit of the Gateway and Legacy v2 interfaces,
 * set by the operator (docs/operations.md, "Rate limits"):
 *
 * - `accounts.rate_limit_per_second`: null = the default
 *   (RATE_LIMIT_PER_SECOND on the gateway, the legacy default on the legacy
 *   interface); 0 = no limit; N = N requests a second.
 */
export const accountRateLimit = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('rate_limit_per_second', 'integer').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').dropColumn('rate_limit_per_second').execute();
  },
};
