import type { Kysely } from 'kysely';

/**
 * A failed webhook delivery sent again on the account's request
 * (`POST /webhooks/{id}/deliveries/{deliveryId}/retry`, docs/webhooks.md):
 * `schedule_from` is when its retry schedule restarted (null: at the event),
 * `schedule_attempts` the attempts made before that, so the schedule's
 * delays and its 24-hour limit count from the resend while `attempts` keeps
 * every attempt ever made.
 */
export const deliveryResend = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhook_deliveries').addColumn('schedule_from', 'bigint').execute();
    await db.schema
      .alterTable('webhook_deliveries')
      .addColumn('schedule_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhook_deliveries').dropColumn('schedule_attempts').execute();
    await db.schema.alterTable('webhook_deliveries').dropColumn('schedule_from').execute();
  },
};
