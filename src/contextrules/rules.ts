import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/executor.ts';
import type { ContextRuleRow, ContextTables } from './tables.ts';
import { parseKeywords } from './matching.ts';

export type ContextDb = Kysely<Database & ContextTables>;
/** The context tables live beside the core schema (migration 002). */
export const contextDb = (db: Executor): ContextDb => (db as Kysely<Database>).withTables<ContextTables>();

export interface RuleInput {
  name: string;
  message: string;
  positiveContext: string | string[] | null;
  positiveResponse: string | null;
  negativeContext: string | string[] | null;
  negativeResponse: string | null;
  defaultResponse: string | null;
}

export interface ContextRule {
  id: number;
  name: string;
  message: string;
  positiveContext: string[];
  positiveResponse: string | null;
  negativeContext: string[];
  negativeResponse: string | null;
  defaultResponse: string | null;
  createdAt: number;
  updatedAt: number;
}

const keywordsOf = (json: string): string[] => {
  const value: unknown = JSON.parse(json);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};

export function toRule(row: ContextRuleRow): ContextRule {
  return {
    id: Number(row.id),
    name: row.name,
    message: row.message,
    positiveContext: keywordsOf(row.positive_context),
    positiveResponse: row.positive_response,
    negativeContext: keywordsOf(row.negative_context),
    negativeResponse: row.negative_response,
    defaultResponse: row.default_response,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const blankToNull = (v: string | null) => (v?.trim() ? v.trim() : null);

/** The rule with this name: exact first, then ignoring case. */
export async function findRule(db: Executor, accountId: number, name: string): Promise<ContextRule | null> {
  const cdb = contextDb(db);
  const clean = name.trim();
  const exact = await cdb.selectFrom('context_rules').selectAll().where('account_id', '=', accountId).where('name', '=', clean).executeTakeFirst();
  if (exact) return toRule(exact);
  // Ignoring case in JavaScript: SQLite's lower() only folds ASCII ("CONFIRMAÇÃO").
  const names = await cdb.selectFrom('context_rules').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute();
  const match = names.find((r) => r.name.toLowerCase() === clean.toLowerCase());
  const loose = match
    ? await cdb.selectFrom('context_rules').selectAll().where('id', '=', match.id).where('account_id', '=', accountId).executeTakeFirst()
    : undefined;
  return loose ? toRule(loose) : null;
}

/** Creates the rule, or replaces the one with the same name (the legacy panel's "save"). */
export async function saveRule(db: Executor, accountId: number, input: RuleInput): Promise<{ rule: ContextRule; created: boolean }> {
  const cdb = contextDb(db);
  const now = Date.now();
  const values = {
    message: input.message.trim(),
    positive_context: JSON.stringify(parseKeywords(input.positiveContext)),
    positive_response: blankToNull(input.positiveResponse),
    negative_context: JSON.stringify(parseKeywords(input.negativeContext)),
    negative_response: blankToNull(input.negativeResponse),
    default_response: blankToNull(input.defaultResponse),
    updated_at: now,
  };
  const update = async (id: number) => {
    const row = await cdb.updateTable('context_rules').set(values).where('id', '=', id).where('account_id', '=', accountId).returningAll().executeTakeFirst();
    return row ? { rule: toRule(row), created: false } : null;
  };
  const existing = await findRule(db, accountId, input.name);
  if (existing) {
    const updated = await update(existing.id);
    if (updated) return updated;
  }
  const name = input.name.trim();
  // The unique index (account, name) decides between saves at the same time:
  // the one that inserts created the rule, the others replace it, as a save after it would.
  const row = await cdb
    .insertInto('context_rules')
    .values({ account_id: accountId, name, created_at: now, ...values })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (row) return { rule: toRule(row), created: true };
  const winner = await cdb.selectFrom('context_rules').select('id').where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst();
  const updated = winner ? await update(Number(winner.id)) : null;
  if (!updated) throw new Error(`context rule "${name}" was neither inserted nor found`);
  return updated;
}

export async function listRules(db: Executor, accountId: number): Promise<ContextRule[]> {
  const rows = await contextDb(db).selectFrom('context_rules').selectAll().where('account_id', '=', accountId).orderBy('name').orderBy('id').execute();
  return rows.map(toRule);
}

/** Deletes the rule; conversations still waiting on it end without an answer. */
export async function deleteRule(db: Executor, accountId: number, ruleId: number): Promise<void> {
  const cdb = contextDb(db);
  await cdb.deleteFrom('context_rules').where('id', '=', ruleId).where('account_id', '=', accountId).execute();
  await cdb
    .updateTable('context_sends')
    .set({ status: 'CLOSED' })
    .where('account_id', '=', accountId)
    .where('rule_id', '=', ruleId)
    .where('status', '=', 'WAITING')
    .execute();
}
