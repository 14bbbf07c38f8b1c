import type { Transaction } from 'kysely';
import type { Database } from './tables.ts';
import type { Dialect } from './dialect.ts';

/**
 * A hot-path transaction (accept a batch, claim due messages, write carrier
 * outcomes, renew leases): it takes plain data and answers plain data, one
 * result per item; it throws only when the whole transaction fails. A
 * result that refuses its item (a request the balance cannot cover) is
 * plain data too, turned into an error by the feature that asked. On SQLite it runs whole on the SQLite thread
 * (one message there and back, not one per statement); on PostgreSQL as an
 * ordinary transaction.
 *
 * The features define their jobs (`defineJob(import.meta.url, 'nameOfExport', fn)`)
 * and callers pass the job itself to `Db.run`: the database layer knows no
 * feature. The SQLite thread finds a job by importing the module that
 * exports it and reading the export: so a job must be exported, under the
 * name given, from the module whose URL is given.
 */
export interface Job<Item, Result> {
  /** URL of the module that exports the job (its `import.meta.url`). */
  readonly module: string;
  /** Name of that export. */
  readonly name: string;
  readonly run: (tx: Transaction<Database>, dialect: Dialect, items: Item[]) => Promise<Result[]>;
}

export function defineJob<Item, Result>(module: string, name: string, run: Job<Item, Result>['run']): Job<Item, Result> {
  return { module, name, run };
}

/** Whether a value is a job (the SQLite thread checks what an import gave it). */
export function isJob(value: unknown): value is Job<unknown, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Job<unknown, unknown>).run === 'function' &&
    typeof (value as Job<unknown, unknown>).module === 'string'
  );
}
