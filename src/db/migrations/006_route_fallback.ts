import type { Kysely } from 'kysely';

/**
 * An RCS route may name an SMS route that carries its messages to phones
 * without RCS capability (src/rcs/fallback.ts). Nullable: no fallback. The
 * column is bigint like every other route id column; SQLite accepts a
 * REFERENCES column added by ALTER TABLE because its default is NULL.
 */
export const routeFallback = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('routes')
      .addColumn('fallback_route_id', 'bigint', (c) => c.references('routes.id'))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('routes').dropColumn('fallback_route_id').execute();
  },
};
