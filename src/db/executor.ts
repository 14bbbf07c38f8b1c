import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables.ts';

/** A repository function runs on the database or inside the caller's transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;
