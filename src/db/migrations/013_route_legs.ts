import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { identityColumn } from './identity.ts';

/**
 * The legs of a route (src/routing/legs.ts, docs/carriers.md "Routing
 * legs"): the carrier connections that carry its messages, chosen at accept
 * by the receiver's prefix, priority and weight. `position`: the order the
 * operator gave; `prefixes`: comma-separated digit prefixes, empty = any
 * receiver. A route without legs sends through its own `connector`.
 */
export function routeLegs(dialect: Dialect) {
  const { idType, identity } = identityColumn(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('route_legs')
        .addColumn('id', idType, identity)
        .addColumn('route_id', 'bigint', (c) => c.notNull().references('routes.id'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('prefixes', 'text', (c) => c.notNull())
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('weight', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('route_legs_route_idx').on('route_legs').columns(['route_id', 'position']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('route_legs').execute();
    },
  };
}
