import type { Executor } from '../db/executor.ts';
import type { Principal } from '../accounts/api-keys.ts';
import type { AccountRoutes } from '../routing/account-routes.ts';
import { internationalProblem, normalizeInternational } from '../common/phone.ts';
import { validation } from '../common/errors.ts';
import { shortenForSend, type ShortenedTexts } from '../shortlinks/shorten.ts';
import type { AcceptInput, AcceptResult } from './accept.ts';
import { acceptInput, resolveTargeting, type Outgoing, type ResolvedTargeting, type Targeting } from './send.ts';

/** What the SMS use cases need of the process. */
export interface SmsDeps {
  db: Executor;
  routes: AccountRoutes;
  accept(input: AcceptInput): Promise<AcceptResult>;
  /** Base of the account's short links (for `shortenLinks`). */
  shortLinkBase: string;
}

export interface SmsSend extends Targeting {
  message: string;
  tag?: string | undefined;
  custom?: string | undefined;
  shortenLinks?: boolean | undefined;
}

export interface SmsSent {
  result: AcceptResult;
  scheduled: boolean;
}

/**
 * One text to receivers and contact groups, now or scheduled: targeting,
 * link shortening (before the text is charged), accept. Links made for a
 * send that is refused are removed.
 */
export async function sendSms(deps: SmsDeps, principal: Principal, send: SmsSend): Promise<SmsSent> {
  const target = await resolveTargeting(deps.db, deps.routes, principal, send, 'SMS');
  const shortened = await shortenForSend(deps.db, principal.accountId, deps.shortLinkBase, send.shortenLinks, [send.message]);
  const message = shortened.texts[0] ?? send.message;
  return accept(
    deps,
    principal,
    target,
    send,
    shortened,
    target.receivers.map((receiver) => ({ receiver, content: message })),
  );
}

export interface SmsBatch {
  messages: { receiver: number | string; message: string; tag?: string | undefined; custom?: string | undefined }[];
  route?: number | string | undefined;
  scheduleDate?: string | undefined;
  tag?: string | undefined;
  custom?: string | undefined;
  shortenLinks?: boolean | undefined;
}

/**
 * Many texts, each to its receiver, as one request (one request id, one
 * debit). A receiver given twice is one message: the first. Every bad
 * receiver is named in one answer.
 */
export async function sendSmsBatch(deps: SmsDeps, principal: Principal, batch: SmsBatch): Promise<SmsSent> {
  const problems: string[] = [];
  const messages = new Map<string, Outgoing>();
  batch.messages.forEach((m, i) => {
    const receiver = normalizeInternational(m.receiver);
    if (!receiver) problems.push(`messages[${i}].receiver: ${internationalProblem(m.receiver)}`);
    else if (!messages.has(receiver)) messages.set(receiver, { receiver, content: m.message, tag: m.tag, custom: m.custom });
  });
  if (problems.length) throw validation(problems);
  const target = await resolveTargeting(
    deps.db,
    deps.routes,
    principal,
    { route: batch.route, scheduleDate: batch.scheduleDate, receivers: [...messages.keys()] },
    'SMS',
  );
  const shortened = await shortenForSend(
    deps.db,
    principal.accountId,
    deps.shortLinkBase,
    batch.shortenLinks,
    [...messages.values()].map((m) => m.content),
  );
  const texts = [...messages.values()].map((m, i) => ({ ...m, content: shortened.texts[i] ?? m.content }));
  return accept(deps, principal, target, batch, shortened, texts);
}

/** The accept of a gateway SMS send; the links made for it are removed when it is refused. */
async function accept(
  deps: SmsDeps,
  principal: Principal,
  target: ResolvedTargeting,
  send: { tag?: string | undefined; custom?: string | undefined },
  shortened: ShortenedTexts,
  messages: Outgoing[],
): Promise<SmsSent> {
  const input = acceptInput({
    accountId: principal.accountId,
    route: target.route,
    source: 'gateway',
    scheduleAt: target.scheduleAt,
    tag: send.tag,
    custom: send.custom,
    messages,
  });
  const result = await deps.accept(input).catch(shortened.discard);
  return { result, scheduled: target.scheduleAt !== null };
}
