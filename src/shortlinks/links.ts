import { sql, type Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import { notFound, validation } from '../common/errors.ts';
import { newCode } from './codes.ts';
import { checkDestination } from './urls.ts';
import type { ShortLinkRow, ShortLinkTables } from './tables.ts';

/** A short link as the gateway answers it (`/short-links`). */
export interface PublicShortLink {
  id: number;
  code: string;
  shortUrl: string;
  destinationUrl: string;
  createdAt: string;
  updatedAt: string;
  accessCount: number;
  humanAccessCount: number;
  botAccessCount: number;
}

export const MAX_PAGE = 1000;

type LinkDb = Kysely<Database & ShortLinkTables>;
const linkDb = (db: Executor): LinkDb => (db as Kysely<Database>).withTables<ShortLinkTables>();

/** The public base of short links without a trailing slash: SHORT_LINK_BASE, or this server's /s. */
export const shortLinkBase = (config: Pick<Config, 'SHORT_LINK_BASE' | 'PORT'>): string =>
  (config.SHORT_LINK_BASE ?? `http://localhost:${config.PORT}/s`).replace(/\/+$/, '');

export const publicShortLink = (row: ShortLinkRow, base: string): PublicShortLink => ({
  id: Number(row.id),
  code: row.code,
  shortUrl: `${base}/${row.code}`,
  destinationUrl: row.destination_url,
  createdAt: new Date(Number(row.created_at)).toISOString(),
  updatedAt: new Date(Number(row.updated_at)).toISOString(),
  accessCount: Number(row.access_count),
  humanAccessCount: Number(row.human_access_count),
  botAccessCount: Number(row.bot_access_count),
});

/** The destination as stored, or a VALIDATION error naming `field`. */
export function destinationOrThrow(value: string, base: string, field = 'destinationUrl'): string {
  const checked = checkDestination(value, base);
  if ('error' in checked) throw validation([`${field}: ${checked.error}`]);
  return checked.url;
}

/** Codes are retried this many times per link when they collide (at 8 characters they practically never do). */
const CODE_ATTEMPTS = 5;
/** Rows per INSERT (SQLite allows 32766 bound values; a link has 5). */
const CHUNK = 500;

/**
 * Inserts one link per destination (already checked), each with a fresh
 * random code. A code that is taken is skipped by ON CONFLICT DO NOTHING
 * (no error, so a surrounding PostgreSQL transaction stays usable) and that
 * destination is retried with a new code. Rows come back in input order.
 * `generate` is replaceable for tests of the collision path.
 */
export async function insertLinks(db: Executor, accountId: number, destinations: string[], generate: () => string = newCode): Promise<ShortLinkRow[]> {
  const now = Date.now();
  const made = new Map<number, ShortLinkRow>();
  let pending = destinations.map((destination, index) => ({ index, destination }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === CODE_ATTEMPTS) throw new Error(`could not find a free short link code in ${CODE_ATTEMPTS} attempts`);
    const next: typeof pending = [];
    for (let i = 0; i < pending.length; i += CHUNK) {
      const chunk = pending.slice(i, i + CHUNK).map((p) => ({ ...p, code: generate() }));
      const rows = await linkDb(db)
        .insertInto('short_links')
        .values(chunk.map((c) => ({ account_id: accountId, code: c.code, destination_url: c.destination, created_at: now, updated_at: now, deleted_at: null })))
        .onConflict((oc) => oc.column('code').doNothing())
        .returningAll()
        .execute();
      const byCode = new Map(rows.map((r) => [r.code, r]));
      for (const c of chunk) {
        const row = byCode.get(c.code);
        // A code drawn twice in one chunk was inserted once: the first entry has it, the other retries.
        byCode.delete(c.code);
        if (row && row.destination_url === c.destination) made.set(c.index, row);
        else next.push({ index: c.index, destination: c.destination });
      }
    }
    pending = next;
  }
  return destinations.map((_, index) => {
    const row = made.get(index);
    if (!row) throw new Error('short link insert lost a row');
    return row;
  });
}

export async function createLink(db: Executor, accountId: number, destination: string): Promise<ShortLinkRow> {
  const [row] = await insertLinks(db, accountId, [destination]);
  if (!row) throw new Error('short link insert returned nothing');
  return row;
}

const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The account's live links, newest first; `filter` is a case-insensitive substring of the code or the destination. */
export async function listLinks(db: Executor, accountId: number, q: { skip: number; limit: number; filter?: string | undefined }) {
  const filter = q.filter?.trim() ? likePattern(q.filter.trim()) : null;
  const base = linkDb(db)
    .selectFrom('short_links')
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .$if(filter !== null, (b) =>
      b.where((eb) => eb.or([eb(sql`lower(code)`, 'like', sql`${filter} escape '\\'`), eb(sql`lower(destination_url)`, 'like', sql`${filter} escape '\\'`)])),
    );
  const rows = await base.selectAll().orderBy('id', 'desc').offset(q.skip).limit(q.limit).execute();
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
  return { records: rows, total: Number(count?.n ?? 0) };
}

/** Changes the destination of a live link of the account (code and counters stay). */
export function updateLink(db: Executor, accountId: number, id: number, destination: string): Promise<ShortLinkRow> {
  return changeLiveLink(db, accountId, id, { destination_url: destination, updated_at: Date.now() });
}

/** Deletes a live link of the account: the code stops redirecting and is never handed out again. */
export function deleteLink(db: Executor, accountId: number, id: number): Promise<ShortLinkRow> {
  return changeLiveLink(db, accountId, id, { deleted_at: Date.now() });
}

/** Updates a live (not deleted) link of the account; NOT_FOUND for any other id. */
async function changeLiveLink(
  db: Executor,
  accountId: number,
  id: number,
  change: { destination_url?: string; updated_at?: number; deleted_at?: number },
): Promise<ShortLinkRow> {
  const row = await linkDb(db)
    .updateTable('short_links')
    .set(change)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound(`Short link ${id}`);
  return row;
}

/** Removes links that were never published (their send was refused); a hard delete. */
export async function discardLinks(db: Executor, accountId: number, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    await linkDb(db)
      .deleteFrom('short_links')
      .where('account_id', '=', accountId)
      .where('id', 'in', ids.slice(i, i + CHUNK))
      .execute();
  }
}

/**
 * Counts one access and answers the destination, or null for an unknown or
 * deleted code. One UPDATE with `x = x + 1`, so concurrent clicks never
 * lose a count. Found by the public code alone: the visitor has no account.
 */
export async function followLink(db: Executor, code: string, bot: boolean): Promise<string | null> {
  const counter = bot ? { bot_access_count: sql<number>`bot_access_count + 1` } : { human_access_count: sql<number>`human_access_count + 1` };
  const row = await linkDb(db)
    .updateTable('short_links')
    .set({ access_count: sql<number>`access_count + 1`, ...counter })
    .where('code', '=', code)
    .where('deleted_at', 'is', null)
    .returning('destination_url')
    .executeTakeFirst();
  return row?.destination_url ?? null;
}

/** The destination of a live code without counting (HEAD requests). */
export async function peekLink(db: Executor, code: string): Promise<string | null> {
  const row = await linkDb(db).selectFrom('short_links').select('destination_url').where('code', '=', code).where('deleted_at', 'is', null).executeTakeFirst();
  return row?.destination_url ?? null;
}
