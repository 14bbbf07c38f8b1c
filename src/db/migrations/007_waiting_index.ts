import { sql, type Kysely } from 'kysely';

/**
 * messages_due_idx (connector, status, due_at) served one query, the
 * dispatcher's look for messages waiting for a retry, yet it was rewritten
 * at every status change of every message (SENDING, SENT, DELIVERED...).
 * A partial index over the QUEUED rows serves that query and is left alone
 * once a message is claimed. The query spells `status = 'QUEUED'` literally
 * for the planner to use it (src/dispatch/dispatcher.ts).
 */
export const waitingIndex = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('messages_waiting_idx').on('messages').columns(['connector', 'due_at']).where(sql<boolean>`status = 'QUEUED'`).execute();
    await db.schema.dropIndex('messages_due_idx').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('messages_due_idx').on('messages').columns(['connector', 'status', 'due_at']).execute();
    await db.schema.dropIndex('messages_waiting_idx').execute();
  },
};
