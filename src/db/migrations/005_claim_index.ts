import { sql, type Kysely } from 'kysely';

/**
 * The dispatcher claims unfinished messages in send order (schedule time,
 * then id). A partial index over exactly those rows lets both databases walk
 * them in that order and stop at the batch size, however large the history
 * of finished messages grows. The claim query must spell the same status
 * list literally for the planner to use it (src/dispatch/dispatcher.ts).
 */
export const claimIndex = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('messages_claim_idx')
      .on('messages')
      .columns(['connector', 'schedule_at', 'id'])
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('messages_claim_idx').execute();
  },
};
