import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import { normalizeInternational } from '../common/phone.ts';
import { DomainError, notFound, validation } from '../common/errors.ts';

/** The CONFLICT a second group of the same name gets, whether it came after the first or at the same time. */
export const groupExists = (name: string) => new DomainError('CONFLICT', `A contact group named "${name}" already exists.`);

/**
 * Inserts the group unless one of that name exists (the unique index
 * decides, so two requests at once cannot both create it, nor fail with a
 * constraint error). Returns the new id, or null when the name was taken.
 */
async function insertGroup(db: Executor, accountId: number, name: string, description: string | null): Promise<number | null> {
  const row = await db
    .insertInto('contact_groups')
    .values({ account_id: accountId, name, description, created_at: Date.now(), last_used_at: null })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

export async function createContactGroup(db: Executor, accountId: number, name: string, description: string | null, numbers: string[]) {
  const clean = name.trim();
  if (!clean) throw validation(['name: must not be empty']);
  const id = await insertGroup(db, accountId, clean, description);
  if (id === null) throw groupExists(clean);
  const result = await addContacts(
    db,
    accountId,
    id,
    numbers.map((phone) => ({ phone, name: null })),
  );
  return { id, ...result };
}

/** The id of the account's group of that exact name, created (empty) when there is none. */
export async function ensureContactGroup(db: Executor, accountId: number, name: string): Promise<number> {
  const clean = name.trim();
  if (!clean) throw validation(['name: must not be empty']);
  const find = () => db.selectFrom('contact_groups').select('id').where('account_id', '=', accountId).where('name', '=', clean).executeTakeFirst();
  const existing = await find();
  if (existing) return Number(existing.id);
  const id = await insertGroup(db, accountId, clean, null);
  if (id !== null) return id;
  // Created by another request meanwhile.
  const winner = await find();
  if (!winner) throw groupExists(clean);
  return Number(winner.id);
}

/**
 * Adds numbers to a group. Numbers that are not valid international phones
 * are reported back and not stored; duplicates are stored once.
 */
export async function addContacts(db: Executor, accountId: number, groupId: number, contacts: { phone: string; name: string | null }[]) {
  const group = await db.selectFrom('contact_groups').select('id').where('id', '=', groupId).where('account_id', '=', accountId).executeTakeFirst();
  if (!group) throw notFound(`Contact group ${groupId}`);
  const invalid: string[] = [];
  const byPhone = new Map<string, string | null>();
  for (const c of contacts) {
    const phone = normalizeInternational(c.phone);
    if (phone) byPhone.set(phone, c.name);
    else invalid.push(c.phone);
  }
  const existing = new Set((await db.selectFrom('contacts').select('phone').where('group_id', '=', groupId).execute()).map((r) => r.phone));
  const rows = [...byPhone].filter(([phone]) => !existing.has(phone)).map(([phone, name]) => ({ account_id: accountId, group_id: groupId, phone, name }));
  let added = 0;
  for (let i = 0; i < rows.length; i += 500) {
    // A number added by another request since the read above is skipped, not a constraint error.
    const res = await db
      .insertInto('contacts')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.columns(['group_id', 'phone']).doNothing())
      .executeTakeFirst();
    added += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
  return { added, invalid };
}

/** The account's contact groups (gateway `GET /contacts`) with their count of valid contacts. */
export async function listContactGroups(db: Executor, accountId: number) {
  const rows = await db
    .selectFrom('contact_groups as g')
    .leftJoin('contacts as c', 'c.group_id', 'g.id')
    .select(['g.id', 'g.name', 'g.created_at', sql<number>`count(c.id)`.as('valid')])
    .where('g.account_id', '=', accountId)
    .groupBy(['g.id', 'g.name', 'g.created_at'])
    .orderBy('g.id')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name, createdAt: new Date(r.created_at).toISOString(), validContacts: Number(r.valid) }));
}

/** Phones of the given groups of the account; an id that is not the account's is NOT_FOUND. */
export async function groupPhones(db: Executor, accountId: number, groupIds: number[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const unique = [...new Set(groupIds)];
  const groups = await db.selectFrom('contact_groups').select('id').where('account_id', '=', accountId).where('id', 'in', unique).execute();
  const found = new Set(groups.map((g) => Number(g.id)));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length) throw notFound(`Contact group ${missing.join(', ')}`);
  const rows = await db.selectFrom('contacts').select('phone').where('account_id', '=', accountId).where('group_id', 'in', unique).orderBy('id').execute();
  return rows.map((r) => r.phone);
}
