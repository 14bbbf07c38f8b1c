import type { Executor } from '../db/executor.ts';
import type { StoredReply } from '../messaging/replies.ts';
import { blockPhone } from '../contacts/blocklist.ts';
import { validation } from '../common/errors.ts';
import { eventsDb } from './tables.ts';

/**
 * Opt-out (BLOCKED covers "on the account's blocklist or opted
 * out"): a reply that is nothing but an opt-out keyword puts its sender on
 * the blocklist of the account it answered, so later sends to that number
 * are BLOCKED and not charged. Keywords are per account; Brazilian
 * defaults plus STOP.
 */
export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = ['SAIR', 'PARAR', 'CANCELAR', 'STOP'];
export const MAX_KEYWORDS = 50;

/**
 * Case, accents, spaces and punctuation do not count: " Sáir! " and "SAIR"
 * are the same word. "sair agora" is not "sair": the whole text must be
 * the keyword, so a conversation that merely mentions it is not an opt-out.
 */
export function normalizeKeyword(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

export function isOptOut(text: string, keywords: readonly string[]): boolean {
  const word = normalizeKeyword(text);
  return word.length > 0 && keywords.some((k) => normalizeKeyword(k) === word);
}

/** The account's keywords; the defaults when the operator never set them. */
export async function getOptOutKeywords(db: Executor, accountId: number): Promise<string[]> {
  const row = await eventsDb(db).selectFrom('optout_keywords').select('keywords').where('account_id', '=', accountId).executeTakeFirst();
  if (!row) return [...DEFAULT_OPT_OUT_KEYWORDS];
  const value: unknown = JSON.parse(row.keywords);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Replaces the account's keywords; an empty list turns opt-out by keyword off. */
export async function setOptOutKeywords(db: Executor, accountId: number, keywords: string[]): Promise<string[]> {
  const kept: string[] = [];
  const seen = new Set<string>();
  const problems: string[] = [];
  keywords.forEach((k, i) => {
    const norm = normalizeKeyword(k);
    if (norm.length === 0) problems.push(`keywords[${i}]: must contain a letter or digit`);
    else if (!seen.has(norm)) {
      seen.add(norm);
      kept.push(k.trim());
    }
  });
  if (problems.length) throw validation(problems);
  if (kept.length > MAX_KEYWORDS) throw validation([`keywords: at most ${MAX_KEYWORDS} keywords`]);
  const now = Date.now();
  const json = JSON.stringify(kept);
  await eventsDb(db)
    .insertInto('optout_keywords')
    .values({ account_id: accountId, keywords: json, updated_at: now })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ keywords: json, updated_at: now }))
    .execute();
  return kept;
}

/**
 * The onReply hook: blocks the sender when the reply is an opt-out keyword.
 * A reply nobody sent to (no account) opts out of nothing. Returns whether
 * the number was newly blocked.
 */
export async function applyOptOut(db: Executor, reply: StoredReply): Promise<boolean> {
  if (reply.accountId === null) return false;
  const keywords = await getOptOutKeywords(db, reply.accountId);
  if (!isOptOut(reply.content, keywords)) return false;
  return blockPhone(db, reply.accountId, reply.sender);
}
