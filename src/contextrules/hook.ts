import type { Logger } from 'pino';
import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import type { AcceptInput, AcceptResult } from '../messaging/accept.ts';
import type { StoredReply } from '../messaging/replies.ts';
import { classify } from './matching.ts';
import { contextDb, toRule } from './rules.ts';
import { MAX_DEFAULT_ANSWERS, claimReply, closeConversation, findWaiting, recordAnswer } from './conversations.ts';
import { acceptInput } from '../messaging/send.ts';

export interface ContextDeps {
  db: Executor;
  accept: (input: AcceptInput) => Promise<AcceptResult>;
  /** The routes the account may send through (the core's cache). */
  routes: (accountId: number) => Promise<RouteRow[]>;
  log: Logger;
}

/**
 * Answers a reply to a context send (Legacy v2 /sendcontextmessage): the
 * reply is matched against the rule's keywords and the matching response
 * goes back to the receiver through the normal send path (source `reply`,
 * charged like any SMS, on the route of the message it answers).
 */
export async function answerReply(deps: ContextDeps, reply: StoredReply): Promise<void> {
  if (reply.accountId === null || reply.messageId === null) return;
  const accountId = reply.accountId;
  const db = contextDb(deps.db);
  const message = await db
    .selectFrom('messages')
    .select(['request_id', 'route_id', 'sender'])
    .where('id', '=', reply.messageId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!message) return;
  const now = Date.now();
  const conv = await findWaiting(deps.db, accountId, reply.sender, message.request_id, now);
  if (!conv) return;
  const ruleRow = await db.selectFrom('context_rules').selectAll().where('id', '=', conv.rule_id).where('account_id', '=', accountId).executeTakeFirst();
  if (!ruleRow) {
    await closeConversation(deps.db, accountId, conv.id);
    return;
  }
  const rule = toRule(ruleRow);
  const outcome = classify(reply.content, rule.positiveContext, rule.negativeContext);
  let answer: string | null;
  let next: { status: typeof conv.status; defaults: number };
  if (outcome === 'POSITIVE') {
    answer = rule.positiveResponse;
    next = { status: 'POSITIVE', defaults: conv.default_count };
  } else if (outcome === 'NEGATIVE') {
    answer = rule.negativeResponse;
    next = { status: 'NEGATIVE', defaults: conv.default_count };
  } else if (rule.defaultResponse === null) {
    // Nothing to say to an unclear answer: keep waiting for a clear one.
    answer = null;
    next = { status: 'WAITING', defaults: conv.default_count };
  } else {
    answer = rule.defaultResponse;
    const defaults = conv.default_count + 1;
    next = { status: defaults >= MAX_DEFAULT_ANSWERS ? 'DEFAULT' : 'WAITING', defaults };
  }
  if (!(await claimReply(deps.db, accountId, conv, { ...next, reply: reply.content, at: reply.receivedAt }))) return;
  if (answer === null) return;

  const route = await answerRoute(deps, accountId, Number(message.route_id));
  if (!route) {
    deps.log.warn({ accountId, conversation: conv.id }, 'context rule answer not sent: the account has no SMS route');
    return;
  }
  try {
    const result = await deps.accept(
      acceptInput({ accountId, route, source: 'reply', sender: message.sender, scheduleAt: null, messages: [{ receiver: reply.sender, content: answer }] }),
    );
    await recordAnswer(deps.db, accountId, conv.id, answer, result.requestId);
  } catch (err) {
    deps.log.warn({ err, accountId, conversation: conv.id }, 'context rule answer not sent');
  }
}

/** The route of the answered message while the account may still use it, else its first SMS route. */
async function answerRoute(deps: ContextDeps, accountId: number, routeId: number): Promise<RouteRow | null> {
  const routes = (await deps.routes(accountId)).filter((r) => r.channel === 'SMS');
  return routes.find((r) => Number(r.id) === routeId) ?? routes[0] ?? null;
}

/**
 * The context-rule answer as a reply hook (the core runs it after every
 * stored reply, whatever HTTP interfaces the process serves); a failure is
 * logged, never passed on.
 */
export function contextRulesHook(deps: ContextDeps): (reply: StoredReply) => Promise<void> {
  return async (reply) => {
    try {
      await answerReply(deps, reply);
    } catch (err) {
      deps.log.error({ err, replyId: reply.id }, 'context rule hook failed');
    }
  };
}
