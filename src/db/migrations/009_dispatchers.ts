import type { Kysely } from 'kysely';

/**
 * The dispatchers working on this database, one row each, so that a
 * starting process can tell which owners of leased messages are gone
 * (src/dispatch/registry.ts): the host and process they ran as, and when
 * they last said they were alive.
 */
export const dispatchers = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('dispatchers')
      .addColumn('owner', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('dispatchers').execute();
  },
};
