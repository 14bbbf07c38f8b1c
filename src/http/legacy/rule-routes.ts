import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deleteRule, findRule, listRules, saveRule, type ContextRule } from '../../contextrules/rules.ts';
import { Envelope, LegacyProblem, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, IdParams, IdQuery, Name, Nullable, idFrom } from './schemas.ts';
import { alias, legacyDoc, t as pt } from './docs.ts';
import { formatDate } from './dates.ts';
import { textOf } from './sending.ts';
import type { LegacyContext } from './context.ts';

const Keywords = Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })], {
  description: 'Keywords, comma-separated (or a list); matched as whole words, ignoring case and accents',
});
const Response = Type.String({ maxLength: 2000 });

const RuleBody = Type.Object(
  {
    Name: Name('Rule name, unique in the account; saving an existing name replaces that rule'),
    Message: Type.String({ maxLength: 2000, description: 'Text sent by /sendcontextmessage (unless ForceContent is given)' }),
    PositiveContext: Type.Optional(Keywords),
    PositiveResponse: Type.Optional(Response),
    NegativeContext: Type.Optional(Keywords),
    NegativeResponse: Type.Optional(Response),
    DefaultResponse: Type.Optional(Type.String({ maxLength: 2000, description: 'Answer to a reply that matches neither (or both) keyword lists' })),
  },
  { required: ['Name', 'Message'] },
);
const RuleRef = Type.Union([Type.Object({ Name: Type.Optional(Name('Rule name')) }), Type.Null()]);

const Rule = Type.Object({
  Id: Type.Integer(),
  Name: Type.String(),
  Message: Type.String(),
  PositiveContext: Type.String(),
  PositiveResponse: Nullable(Type.String()),
  NegativeContext: Type.String(),
  NegativeResponse: Nullable(Type.String()),
  DefaultResponse: Nullable(Type.String()),
  CreatedDate: Nullable(Type.String()),
  UpdatedDate: Nullable(Type.String()),
});

const tags = ['Legacy v2: context rules'];
const RULE = {
  Id: 3,
  Name: 'Confirmação',
  Message: 'Confirma a consulta de amanhã? Responda SIM ou NÃO',
  PositiveContext: 'sim,confirmo',
  PositiveResponse: 'Consulta confirmada!',
  NegativeContext: 'nao,cancelar',
  NegativeResponse: 'Consulta cancelada. Para remarcar, ligue (11) 4004-1234.',
  DefaultResponse: 'Não entendi. Responda SIM ou NÃO.',
  CreatedDate: '2026-11-22T16:40:12-03:00',
  UpdatedDate: '2026-11-22T16:40:12-03:00',
};
const NO_RULE = { description: 'No rule with this name.', message: pt.ruleNotFound('Confirmação') };
const DOCS = {
  save: legacyDoc({
    operationId: 'legacySaveContextRule',
    tags,
    summary: 'Create a context rule, or replace the one with the same Name',
    description: `A rule for /sendcontextmessage: its \`Message\` is sent, and a receiver's reply within 72 hours that contains a
\`PositiveContext\` keyword gets \`PositiveResponse\`, a \`NegativeContext\` one \`NegativeResponse\`, anything else
\`DefaultResponse\` (at most 3 times). Keywords are comma-separated (or a list), matched as whole words ignoring case and
accents. Saving an existing \`Name\` replaces that rule.`,
    success: { description: 'Created or replaced: the rule; `Message` says which.', object: RULE, message: pt.ruleCreated('Confirmação') },
    errors: { 400: { description: '`Name` or `Message` missing, or a field too long.', message: pt.ruleMessageRequired } },
    requestExample: {
      Name: 'Confirmação',
      Message: 'Confirma a consulta de amanhã? Responda SIM ou NÃO',
      PositiveContext: 'sim,confirmo',
      PositiveResponse: 'Consulta confirmada!',
      NegativeContext: 'nao,cancelar',
      NegativeResponse: 'Consulta cancelada. Para remarcar, ligue (11) 4004-1234.',
      DefaultResponse: 'Não entendi. Responda SIM ou NÃO.',
    },
  }),
  list: legacyDoc({
    operationId: 'legacyListContextRules',
    tags,
    summary: 'Context rules: all, or one (name in the path or ?id=)',
    description: 'The context rules of the account; with a name (path or `?id=`), a list of that one.',
    success: { description: 'The rules.', object: [RULE], message: pt.rules(1) },
    errors: { 400: { description: 'The name is over 200 characters.', message: pt.tooLong('id', 200) }, 404: NO_RULE },
  }),
  remove: legacyDoc({
    operationId: 'legacyDeleteContextRule',
    tags,
    summary: 'Delete a context rule; conversations waiting on it end',
    description: "Deletes the rule named in the path, `?id=` or `Name` of the body; receivers' answers to its sends no longer get replies.",
    success: { description: 'Deleted.', object: null, message: pt.ruleDeleted('Confirmação') },
    errors: { 400: { description: 'No rule named.', message: pt.ruleNameRequired }, 404: NO_RULE },
    requestExample: { Name: 'Confirmação' },
  }),
};

