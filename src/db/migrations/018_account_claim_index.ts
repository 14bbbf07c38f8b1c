import { sql, type Kysely } from 'kysely';

/**
 * Unfinished messages of a connector by account, each account's in send
 * order: a claim behind a backlog finds the accounts with messages waiting
 * (one seek each) and takes each one's oldest, so that one account's bulk
 * send does not hold back another's messages (src/dispatch/claim.ts,
 * docs/architecture.md "One account's backlog"). Partial over exactly the
 * rows of messages_claim_idx, with the same literal status list.
 */
export const accountClaimIndex = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('messages_account_claim_idx')
      .on('messages')
      .columns(['connector', 'account_id', 'schedule_at', 'id'])
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('messages_account_claim_idx').execute();
  },
};
