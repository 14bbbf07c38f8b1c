import { sql, type Kysely } from 'kysely';

/**
 * Accounts taking turns behind a backlog (src/common/turns.ts,
 * docs/architecture.md "One account's backlog"): the unfinished rows of the
 * two queues accounts share, by account, so that a claim finds the accounts
 * with rows waiting (one seek each) and reads each one's oldest in order.
 * - messages of a connector waiting to be claimed (queued or scheduled),
 *   each account's in send order. Not those in flight: a message handed to
 *   its carrier at its accept (the usual case without a backlog) never
 *   enters it, and a claimed one leaves it; the claim looks up the
 *   messages in flight of the receivers it takes this way (src/dispatch/claim.ts);
 * - webhook deliveries waiting for an attempt, each account's by due time
 *   (not partial: SQLite's planner, without statistics, would prefer the
 *   status index of migration 004 to a partial one).
 */
export const accountTurns = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('messages_account_claim_idx')
      .on('messages')
      .columns(['connector', 'account_id', 'schedule_at', 'id'])
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED')`)
      .execute();
    await db.schema.createIndex('webhook_deliveries_account_due_idx').on('webhook_deliveries').columns(['status', 'account_id', 'due_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('webhook_deliveries_account_due_idx').execute();
    await db.schema.dropIndex('messages_account_claim_idx').execute();
  },
};
