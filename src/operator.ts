import type { Core } from './core.ts';
import { createAccount, getAccount, publicAccount } from './accounts/accounts.ts';
import { issueApiKey, revokeApiKey } from './accounts/api-keys.ts';
import { addLedgerEntry } from './billing/ledger.ts';
import { fromMicros, toMicros } from './billing/money.ts';
import { createRoute, fallbackProblems, grantRoute, operatorRoute, setRouteFallback } from './routing/routes.ts';
import { addContacts, createContactGroup, ensureContactGroup } from './contacts/groups.ts';
import { validation } from './common/errors.ts';
import type { MessageStatus } from './db/tables.ts';
import { getCallbacks, listCallbackDeliveries, setCallbacks } from './events/callbacks.ts';
import { getOptOutKeywords, setOptOutKeywords } from './events/optout.ts';
import { waitingMessages } from './messaging/outbox.ts';

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

/**
 * What the operator of the gateway can do (docs/decisions.md, "Keys and accounts"):
 * the admin HTTP API and the CLI are two edges over these use cases.
 */
export function operator(core: Core) {
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
    /** Adds named contacts to the account's group of that name, creating it when new. */
    async importContactGroup(accountId: number, name: string, contacts: { phone: string; name: string | null }[]) {
      return db.transaction().execute(async (tx) => {
        await getAccount(tx, accountId);
        const groupId = await ensureContactGroup(tx, accountId, name);
        return { id: groupId, ...(await addContacts(tx, accountId, groupId, contacts)) };
      });
    },
    // --- events (src/events, docs/webhooks.md): legacy callbacks and opt-out keywords ---
    /** Sets the account's Legacy v2 callback URLs (absent or null turns one off). */
    async setCallbacks(accountId: number, input: { replyUrl?: string | null | undefined; statusUrl?: string | null | undefined }) {
      await getAccount(db, accountId);
      return setCallbacks(db, (url) => core.events.fetcher.check(url), accountId, input);
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
