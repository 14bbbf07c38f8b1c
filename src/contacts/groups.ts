import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import { normalizeInternational } from '../shared/phone.ts';
import { DomainError, notFound, validation } from '../shared/errors.ts';

export async function createContactGroup(db: Executor, accountId: number, name: string, description: string | null, numbers: string[]) {
  const clean = name.trim();
  if (!clean) throw validation(['name: must not be empty']);
  const exists = await db.selectFrom('contact_groups').select('id').where('account_id', '=', accountId).where('name', '=', clean).executeTakeFirst();
  if (exists) throw new DomainError('CONFLICT', `A contact group named "${clean}" already exists.`);
  const row = await db
    .insertInto('contact_groups')
    .values({ account_id: accountId, name: clean, description, created_at: Date.now(), last_used_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  const result = await addContacts(db, accountId, id, numbers.map((phone) => ({ phone, name: null })));
  return { id, ...result };
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
  const existing = new Set(
    (await db.selectFrom('contacts').select('phone').where('group_id', '=', groupId).execute()).map((r) => r.phone),
  );
  const rows = [...byPhone].filter(([phone]) => !existing.has(phone)).map(([phone, name]) => ({ account_id: accountId, group_id: groupId, phone, name }));
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('contacts').values(rows.slice(i, i + 500)).execute();
  return { added: rows.length, invalid };
}

/** Spec 2.4: the account's groups with their count of valid contacts. */
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
