import type { Base } from './base.ts';
import { createAccount, getAccount, listAccounts, publicAccount, setAccountActive, type AccountQuery } from './accounts/accounts.ts';
import { issueApiKey, listApiKeys, revokeApiKey } from './accounts/api-keys.ts';
import { addLedgerEntry } from './billing/ledger.ts';
import { fromMicros, toMicros } from './billing/money.ts';
import { createRoute, fallbackProblems, grantRoute, listGrantedRoutes, listRoutes, operatorRoute, setRouteFallback } from './routing/routes.ts';
import { createContactGroup, ensureContactGroup } from './contacts/groups.ts';
import { importContacts, type ContactRow, type ImportProgress } from './contacts/import.ts';
import { notFound, validation } from './common/errors.ts';
import { checkLegs, readLegs, replaceLegs, routeChannel, type Leg } from './routing/legs.ts';
import type { MessageStatus } from './db/tables.ts';
import { getCallbacks, listCallbackDeliveries, setCallbacks } from './events/callbacks.ts';
import { getOptOutKeywords, setOptOutKeywords } from './events/optout.ts';
import { clusterView } from './dispatch/cluster.ts';
import { waitingMessages } from './messaging/outbox.ts';
import { getAccountRateLimit, setAccountRateLimit, type AccountRateLimit } from './accounts/rate-limits.ts';

const money = (field: string, value: number | string): number => {
  const micros = toMicros(value);
  if (micros === null) throw validation([`${field}: ${JSON.stringify(value)} is not an amount with at most 6 decimals`]);
  return micros;
};

function checkTimezone(tz: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz;
  } catch {
    throw validation([`timezone: "${tz}" is not an IANA time zone (e.g. America/Sao_Paulo)`]);
  }
}

/** Largest page of the operator's lists (accounts, keys, routes). */
export const MAX_PAGE = 1000;
export const ACCOUNT_STATUSES = ['active', 'deactivated', 'all'] as const;
export const ACCOUNT_ORDERS = ['newest', 'id'] as const;

const whole = (field: string, value: number, min: number, max: number): number => {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw validation([`${field}: must be a whole number from ${min} to ${max}`]);
  return value;
};

/** A page as the lists take it; the HTTP edge checks the same bounds in its schema, the CLI relies on this. */
function checkPage(page: { skip?: number | undefined; limit?: number | undefined }): { skip: number; limit: number } {
  return { skip: whole('skip', page.skip ?? 0, 0, Number.MAX_SAFE_INTEGER), limit: whole('limit', page.limit ?? 100, 1, MAX_PAGE) };
}

function oneOf<T extends string>(field: string, allowed: readonly T[], value: string | undefined): T | undefined {
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  throw validation([`${field}: must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`]);
}

/** An account's rate limit as the operator sees it: its setting, and what the Gateway interface applies (null: no limit). */
function rateLimitView(accountId: number, perSecond: AccountRateLimit, defaultPerSecond: number) {
  const gateway = perSecond === 'off' ? null : perSecond === 'default' ? (defaultPerSecond === 0 ? null : defaultPerSecond) : perSecond;
  return { accountId, perSecond, gatewayPerSecond: gateway };
}

/**
 * What the operator of the gateway can do (docs/decisions.md, "Keys and accounts"):
 * the admin HTTP API and the CLI are two edges over these use cases. They
 * need only the base (src/base.ts): the HTTP app passes its core, the CLI
 * the base alone.
 */
