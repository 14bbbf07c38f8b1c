import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';

/**
 * Contact-group queries the legacy interface needs beyond
 * src/contacts/groups.ts (lookup by name, description, last use, removal).
 * Same tables as the gateway's GET /contacts.
 */
export interface LegacyGroup {
  id: number;
  name: string;
  description: string | null;
  totalContacts: number;
  lastUsedAt: number | null;
  createdAt: number;
}

/** By name (exact, then ignoring case), or by numeric id. */
export async function findGroup(db: Executor, accountId: number, nameOrId: string): Promise<{ id: number; name: string } | null> {
  const clean = nameOrId.trim();
  const base = db.selectFrom('contact_groups').select(['id', 'name']).where('account_id', '=', accountId);
  const exact = await base.where('name', '=', clean).executeTakeFirst();
  if (exact) return { id: Number(exact.id), name: exact.name };
  // Ignoring case in JavaScript: SQLite's lower() only folds ASCII.
  const all = await base.orderBy('id').execute();
  const row =
    all.find((g) => g.name.toLowerCase() === clean.toLowerCase()) ?? (/^\d{1,15}$/.test(clean) ? all.find((g) => Number(g.id) === Number(clean)) : undefined);
  return row ? { id: Number(row.id), name: row.name } : null;
}

export async function listGroups(db: Executor, accountId: number, groupId?: number): Promise<LegacyGroup[]> {
  const rows = await db
    .selectFrom('contact_groups as g')
    .leftJoin('contacts as c', 'c.group_id', 'g.id')
    .select(['g.id', 'g.name', 'g.description', 'g.last_used_at', 'g.created_at', sql<number | string>`count(c.id)`.as('total')])
    .where('g.account_id', '=', accountId)
    .$if(groupId !== undefined, (q) => q.where('g.id', '=', groupId ?? 0))
    .groupBy(['g.id', 'g.name', 'g.description', 'g.last_used_at', 'g.created_at'])
    .orderBy('g.name')
    .orderBy('g.id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    description: r.description,
    totalContacts: Number(r.total),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
    createdAt: Number(r.created_at),
  }));
}

/** LastUsed of a group: set by each send to it. */
export async function touchGroup(db: Executor, accountId: number, groupId: number): Promise<void> {
  await db.updateTable('contact_groups').set({ last_used_at: Date.now() }).where('id', '=', groupId).where('account_id', '=', accountId).execute();
}

export async function deleteGroup(db: Executor, accountId: number, groupId: number): Promise<void> {
  await db.deleteFrom('contacts').where('group_id', '=', groupId).where('account_id', '=', accountId).execute();
  await db.deleteFrom('contact_groups').where('id', '=', groupId).where('account_id', '=', accountId).execute();
}

export async function hasContact(db: Executor, accountId: number, groupId: number, phone: string): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('group_id', '=', groupId)
    .where('phone', '=', phone)
    .executeTakeFirst();
  return row !== undefined;
}

/** Returns false when the phone was not in the group. */
export async function removeContact(db: Executor, accountId: number, groupId: number, phone: string): Promise<boolean> {
  const res = await db.deleteFrom('contacts').where('account_id', '=', accountId).where('group_id', '=', groupId).where('phone', '=', phone).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
