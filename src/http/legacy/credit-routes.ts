import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../accounts/api-keys.ts';
import { getBalance } from '../../billing/ledger.ts';
import { fromMicros, toMicros } from '../../billing/money.ts';
import { Envelope, LegacyProblem, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, DateRange, IdParams, Nullable, idFrom } from './schemas.ts';
import { alias, legacyDoc, t as pt } from './docs.ts';
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

const tags = ['Legacy v2: credits'];
const NO_SUBACCOUNT = { description: 'No sub-account with this id or exact name under the caller.', message: pt.subaccountNotFound('Loja Centro') };
const DOCS = {
  balance: legacyDoc({
    operationId: 'legacyGetCredits',
    tags,
    summary: 'Balance of the account, or of a sub-account (id in the path or ?id=)',
    description: `The balance in credits (currency units, the same number as the gateway's GET /balance), a bare number in \`Object\`.
With an id (in the path or \`?id=\`: the id or exact name of a direct sub-account), that sub-account's balance.`,
    success: { description: 'The balance.', object: 99.7, message: pt.balance },
    errors: { 400: { description: 'A query parameter is invalid.', message: pt.invalidField('id') }, 404: NO_SUBACCOUNT },
  }),
  transfer: legacyDoc({
    operationId: 'legacyTransferCredits',
    tags,
    summary: "Move credits from the reseller to a sub-account (RESELLER keys only); Object is the sub-account's new balance",
    description: `Moves \`Amount\` (query or body; at most 6 decimals, not zero) from the reseller to the sub-account named by the id (path
or \`?id=\`: id or exact name); a negative amount moves it back. One transaction with a ledger entry on each side; refused
when the giving side lacks the balance. \`Object\` is the sub-account's new balance.`,
    success: { description: "Moved: the sub-account's new balance.", object: 10, message: pt.transferred(10, 2051) },
    errors: {
      400: { description: 'No id, `Amount` missing, zero or with more than 6 decimals, or the giving side lacks the balance.', message: pt.amountInvalid },
      403: { description: "The key is a customer's: only resellers transfer credits.", message: pt.resellerOnly },
      404: NO_SUBACCOUNT,
    },
    requestExample: { Amount: 10 },
  }),
  history: legacyDoc({
    operationId: 'legacyGetBalanceHistory',
    tags,
    summary: 'Balance history (ledger), newest first',
    description: `The ledger entries of the account (or, with an id, of a sub-account) from \`StartDate\` to \`EndDate\` (default: the
last 30 days; at most 366 days), newest first: amount, balance right after, reason and the request id of sends.
\`Skip\`/\`Limit\` page them (default 0 / 10,000).`,
    success: {
      description: 'The entries of the page; `Message` says how many of how many.',
      object: [
        { Date: '2026-11-22T17:02:47-03:00', Amount: -10, Balance: 89.7, Reason: 'transfer to account 2051', RequestUniqueId: null },
        { Date: '2026-11-22T16:40:12-03:00', Amount: -0.1, Balance: 99.7, Reason: 'send', RequestUniqueId: '01a204da-7993-7576-be8d-fdf9450e1c0e' },
      ],
      message: pt.history(2, 2),
    },
    errors: {
      400: { description: 'A date is unreadable, the period is longer than 366 days, or `Skip`/`Limit` is out of range.', message: pt.rangeTooLong(366) },
      404: NO_SUBACCOUNT,
    },
  }),
};

/** /credits (balance, transfers to sub-accounts) and /balancehistory (ledger). */
export async function creditRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const common = { headers: AuthKeyHeader };
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
    response: { 200: Envelope(Type.Number()), ...errorResponses },
  };
  app.get('/credits', { schema: { ...balanceSchema, ...DOCS.balance, querystring: CreditsQuery } }, balance);
  app.get(
    '/credits/:id',
    { schema: { ...balanceSchema, ...alias(DOCS.balance, 'legacyGetCreditsById'), params: IdParams, querystring: CreditsQuery } },
    balance,
  );

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
    querystring: CreditsQuery,
    body: TransferBody,
    response: { 200: Envelope(Type.Number()), 403: errorResponses[400], ...errorResponses },
  };
  app.put('/credits', { schema: { ...transferSchema, ...DOCS.transfer } }, transfer);
  app.put('/credits/:id', { schema: { ...transferSchema, ...alias(DOCS.transfer, 'legacyTransferCreditsById'), params: IdParams } }, transfer);

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
    querystring: HistoryQuery,
    response: { 200: Envelope(Type.Array(Entry)), ...errorResponses },
  };
  app.get('/balancehistory', { schema: { ...historySchema, ...DOCS.history } }, history);
  app.get('/balancehistory/:id', { schema: { ...historySchema, ...alias(DOCS.history, 'legacyGetBalanceHistoryById'), params: IdParams } }, history);
}
