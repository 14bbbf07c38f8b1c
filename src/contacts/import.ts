import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import { normalizeInternational } from '../common/phone.ts';

/**
 * Importing contacts from a CSV file of any size: read as a stream, checked
 * and written in batches, each its own short transaction, so memory stays
 * flat (a batch, and the first invalid values kept for the answer) and the
 * gateway's own writes go on between batches. The rules are those of
 * addContacts (src/contacts/groups.ts): a number must be a valid
 * international number (normalizeInternational), invalid ones are reported
 * and not stored, a number already in the group is left as it is, and a
 * number given twice is stored once, with the name it was given last.
 */

export interface ContactRow {
  phone: string;
  name: string | null;
}

/**
 * Rows as read: phone in the first column, an optional name in the second;
 * a first row whose first column has no digit is a header. The input is
 * piped into the parser at once (before the rows are asked for), so no
 * chunk is read before someone takes it.
 */
export function readContactsCsv(input: Readable): AsyncIterable<ContactRow> {
  const parser = parse({ relax_column_count: true, skip_empty_lines: true, trim: true, bom: true });
  input.on('error', (err) => parser.destroy(err));
  const records = input.pipe(parser) as AsyncIterable<string[]>;
  return (async function* () {
    let first = true;
    for await (const record of records) {
      if (first) {
        first = false;
        if (!/\d/.test(record[0] ?? '')) continue;
      }
      // No database of the gateway stores U+0000: a name loses it; a number holding one is invalid.
      const name = record[1]?.replaceAll('\u0000', '').trim();
      yield { phone: record[0] ?? '', name: name ? name : null };
    }
  })();
}

/** Rows a batch holds: about 2,000 × 4 bound values a statement, well inside both databases' limits. */
export const IMPORT_BATCH = 2000;
/** Invalid values listed in the answer; more are only counted. */
export const INVALID_LISTED = 1000;

export interface ImportProgress {
  rows: number;
  added: number;
  invalid: number;
}

export interface ImportResult {
  added: number;
  /** The first INVALID_LISTED invalid values, as given. */
  invalid: string[];
  invalidCount: number;
  rows: number;
}

/** A batch checked outside any transaction: valid numbers (the last name given wins) and the values refused. */
function check(rows: ContactRow[]): { valid: Map<string, string | null>; invalid: string[] } {
  const valid = new Map<string, string | null>();
  const invalid: string[] = [];
  for (const r of rows) {
    const phone = normalizeInternational(r.phone);
    if (phone) valid.set(phone, r.name);
    else invalid.push(r.phone);
  }
  return { valid, invalid };
}

/**
 * Writes one checked batch: new numbers inserted (a number already in the
 * group is skipped, never a constraint error); a number this import added
 * in an earlier batch (its id is above `before`, the highest contact id
 * when the import began) takes the name given now. Answers how many were added.
 */
async function writeBatch(db: Executor, accountId: number, groupId: number, valid: Map<string, string | null>, before: number): Promise<number> {
  if (valid.size === 0) return 0;
  const rows = [...valid].map(([phone, name]) => ({ account_id: accountId, group_id: groupId, phone, name }));
  const inserted = await db
    .insertInto('contacts')
    .values(rows)
    .onConflict((oc) => oc.columns(['group_id', 'phone']).doNothing())
    .returning('phone')
    .execute();
  if (inserted.length === rows.length) return inserted.length;
  const added = new Set(inserted.map((r) => r.phone));
  const present = rows.filter((r) => !added.has(r.phone)).map((r) => r.phone);
  const ours = await db
    .selectFrom('contacts')
    .select(['id', 'phone', 'name'])
    .where('group_id', '=', groupId)
    .where('phone', 'in', present)
    .where('id', '>', before)
    .execute();
  for (const row of ours) {
    const name = valid.get(row.phone) ?? null;
    if (row.name !== name) await db.updateTable('contacts').set({ name }).where('id', '=', row.id).execute();
  }
  return inserted.length;
}

/**
 * Imports the rows into the account's group (which must exist: see
 * ensureContactGroup). Each batch is one transaction; the next batch is
 * read and checked while the previous one is written. A failure stops the
 * import: the batches written stay, and running the same import again
 * completes it (numbers already there are skipped).
 */
export async function importContacts(
  db: Kysely<Database>,
  accountId: number,
  groupId: number,
  rows: AsyncIterable<ContactRow>,
  onProgress?: (progress: ImportProgress) => void,
): Promise<ImportResult> {
  const last = await db
    .selectFrom('contacts')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  const before = Number(last?.id ?? 0);
  const result: ImportResult = { added: 0, invalid: [], invalidCount: 0, rows: 0 };
  let writing: Promise<void> | null = null;
  const flush = async (batch: ContactRow[]) => {
    const { valid, invalid } = check(batch);
    result.invalidCount += invalid.length;
    for (const value of invalid) if (result.invalid.length < INVALID_LISTED) result.invalid.push(value);
    // One batch in flight: this one is written once the previous one is.
    if (writing) await writing;
    writing = db
      .transaction()
      .execute((tx) => writeBatch(tx, accountId, groupId, valid, before))
      .then((added) => {
        result.added += added;
        onProgress?.({ rows: result.rows, added: result.added, invalid: result.invalidCount });
      });
    // Its failure is thrown where it is awaited (the next batch, or the end), not as an unhandled rejection meanwhile.
    writing.catch(() => undefined);
  };
  let batch: ContactRow[] = [];
  try {
    for await (const row of rows) {
      batch.push(row);
      result.rows++;
      if (batch.length === IMPORT_BATCH) {
        await flush(batch);
        batch = [];
      }
    }
    if (batch.length) await flush(batch);
  } finally {
    // Never leave a write running behind an error (its own error, if any, is the one thrown).
    if (writing) await writing;
  }
  return result;
}