/** /sendingcontextrules: the context (auto-reply) rules that /sendcontextmessage uses. */
export async function ruleRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;
  const common = { headers: AuthKeyHeader };
  const shape = (r: ContextRule, tz: string) => ({
    Id: r.id,
    Name: r.name,
    Message: r.message,
    PositiveContext: r.positiveContext.join(','),
    PositiveResponse: r.positiveResponse,
    NegativeContext: r.negativeContext.join(','),
    NegativeResponse: r.negativeResponse,
    DefaultResponse: r.defaultResponse,
    CreatedDate: formatDate(r.createdAt, tz),
    UpdatedDate: formatDate(r.updatedAt, tz),
  });

  app.post<{ Body: Static<typeof RuleBody> }>(
    '/sendingcontextrules',
    {
      schema: {
        ...common,
        ...DOCS.save,
        body: RuleBody,
        response: { 200: Envelope(Rule), ...errorResponses },
      },
    },
    async (request) => {
      const b = request.body;
      const name = textOf(b.Name);
      if (name === null) throw badRequest((x) => x.ruleNameRequired);
      const message = textOf(b.Message);
      if (message === null) throw badRequest((x) => x.ruleMessageRequired);
      const { rule, created } = await saveRule(ctx.db, request.principal.accountId, {
        name,
        message,
        positiveContext: b.PositiveContext ?? null,
        positiveResponse: b.PositiveResponse ?? null,
        negativeContext: b.NegativeContext ?? null,
        negativeResponse: b.NegativeResponse ?? null,
        defaultResponse: b.DefaultResponse ?? null,
      });
      return ok(shape(rule, request.principal.timezone), created ? t.ruleCreated(rule.name) : t.ruleUpdated(rule.name));
    },
  );

  const list = async (request: FastifyRequest) => {
    const ref = idFrom(request);
    const accountId = request.principal.accountId;
    let rules: ContextRule[];
    if (ref === undefined) rules = await listRules(ctx.db, accountId);
    else {
      const rule = await findRule(ctx.db, accountId, ref);
      if (!rule) throw new LegacyProblem('NOT_FOUND', (x) => x.ruleNotFound(ref));
      rules = [rule];
    }
    return ok(
      rules.map((r) => shape(r, request.principal.timezone)),
      t.rules(rules.length),
    );
  };
  const listSchema = {
    ...common,
    response: { 200: Envelope(Type.Array(Rule)), ...errorResponses },
  };
  app.get('/sendingcontextrules', { schema: { ...listSchema, ...DOCS.list, querystring: IdQuery } }, list);
  app.get('/sendingcontextrules/:id', { schema: { ...listSchema, ...alias(DOCS.list, 'legacyGetContextRule'), params: IdParams } }, list);

  const remove = async (request: FastifyRequest<{ Body: Static<typeof RuleRef> }>) => {
    const ref = idFrom(request) ?? textOf(request.body?.Name);
    if (!ref) throw badRequest((x) => x.ruleNameRequired);
    const rule = await findRule(ctx.db, request.principal.accountId, ref);
    if (!rule) throw new LegacyProblem('NOT_FOUND', (x) => x.ruleNotFound(ref));
    await deleteRule(ctx.db, request.principal.accountId, rule.id);
    return ok(null, t.ruleDeleted(rule.name));
  };
  const removeSchema = {
    ...common,
    body: RuleRef,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.delete('/sendingcontextrules', { schema: { ...removeSchema, ...DOCS.remove, querystring: IdQuery } }, remove);
  app.delete('/sendingcontextrules/:id', { schema: { ...removeSchema, ...alias(DOCS.remove, 'legacyDeleteContextRuleById'), params: IdParams } }, remove);
}
