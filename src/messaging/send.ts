import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import { chargedSegments } from '../billing/segments.ts';
import type { AcceptInput } from './accept.ts';
import type { Principal } from '../accounts/api-keys.ts';
import type { AccountRoutes } from '../routing/account-routes.ts';
import { groupPhones } from '../contacts/groups.ts';
import { internationalProblem, normalizeInternational } from '../common/phone.ts';
import { validation } from '../common/errors.ts';
import { parseScheduleDate } from './schedule.ts';

/** Receivers a single request may reach, after contact groups are expanded. */
export const MAX_RECEIVERS = 100_000;

export interface Targeting {
  receivers?: (number | string)[] | undefined;
  contactGroups?: (number | { id: number })[] | undefined;
  route?: number | string | undefined;
  scheduleDate?: string | undefined;
}

export interface ResolvedTargeting {
  receivers: string[];
  route: RouteRow;
  scheduleAt: number | null;
}

/**
 * The common fields of every send (receivers, contactGroups, route, tag,
 * custom, scheduleDate): validates them together so the
 * caller gets every problem in one answer, expands contact groups, and
 * de-duplicates receivers (one message per receiver and request).
 */
export async function resolveTargeting(
  db: Executor,
  routes: AccountRoutes,
  principal: Principal,
  input: Targeting,
  channel: 'SMS' | 'RCS',
): Promise<ResolvedTargeting> {
  const problems: string[] = [];
  const receivers: string[] = [];
  (input.receivers ?? []).forEach((value, i) => {
    const phone = normalizeInternational(value);
    if (phone) receivers.push(phone);
    else problems.push(`receivers[${i}]: ${internationalProblem(value)}`);
  });
  let scheduleAt: number | null = null;
  if (input.scheduleDate !== undefined && input.scheduleDate !== null && input.scheduleDate !== '') {
    const parsed = parseScheduleDate(input.scheduleDate, principal.timezone);
    if ('error' in parsed) problems.push(parsed.error);
    else scheduleAt = parsed.at;
  }
  let routeId: number | null = null;
  if (input.route !== undefined) {
    routeId = typeof input.route === 'number' ? input.route : /^\d+$/.test(input.route.trim()) ? Number(input.route) : null;
    if (routeId === null || !Number.isSafeInteger(routeId)) problems.push(`route: ${JSON.stringify(input.route)} is not a route id`);
  }
  if (problems.length) throw validation(problems);

  const route = routeId !== null ? await routes.get(principal.accountId, routeId) : await routes.first(principal.accountId, channel);
  if (route.channel !== channel) throw validation([`route: route ${route.id} is an ${route.channel} route; use an ${channel} route from GET /routes`]);

  const groupIds = (input.contactGroups ?? []).map((g) => (typeof g === 'number' ? g : g.id));
  receivers.push(...(await groupPhones(db, principal.accountId, groupIds)));
  const unique = [...new Set(receivers)];
  if (unique.length === 0) throw validation(['receivers: give at least one receiver or a contact group with contacts']);
  if (unique.length > MAX_RECEIVERS) throw validation([`receivers: at most ${MAX_RECEIVERS} receivers per request (got ${unique.length})`]);
  return { receivers: unique, route, scheduleAt };
}

/** One message of a send: its receiver and text; its own tag and custom (else the send's); an RCS payload (JSON). */
export interface Outgoing {
  receiver: string;
  content: string;
  tag?: string | null | undefined;
  custom?: string | null | undefined;
  payload?: string | null | undefined;
}

export interface SendInput {
  accountId: number;
  route: RouteRow;
  source: AcceptInput['source'];
  /** Epoch ms; null = now. */
  scheduleAt: number | null;
  messages: Outgoing[];
  tag?: string | null | undefined;
  custom?: string | null | undefined;
  sender?: string | null | undefined;
  /** The text the requests report shows; the first message's text when not given. */
  content?: string | undefined;
}

/**
 * The one place a send becomes an accept: each message priced (an SMS by
 * its segments, 160/153 characters; an RCS message, one with a payload, as
 * one send), tag and custom inherited from the send.
 */
export function acceptInput(send: SendInput): AcceptInput {
  return {
    accountId: send.accountId,
    route: send.route,
    source: send.source,
    content: send.content ?? send.messages[0]?.content ?? '',
    tag: send.tag ?? null,
    custom: send.custom ?? null,
    sender: send.sender ?? null,
    scheduleAt: send.scheduleAt,
    items: send.messages.map((m) => ({
      receiver: m.receiver,
      content: m.content,
      segments: m.payload ? 1 : chargedSegments(m.content),
      tag: m.tag ?? send.tag ?? null,
      custom: m.custom ?? send.custom ?? null,
      payload: m.payload ?? null,
    })),
  };
}
