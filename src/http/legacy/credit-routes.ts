import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../accounts/api-keys.ts';
import { getBalance } from '../../billing/ledger.ts';
import { fromMicros, toMicros } from '../../billing/money.ts';
import { Envelope, LegacyProblem, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, DateRange, IdParams, Nullable, idFrom, security, tags } from './schemas.ts';
import { formatDate, reportRange } from './dates.ts';
import { findChild, ledgerHistory } from '../../billing/history.ts';
import { transferCredits, TransferError } from '../../billing/transfer.ts';
import type { LegacyContext } from './context.ts';

const Amount = Type.Union([Type.String({ maxLength: 30 }), Type.Number()], {
  description: 'Credits to move to the sub-account (negative: back to the reseller)',
});
const CreditsQuery = Type.Object({ id: Type.Optional(Type.String({ maxLength: 200 })), Amount: Type.Optional(Amount) });
const TransferBody = Type.Union([Type.Object({ Amount: Type.Optional(Amount) }), Type.Null()]);
const HistoryQuery = Type.Object({ id: Type.Optional(Type.String({ maxLength: 200 })), ...DateRange });

const Entry = Type.Object({
  Date: Nullable(Type.String()),
  Amount: Type.Number(),
  Balance: Type.Number(),
  Reason: Type.String(),
  RequestUniqueId: Nullable(Type.String()),
});

/** /credits (balance, transfers to sub-accounts) and /balancehistory (ledger). */
export async function creditRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const common = { tags, security, headers: AuthKeyHeader };
  /** Own account without an id (or with its own id); else a sub-account of the caller. */
  async function target(request: { params: unknown; query: unknown; principal: Principal }): Promise<{ id: number; own: boolean }> {
    const id = idFrom(request);
    const self = request.principal.accountId;
    if (!id || id === String(self)) return { id: self, own: true };
    const child = await findChild(ctx.db, self, id);
    if (!child) throw new LegacyProblem('NOT_FOUND', (x) => x.subaccountNotFound(id));
    return { id: child.id, own: false };
  }

  const balance = async (request: FastifyRequest) => {
    const who = await target(request);
    const value = fromMicros(await getBalance(ctx.db, who.id));
    return ok(value, who.own ? ctx.t.balance : ctx.t.subaccountBalance(who.id));
  };
  const balanceSchema = {
    ...common,
    summary: 'Balance of the account, or of a sub-account (id in the path or ?id=)',
    response: { 200: Envelope(Type.Number()), ...errorResponses },
  };
  app.get('/credits', { schema: { ...balanceSchema, querystring: CreditsQuery } }, balance);
  app.get('/credits/:id', { schema: { ...balanceSchema, params: IdParams, querystring: CreditsQuery } }, balance);

  const transfer = async (request: FastifyRequest<{ Querystring: Static<typeof CreditsQuery>; Body: Static<typeof TransferBody> }>) => {
    if (request.principal.role !== 'RESELLER') throw new LegacyProblem('FORBIDDEN', (x) => x.resellerOnly);
    const id = idFrom(request);
    if (!id) throw badRequest((x) => x.required('id'));
    const raw = request.query.Amount ?? request.body?.Amount;
    const amount = raw === undefined ? null : toMicros(raw);
    if (amount === null || amount === 0) throw badRequest((x) => x.amountInvalid);
    const child = await findChild(ctx.db, request.principal.accountId, id);
    if (!child) throw new LegacyProblem('NOT_FOUND', (x) => x.subaccountNotFound(id));
    try {
      const after = await transferCredits(ctx.db, ctx.core.db.dialect, request.principal.accountId, child.id, amount);
      const shown = fromMicros(Math.abs(amount));
      return ok(fromMicros(after.child), amount > 0 ? ctx.t.transferred(shown, child.id) : ctx.t.transferredBack(shown, child.id));
    } catch (err) {
      if (err instanceof TransferError) throw badRequest((x) => (err.shortfall === 'RESELLER_BALANCE' ? x.resellerInsufficient : x.subaccountInsufficient));
      throw err;
    }
  };
  const transferSchema = {
    ...common,
    summary: "Move credits from the reseller to a sub-account (RESELLER keys only); Object is the sub-account's new balance",
    querystring: CreditsQuery,
    body: TransferBody,
    response: { 200: Envelope(Type.Number()), 403: errorResponses[400], ...errorResponses },
  };
  app.put('/credits', { schema: transferSchema }, transfer);
  app.put('/credits/:id', { schema: { ...transferSchema, params: IdParams } }, transfer);

  const history = async (request: FastifyRequest<{ Querystring: Static<typeof HistoryQuery> }>) => {
    const who = await target(request);
    const tz = request.principal.timezone;
    const range = reportRange(request.query, tz, 30, 366);
    const r = await ledgerHistory(ctx.db, who.id, { ...range, skip: request.query.Skip ?? 0, limit: request.query.Limit ?? 10_000 });
    const entries = r.entries.map((e) => ({
      Date: formatDate(e.at, tz),
      Amount: fromMicros(e.amount),
      Balance: fromMicros(e.balanceAfter),
      Reason: e.reason,
      RequestUniqueId: e.requestId,
    }));
    return ok(entries, ctx.t.history(entries.length, r.total));
  };
  const historySchema = {
    ...common,
    summary: 'Balance history (ledger), newest first',
    querystring: HistoryQuery,
    response: { 200: Envelope(Type.Array(Entry)), ...errorResponses },
  };
  app.get('/balancehistory', { schema: historySchema }, history);
  app.get('/balancehistory/:id', { schema: { ...historySchema, params: IdParams } }, history);
}
