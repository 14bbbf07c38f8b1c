import type { Principal } from '../accounts/api-keys.ts';
import type { Executor } from '../db/executor.ts';
import type { RouteRow } from '../db/tables.ts';
import type { AccountRoutes } from '../routing/account-routes.ts';
import { getBalance } from '../billing/ledger.ts';
import { DomainError } from '../common/errors.ts';
import type { AcceptInput, AcceptResult } from './accept.ts';
import { acceptInput } from './send.ts';

/** What the legacy send use case needs of the process. */
export interface LegacySendDeps {
  db: Executor;
  routes: AccountRoutes;
  accept(input: AcceptInput): Promise<AcceptResult>;
}

/** The account has no SMS route granted (the legacy interface words it in its language). */
export class NoSmsRouteError extends DomainError {
  constructor() {
    super('VALIDATION', 'The account has no SMS route enabled. Contact support.');
  }
}

/** Legacy sends name no route: the account's first SMS route carries them (read through the routes cache, like gateway sends). */
export async function legacyRoute(routes: AccountRoutes, accountId: number): Promise<RouteRow> {
  const route = (await routes.list(accountId)).find((r) => r.channel === 'SMS');
  if (!route) throw new NoSmsRouteError();
  return route;
}

/**
 * At least one credit is needed to send on the legacy interface. A credit
 * is one SMS segment at the route's fare, so the balance must cover one
 * segment (and be positive on a free route); accept then refuses a request
 * the balance cannot cover whole.
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
  /** The route to send on; when absent, the account's first SMS route. */
  route?: RouteRow;
}

/**
 * One text to receivers on the legacy interface. It goes through the same
 * accept as gateway sends (source `legacy`), so it shares the queue,
 * charging, blocklist and reports.
 */
export async function sendLegacy(deps: LegacySendDeps, principal: Principal, send: LegacySend): Promise<AcceptResult> {
  const route = send.route ?? (await legacyRoute(deps.routes, principal.accountId));
  await requireOneCredit(deps.db, principal.accountId, route);
  return deps.accept(
    acceptInput({
      accountId: principal.accountId,
      route,
      source: 'legacy',
      sender: send.sender,
      scheduleAt: send.scheduleAt,
      messages: send.receivers.map((receiver) => ({ receiver, content: send.content })),
    }),
  );
}
