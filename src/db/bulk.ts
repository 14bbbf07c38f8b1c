import { CompiledQuery } from 'kysely';
import type { Executor } from './executor.ts';
import type { Dialect } from './dialect.ts';
import type { Database } from './tables.ts';

/**
 * Set-based statements for the hot paths (accept, dispatch outcomes,
 * receipts) without Kysely's query builder: building and compiling a query
 * tree per call costs more than SQLite takes to run it. The SQL texts are
 * made once per shape and row count and kept; values are bound as usual.
 */

/** Bound parameters per statement: below SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;
const texts = new Map<string, string>();

function memo(key: string, make: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = make();
    if (texts.size > 2000) texts.clear();
    texts.set(key, text);
  }
  return text;
}

/**
 * `(?, ?), (?, ?)` for `count` rows of `width` values (PostgreSQL:
 * `($k, $k+1), …`, numbered after the `before` parameters that come first in
 * the statement). `casts[i]`, when given, types column i (PostgreSQL types a
 * VALUES column from its values, and bound parameters have none).
 */
export function rowsText(dialect: Dialect, count: number, width: number, before = 0, casts: readonly (string | null)[] = []): string {
  return memo(`rows ${dialect} ${count} ${width} ${before} ${casts.join(',')}`, () => {
    let n = before;
    const value = (i: number) => {
      const p = dialect === 'postgres' ? `$${++n}` : '?';
      return casts[i] ? `cast(${p} as ${casts[i]})` : p;
    };
    const row = () => `(${Array.from({ length: width }, (_, i) => value(i)).join(', ')})`;
    return Array.from({ length: count }, row).join(', ');
  });
}

/** A placeholder for the k-th (1-based) parameter of a statement. SQLite's are positional: write them in parameter order. */
export const param = (dialect: Dialect, k: number): string => (dialect === 'postgres' ? `$${k}` : '?');

export async function runRaw<R>(db: Executor, text: string, params: readonly unknown[]): Promise<R[]> {
  return (await db.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
}

/** Rows per statement for rows of `width` values: a power of two (see sizedChunks). */
const rowsPerStatement = (width: number): number => 2 ** Math.floor(Math.log2(Math.max(1, Math.floor(MAX_PARAMS / width))));

/**
 * `items` in chunks whose sizes are powers of two, largest first, none over
 * `max` (1,000 rows: 512, 256, 128, 64, 32, 8). A statement's text depends
 * on its row count, and each text is prepared once and kept: with a chunk
 * the size of each batch, a load of varying batches made a new statement for
 * nearly every size (up to a thousand a shape, each prepared at a cost and
 * holding native memory: hundreds of MB under a bulk load). This way a shape
 * has a dozen texts at most, for a few more statements a batch.
 */
export function* sizedChunks<T>(items: readonly T[], max: number): Generator<T[]> {
  let size = 2 ** Math.floor(Math.log2(Math.max(1, max)));
  for (let i = 0; i < items.length; ) {
    while (size > items.length - i) size /= 2;
    yield items.slice(i, i + size);
    i += size;
  }
}

/** The same statement as Kysely's insertInto(table).values(rows); values bound in `columns` order. */
export async function insertRows<T extends keyof Database & string, C extends keyof Database[T] & string>(
  db: Executor,
  dialect: Dialect,
  table: T,
  columns: readonly C[],
  rows: readonly { [K in C]: unknown }[],
): Promise<void> {
  for (const chunk of sizedChunks(rows, rowsPerStatement(columns.length))) {
    const params: unknown[] = [];
    for (const row of chunk) for (const c of columns) params.push(row[c] ?? null);
    const text = memo(
      `insert ${dialect} ${table} ${columns.join(',')} ${chunk.length}`,
      () => `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${rowsText(dialect, chunk.length, columns.length)}`,
    );
    await runRaw(db, text, params);
  }
}