export function operator(core: Base) {
  const db = core.db.kysely;
  return {
    async createAccount(input: {
      name: string;
      role?: 'CUSTOMER' | 'RESELLER' | undefined;
      timezone?: string | undefined;
      balance?: number | string | undefined;
    }) {
      const timezone = checkTimezone(input.timezone ?? core.config.DEFAULT_TIMEZONE);
      const balance = money('balance', input.balance ?? 0);
      if (balance < 0) throw validation(['balance: must not be negative']);
      const row = await db.transaction().execute((tx) => createAccount(tx, { name: input.name.trim(), role: input.role ?? 'CUSTOMER', timezone, balance }));
      return publicAccount(row);
    },
    async getAccount(id: number) {
      return publicAccount(await getAccount(db, id));
    },
    /** Accounts, newest first (or by id), filtered by part of the name and by status (docs/operator.md). */
    async listAccounts(query: {
      skip?: number | undefined;
      limit?: number | undefined;
      name?: string | undefined;
      status?: string | undefined;
      order?: string | undefined;
    }) {
      const q: AccountQuery = {
        ...checkPage(query),
        name: query.name === undefined || query.name === '' ? undefined : query.name,
        status: oneOf('status', ACCOUNT_STATUSES, query.status),
        order: oneOf('order', ACCOUNT_ORDERS, query.order),
      };
      return listAccounts(db, q);
    },
    /**
     * Deactivates (false) or reactivates (true) an account: the keys of a
     * deactivated account, and of the child users of a deactivated reseller,
     * are refused on both interfaces; what it already had accepted is still
     * sent (docs/operator.md). The key cache forgets at once here, within its
     * lifetime in other processes.
     */
    async setAccountActive(accountId: number, active: boolean) {
      const row = await setAccountActive(db, accountId, active);
      core.auth.invalidate();
      return publicAccount(row);
    },
    /** The account's request rate limit on the HTTP interfaces (docs/operations.md, "Rate limits"). */
    async getRateLimit(accountId: number) {
      return rateLimitView(accountId, await getAccountRateLimit(db, accountId), core.config.RATE_LIMIT_PER_SECOND);
    },
    /**
     * Sets it: N requests a second, 'off' (no limit) or 'default'. It applies at
     * once in this process, within a few seconds in the others (RATE_LIMIT_CACHE_MS).
     */
    async setRateLimit(accountId: number, perSecond: AccountRateLimit) {
      return rateLimitView(accountId, await setAccountRateLimit(db, accountId, perSecond), core.config.RATE_LIMIT_PER_SECOND);
    },
    /** The account's keys (revoked ones too): ids, last characters, dates, allow-lists; never a key. */
    async listKeys(accountId: number, page: { skip?: number | undefined; limit?: number | undefined } = {}) {
      const checked = checkPage(page);
      await getAccount(db, accountId);
      return listApiKeys(db, accountId, checked);
    },
    /** Every route, by id: channel, connection, prices, SMS fallback. */
    async listRoutes(page: { skip?: number | undefined; limit?: number | undefined } = {}) {
      return listRoutes(db, checkPage(page));
    },
    /** The routes granted to the account, by id. */
    async listAccountRoutes(accountId: number, page: { skip?: number | undefined; limit?: number | undefined } = {}) {
      const checked = checkPage(page);
      await getAccount(db, accountId);
      return listGrantedRoutes(db, accountId, checked);
    },
    async issueKey(accountId: number, allowedIps?: string[]) {
      return issueApiKey(db, accountId, allowedIps);
    },
    async revokeKey(keyId: number) {
      await revokeApiKey(db, keyId);
      core.auth.invalidate();
    },
    async addCredits(accountId: number, amount: number | string, reason?: string) {
      const micros = money('amount', amount);
      const balance = await db.transaction().execute(async (tx) => {
        const account = await getAccount(tx, accountId);
        if (account.balance + micros < 0) {
          throw validation([`amount: ${fromMicros(micros)} would take the balance (${fromMicros(account.balance)}) below zero`]);
        }
        return addLedgerEntry(tx, accountId, micros, reason ?? 'operator credit', null);
      });
      return { balance: fromMicros(balance) };
    },
    async createRoute(input: {
      displayName: string;
      productName: string;
      productId: number;
      farePrice: number | string;
      replyFarePrice: number | string;
      channel: 'SMS' | 'RCS';
      connector: string;
      fallbackRouteId?: number | null | undefined;
    }) {
      const farePrice = money('farePrice', input.farePrice);
      const replyFarePrice = money('replyFarePrice', input.replyFarePrice);
      if (farePrice < 0 || replyFarePrice < 0) throw validation(['farePrice/replyFarePrice: must not be negative']);
      const carrier = core.carriers.get(input.connector);
      if (!carrier) throw validation([`connector: no carrier connection named "${input.connector}"; configured: ${[...core.carriers.keys()].join(', ')}`]);
      if (!carrier.channels.includes(input.channel)) throw validation([`channel: connection "${input.connector}" does not carry ${input.channel}`]);
      const fallbackRouteId = input.fallbackRouteId ?? null;
      const row = await db.transaction().execute(async (tx) => {
        const problems = fallbackRouteId === null ? [] : await fallbackProblems(tx, null, input.channel, fallbackRouteId);
        if (problems.length) throw validation(problems);
        return createRoute(tx, { ...input, farePrice, replyFarePrice, fallbackRouteId });
      });
      core.routes.invalidate();
      return operatorRoute(row);
    },
    /** Sets (or with null clears) an RCS route's SMS fallback route (src/rcs/fallback.ts). */
    async setRouteFallback(routeId: number, fallbackRouteId: number | null) {
      const row = await db.transaction().execute((tx) => setRouteFallback(tx, routeId, fallbackRouteId));
      core.routes.invalidate();
      return operatorRoute(row);
    },
    /** The route's legs (src/routing/legs.ts), in order; none: its connector carries every message. */
    async routeLegs(routeId: number) {
      await routeChannel(db, routeId);
      return { routeId, legs: await readLegs(db, routeId) };
    },
    /**
     * Replaces the route's legs (empty: none). A leg without prefixes carries
     * any receiver; priority defaults to its place in the list (1, 2, ...),
     * weight to 1. Seen at once by this process's sends, within a second by
     * other processes on the database.
     */
    async setRouteLegs(
      routeId: number,
      legs: { connector: string; prefixes?: string[] | undefined; priority?: number | undefined; weight?: number | undefined }[],
    ) {
      const list: Leg[] = legs.map((leg, i) => ({
        connector: leg.connector,
        prefixes: leg.prefixes ?? [],
        priority: leg.priority ?? i + 1,
        weight: leg.weight ?? 1,
      }));
      await db.transaction().execute(async (tx) => {
        checkLegs(list, await routeChannel(tx, routeId), core.carriers);
        await replaceLegs(tx, routeId, list);
      });
      core.legs.invalidate();
      return { routeId, legs: list };
    },
    /** One message as the operator sees it: where it is, and the carrier connection (route leg) that carries it. */
    async getMessage(id: string) {
      const row = await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound(`Message ${id}`);
      const request = await db.selectFrom('requests').select('source').where('id', '=', row.request_id).executeTakeFirst();
      return {
        id: row.id,
        accountId: Number(row.account_id),
        requestId: row.request_id,
        source: request?.source ?? null,
        routeId: Number(row.route_id),
        connector: row.connector,
        channel: row.channel,
        receiver: row.receiver,
        status: row.status,
        statusDetails: row.status_details,
        attempts: Number(row.attempts),
        carrierId: row.carrier_id,
        createdAt: new Date(Number(row.created_at)).toISOString(),
        statusAt: new Date(Number(row.status_at)).toISOString(),
      };
    },
    /**
     * Each carrier connection as the dispatcher sees it: channels, whether it
     * takes messages now (bind up), its free window, and the messages waiting
     * for it in the outbox (of every gateway process sharing the database).
     */
    async carriers() {
      const rows = await waitingMessages(db);
      const waiting = (connector: string, status: MessageStatus) => rows.find((r) => r.connector === connector && r.status === status)?.n ?? 0;
      return [...core.carriers.values()].map((c) => ({
        name: c.name,
        channels: [...c.channels],
        ready: c.ready(),
        capacity: c.capacity(),
        queued: waiting(c.name, 'QUEUED'),
        sending: waiting(c.name, 'SENDING'),
        scheduled: waiting(c.name, 'SCHEDULED'),
      }));
    },
    /** The gateway processes alive on the database and the outbox per connection (src/dispatch/cluster.ts); `self`: the asking process's id. */
    async cluster(self: string | null = null) {
      return clusterView(db, core.config.DISPATCH_LEASE_MS, self);
    },
    async grantRoute(accountId: number, routeId: number) {
      await getAccount(db, accountId);
      await grantRoute(db, accountId, routeId);
      core.routes.invalidate();
    },
    async createContactGroup(accountId: number, name: string, description: string | null, numbers: string[]) {
      return db.transaction().execute(async (tx) => {
        await getAccount(tx, accountId);
        return createContactGroup(tx, accountId, name, description, numbers);
      });
    },
    /**
     * Adds named contacts to the account's group of that name, creating it when new: rows as they are read
     * (a CSV file of any size, readContactsCsv), written in batches (src/contacts/import.ts).
     */
    async importContactGroup(accountId: number, name: string, rows: AsyncIterable<ContactRow>, onProgress?: (progress: ImportProgress) => void) {
      const groupId = await db.transaction().execute(async (tx) => {
        await getAccount(tx, accountId);
        return ensureContactGroup(tx, accountId, name);
      });
      return { id: groupId, ...(await importContacts(db, accountId, groupId, rows, onProgress)) };
    },
    // --- events (src/events, docs/webhooks.md): legacy callbacks and opt-out keywords ---
    /** Sets the account's Legacy v2 callback URLs (absent or null turns one off). */
    async setCallbacks(accountId: number, input: { replyUrl?: string | null | undefined; statusUrl?: string | null | undefined }) {
      await getAccount(db, accountId);
      return setCallbacks(db, (url) => core.checkUrl(url), accountId, input);
    },
    async getCallbacks(accountId: number) {
      await getAccount(db, accountId);
      return getCallbacks(db, accountId);
    },
    async callbackDeliveries(accountId: number, page: { skip: number; limit: number }) {
      await getAccount(db, accountId);
      return listCallbackDeliveries(db, accountId, page);
    },
    /** Replaces the account's opt-out keywords (an empty list turns opt-out by keyword off). */
    async setOptOutKeywords(accountId: number, keywords: string[]) {
      await getAccount(db, accountId);
      return { keywords: await setOptOutKeywords(db, accountId, keywords) };
    },
    async getOptOutKeywords(accountId: number) {
      await getAccount(db, accountId);
      return { keywords: await getOptOutKeywords(db, accountId) };
    },
  };
}

export type Operator = ReturnType<typeof operator>;
