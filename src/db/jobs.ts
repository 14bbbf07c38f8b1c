import type { Transaction } from 'kysely';
import type { Database } from './tables.ts';
import type { Dialect } from './database.ts';
import { acceptBatch } from '../messaging/accept.ts';
import { writeOutcomes } from '../dispatch/outcomes.ts';
import { claimDue, renewLeases } from '../dispatch/claim.ts';

/**
 * The hot paths' transactions, by name: each takes plain data and answers
 * plain data, one result (or Error) per item, so that on SQLite it runs
 * whole on the SQLite thread (one message there and back, not one per
 * statement) and on PostgreSQL as an ordinary transaction (Db.run).
 */
export const jobs = {
  accept: acceptBatch,
  outcomes: writeOutcomes,
  claim: claimDue,
  renew: renewLeases,
} satisfies Record<string, (tx: Transaction<Database>, dialect: Dialect, items: never[]) => Promise<unknown[]>>;

export type Jobs = typeof jobs;
export type JobName = keyof Jobs;
export type JobItem<N extends JobName> = Parameters<Jobs[N]>[2][number];
export type JobResult<N extends JobName> = Awaited<ReturnType<Jobs[N]>>[number];
