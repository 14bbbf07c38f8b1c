/**
 * A unique index (or primary key) refused the row: PostgreSQL SQLSTATE
 * 23505; SQLite SQLITE_CONSTRAINT_UNIQUE or SQLITE_CONSTRAINT_PRIMARYKEY
 * (the code survives the SQLite thread, src/db/sqlite-thread.ts).
 *
 * Repositories that insert a row a client names (a group, a rule, a grant)
 * prefer `ON CONFLICT ... DO NOTHING`: no error is raised, so a surrounding
 * PostgreSQL transaction stays usable, and the loser of a race can read the
 * winner's row. Where a statement cannot say ON CONFLICT (several unique
 * indexes, a row that must not half-exist), the repository catches the
 * error with this test and turns it into the answer a sequential duplicate
 * gets; it never reaches a client as a 500.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = err !== null && typeof err === 'object' && 'code' in err ? String(err.code) : '';
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
