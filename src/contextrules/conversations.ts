import type { Executor } from '../db/executor.ts';
import type { ConversationStatus, ContextSendRow } from './tables.ts';
import { contextDb, type ContextRule } from './rules.ts';

/** How long a context send waits for the receiver's answer. */
export const CONTEXT_WAIT_MS = 72 * 3600_000;
/** Default answers per conversation: an unclear answer is asked again, but not forever (each answer is charged). */
export const MAX_DEFAULT_ANSWERS = 3;

/**
 * Remembers, per receiver, that `rule` waits for an answer to `requestId`.
 * A receiver has one pending context per account: a newer context send
 * replaces the one still waiting.
 */
export async function startConversations(
  db: Executor,
  accountId: number,
  rule: ContextRule,
  requestId: string,
  receivers: string[],
  startsAt: number,
): Promise<void> {
  const cdb = contextDb(db);
  const now = Date.now();
  for (let i = 0; i < receivers.length; i += 500) {
    const chunk = receivers.slice(i, i + 500);
    await cdb
      .updateTable('context_sends')
      .set({ status: 'REPLACED' })
      .where('account_id', '=', accountId)
      .where('receiver', 'in', chunk)
      .where('status', '=', 'WAITING')
      .execute();
    await cdb
      .insertInto('context_sends')
      .values(
        chunk.map((receiver) => ({
          account_id: accountId,
          rule_id: rule.id,
          rule_name: rule.name,
          receiver,
          request_id: requestId,
          last_request_id: requestId,
          status: 'WAITING' as const,
          default_count: 0,
          created_at: now,
          expires_at: Math.max(startsAt, now) + CONTEXT_WAIT_MS,
          reply_content: null,
          replied_at: null,
          answer_content: null,
          answer_request_id: null,
        })),
      )
      .execute();
  }
}

/** The conversation a reply answers: waiting, not expired, and the reply is to its latest message. */
export async function findWaiting(db: Executor, accountId: number, receiver: string, repliedToRequest: string, now: number): Promise<ContextSendRow | null> {
  const row = await contextDb(db)
    .selectFrom('context_sends')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('receiver', '=', receiver)
    .where('status', '=', 'WAITING')
    .where('last_request_id', '=', repliedToRequest)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Takes the reply for this conversation. The condition on the state read
 * before makes two replies arriving together answer once.
 */
export async function claimReply(
  db: Executor,
  accountId: number,
  conv: ContextSendRow,
  next: { status: ConversationStatus; defaults: number; reply: string; at: number },
): Promise<boolean> {
  const res = await contextDb(db)
    .updateTable('context_sends')
    .set({ status: next.status, default_count: next.defaults, reply_content: next.reply, replied_at: next.at })
    .where('id', '=', conv.id)
    .where('account_id', '=', accountId)
    .where('status', '=', 'WAITING')
    .where('default_count', '=', conv.default_count)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Records the automatic answer; a conversation still waiting now waits for a reply to this answer. */
export async function recordAnswer(db: Executor, accountId: number, convId: number, answer: string, requestId: string): Promise<void> {
  const cdb = contextDb(db);
  await cdb
    .updateTable('context_sends')
    .set({ answer_content: answer, answer_request_id: requestId })
    .where('id', '=', convId)
    .where('account_id', '=', accountId)
    .execute();
  await cdb
    .updateTable('context_sends')
    .set({ last_request_id: requestId })
    .where('id', '=', convId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'WAITING')
    .execute();
}

export async function closeConversation(db: Executor, accountId: number, convId: number): Promise<void> {
  await contextDb(db)
    .updateTable('context_sends')
    .set({ status: 'CLOSED' })
    .where('id', '=', convId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'WAITING')
    .execute();
}

export interface ContextReportQuery {
  from: number;
  to: number;
  ruleName?: string | undefined;
  receiver?: string | undefined;
  requestId?: string | undefined;
  skip: number;
  limit: number;
}

/** The account's context sends, newest first; a conversation past its wait shows as EXPIRED. */
export async function contextReport(db: Executor, accountId: number, q: ContextReportQuery) {
  const now = Date.now();
  const base = contextDb(db)
    .selectFrom('context_sends')
    .where('account_id', '=', accountId)
    .where('created_at', '>=', q.from)
    .where('created_at', '<=', q.to)
    .$if(q.ruleName !== undefined, (b) => b.where('rule_name', '=', q.ruleName ?? ''))
    .$if(q.receiver !== undefined, (b) => b.where('receiver', '=', q.receiver ?? ''))
    .$if(q.requestId !== undefined, (b) => b.where('request_id', '=', q.requestId ?? ''));
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
  const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).offset(q.skip).execute();
  return {
    total: Number(count?.n ?? 0),
    records: rows.map((r) => ({
      requestId: r.request_id,
      ruleName: r.rule_name,
      receiver: r.receiver,
      status: r.status === 'WAITING' && r.expires_at <= now ? ('EXPIRED' as const) : r.status,
      sentAt: r.created_at,
      reply: r.reply_content,
      repliedAt: r.replied_at,
      answer: r.answer_content,
      answerRequestId: r.answer_request_id,
    })),
  };
}
