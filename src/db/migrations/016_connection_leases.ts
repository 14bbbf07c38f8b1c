import { sql, type Kysely } from 'kysely';

/**
 * Carrier connections held by one process at a time (src/dispatch/
 * connection-leases.ts, docs/operations.md "Running several processes"):
 * a connection allowing `maxBinds` binds has that many slots; a dispatcher
 * holds a slot while its lease (`until`) is renewed, and only the holders of
 * a connection's slots bind to it and send its messages. `ready`: 1 while
 * the holder's bind is up (failover moves a connection's messages only when
 * no holder's is).
 *
 * `moved`: 1 once failover moved the message from a leg whose connection
 * could not carry it to the next leg (docs/carriers.md "Failover"). The
 * partial index keeps the few such messages still waiting, which hold back
 * their receivers' later messages on every other connection.
 */
export const connectionLeases = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('connection_leases')
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('until', 'bigint', (c) => c.notNull())
      .addColumn('ready', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('connection_leases_pk', ['connector', 'slot'])
      .execute();
    await db.schema
      .alterTable('messages')
      .addColumn('moved', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('messages_moved_idx')
      .on('messages')
      .columns(['receiver'])
      .where(sql<boolean>`moved = 1 and status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('messages_moved_idx').execute();
    await db.schema.alterTable('messages').dropColumn('moved').execute();
    await db.schema.dropTable('connection_leases').execute();
  },
};
