import type { ColumnDefinitionBuilder } from 'kysely';
import type { Dialect } from '../dialect.ts';

/** The one difference between the dialects in our migrations: how an auto-increment id column is declared. */
export function identityColumn(dialect: Dialect) {
  return {
    idType: dialect === 'sqlite' ? ('integer' as const) : ('bigint' as const),
    identity: (col: ColumnDefinitionBuilder) => (dialect === 'sqlite' ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity()),
  };
}
