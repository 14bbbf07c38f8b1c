import type { Principal } from '../../accounts/api-keys.ts';
import type { Executor } from '../../db/executor.ts';
import type { RouteRow } from '../../db/tables.ts';
import type { AcceptResult } from '../../messaging/accept.ts';
import type { AccountRoutes } from '../../routing/account-routes.ts';
import { getBalance } from '../../billing/ledger.ts';
import { DomainError } from '../../common/errors.ts';
import { badRequest } from './envelope.ts';
import { formatDate } from './dates.ts';
import type { LegacyContext } from './context.ts';
import type { Texts } from './texts.ts';
import { acceptInput } from '../../messaging/send.ts';

/** Legacy sends name no route: the account's first SMS route carries them (read through the routes cache, like gateway sends). */
export async function legacyRoute(routes: AccountRoutes, accountId: number): Promise<RouteRow> {
  const route = (await routes.list(accountId)).find((r) => r.channel === 'SMS');
  if (!route) throw badRequest((t) => t.noRoute);
  return route;
}

/**
 * Spec 7.3 / 8: at least 1 credit is needed to send. A credit is one SMS
 * segment at the route's fare, so the balance must cover one segment (and
 * be positive on a free route); accept then refuses a request the balance
 * cannot cover whole.
 */
export async function requireOneCredit(db: Executor, accountId: number, route: RouteRow): Promise<void> {
  const balance = await getBalance(db, accountId);
  if (balance <= 0 || balance < route.fare_price) throw new DomainError('INSUFFICIENT_BALANCE', 'At least 1 credit is needed to send.');
}

export interface LegacySend {
  sender: string | null;
  content: string;
  receivers: string[];
  /** Epoch ms; null = now. */
  scheduleAt: number | null;
}

/**
 * Every legacy send goes through the gateway's accept (source `legacy`),
 * so it shares the queue, charging, blocklist and reports.
 */
export async function sendLegacy(ctx: LegacyContext, principal: Principal, send: LegacySend, route?: RouteRow): Promise<AcceptResult> {
  const chosen = route ?? (await legacyRoute(ctx.core.routes, principal.accountId));
  await requireOneCredit(ctx.db, principal.accountId, chosen);
  return ctx.core.accept(
    acceptInput({
      accountId: principal.accountId,
      route: chosen,
      source: 'legacy',
      sender: send.sender,
      scheduleAt: send.scheduleAt,
      messages: send.receivers.map((receiver) => ({ receiver, content: send.content })),
    }),
  );
}

/** The Message of a send: how many will receive it, what it cost, blocked numbers skipped. */
export function sentText(t: Texts, r: AcceptResult, scheduleAt: number | null, timezone: string): string {
  const sending = r.messages - r.blocked;
  return scheduleAt === null ? t.accepted(sending, r.credits, r.blocked) : t.scheduled(sending, r.credits, r.blocked, formatDate(scheduleAt, timezone) ?? '');
}

/** Content and ForceContent: blank is absent. */
export const textOf = (value: string | undefined | null): string | null => (value !== undefined && value !== null && value.trim() !== '' ? value.trim() : null);
