import type { Kysely } from 'kysely';

/**
 * Every gateway process working on this database, whatever its role (api,
 * dispatch, all), one row each, so that the operator sees the cluster
 * (GET /admin/cluster, src/dispatch/cluster.ts): its role, host, process,
 * when it started and when it last said it was alive, and the carrier
 * connections it runs (JSON array of names; none for an api process). The
 * dispatchers table (migration 009) stays what lease recovery reads.
 */
export const processes = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('processes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .addColumn('connectors', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('processes').execute();
  },
};
