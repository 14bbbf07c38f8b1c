import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { groupPhones } from '../../contacts/groups.ts';
import { findRule } from '../../contextrules/rules.ts';
import { startConversations } from '../../contextrules/conversations.ts';
import { cancelRequest } from '../../messaging/cancel.ts';
import { MAX_RECEIVERS } from '../../messaging/send.ts';
import { DomainError } from '../../common/errors.ts';
import { Envelope, badRequest, errorResponses, ok, LegacyProblem } from './envelope.ts';
import { AuthKeyHeader, Name, Receivers, ScheduleDate, Sender, Text, security, tags } from './schemas.ts';
import { parseReceivers } from './phones.ts';
import { scheduleAt as parseSchedule } from './dates.ts';
import { sentText, textOf } from './sending.ts';
import { legacyRoute, sendLegacy } from '../../messaging/legacy-send.ts';
import { findGroup, touchGroup } from '../../contacts/legacy-groups.ts';
import type { LegacyContext } from './context.ts';

const sendFields = { Sender: Type.Optional(Sender), Receivers, Content: Text('Message text') };
const contextFields = {
  Sender: Type.Optional(Sender),
  Receivers,
  ContextRuleName: Name('Name of a registered context rule'),
  ForceContent: Type.Optional(Text("Text to send instead of the rule's message")),
};
const contactFields = { Sender: Type.Optional(Sender), Content: Text('Message text'), GroupName: Name('Name of a contact group') };
const SendBody = Type.Object(sendFields, { required: ['Receivers', 'Content'] });
const ContextBody = Type.Object(contextFields, { required: ['Receivers', 'ContextRuleName'] });
const ContactBody = Type.Object(contactFields, { required: ['Content', 'GroupName'] });
const ScheduleBody = Type.Object({ ...sendFields, ScheduleDate }, { required: ['Receivers', 'Content', 'ScheduleDate'] });
const ScheduleContextBody = Type.Object({ ...contextFields, ScheduleDate }, { required: ['Receivers', 'ContextRuleName', 'ScheduleDate'] });
const ScheduleContactBody = Type.Object({ ...contactFields, ScheduleDate }, { required: ['Content', 'GroupName', 'ScheduleDate'] });
const CancelBody = Type.Object({ RequestUniqueId: Type.String({ maxLength: 100, description: 'Id returned by the send' }) }, { required: ['RequestUniqueId'] });

const RequestId = Type.Object({ requestUniqueId: Type.String({ description: 'Id of the request (UUID), for reports and cancellation' }) });
const withId = { 200: Envelope(RequestId), ...errorResponses };
const withNull = { 200: Envelope(Type.Null()), ...errorResponses };

type SendFields = Static<typeof SendBody> & { ScheduleDate?: string };
type ContextFields = Static<typeof ContextBody> & { ScheduleDate?: string };
type ContactFields = Static<typeof ContactBody> & { ScheduleDate?: string };

/** Spec 4.9 sends, their scheduled forms, GET /send and /cancelrequest. */
export async function sendRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;
  const deps = { db: ctx.db, routes: ctx.core.routes, accept: ctx.core.accept };
  const when = (request: FastifyRequest, value: string | undefined) => (value === undefined ? null : parseSchedule(value, request.principal.timezone));

  async function plain(request: FastifyRequest, reply: FastifyReply, body: SendFields) {
    const receivers = parseReceivers(body.Receivers);
    const content = textOf(body.Content);
    if (content === null) throw badRequest((x) => x.contentEmpty);
    const at = when(request, body.ScheduleDate);
    const result = await sendLegacy(deps, request.principal, { sender: textOf(body.Sender), content, receivers, scheduleAt: at });
    void reply.header('X-Request-Id', result.requestId);
    return ok({ requestUniqueId: result.requestId }, sentText(t, result, at, request.principal.timezone));
  }

  async function context(request: FastifyRequest, reply: FastifyReply, body: ContextFields) {
    const receivers = parseReceivers(body.Receivers);
    const ruleName = textOf(body.ContextRuleName);
    if (ruleName === null) throw badRequest((x) => x.ruleNameMissing);
    const rule = await findRule(ctx.db, request.principal.accountId, ruleName);
    if (!rule) throw badRequest((x) => x.ruleNotFound(ruleName));
    const content = textOf(body.ForceContent) ?? textOf(rule.message);
    if (content === null) throw badRequest((x) => x.ruleWithoutMessage(rule.name));
    const at = when(request, body.ScheduleDate);
    const result = await sendLegacy(deps, request.principal, { sender: textOf(body.Sender), content, receivers, scheduleAt: at });
    await startConversations(ctx.db, request.principal.accountId, rule, result.requestId, receivers, at ?? Date.now());
    void reply.header('X-Request-Id', result.requestId);
    return { text: sentText(t, result, at, request.principal.timezone), requestId: result.requestId };
  }

  async function contact(request: FastifyRequest, reply: FastifyReply, body: ContactFields) {
    const content = textOf(body.Content);
    if (content === null) throw badRequest((x) => x.contentEmpty);
    const groupName = textOf(body.GroupName);
    if (groupName === null) throw badRequest((x) => x.groupNameMissing);
    const accountId = request.principal.accountId;
    const group = await findGroup(ctx.db, accountId, groupName);
    if (!group) throw badRequest((x) => x.groupNotFound(groupName));
    const at = when(request, body.ScheduleDate);
    const route = await legacyRoute(ctx.core.routes, accountId);
    const receivers = [...new Set(await groupPhones(ctx.db, accountId, [group.id]))];
    if (receivers.length === 0) throw badRequest((x) => x.groupEmpty(group.name));
    // The 100-phone limit is for Receivers; a group send has the gateway's ceiling.
    if (receivers.length > MAX_RECEIVERS) throw badRequest((x) => x.tooManyReceivers(receivers.length, MAX_RECEIVERS));
    const result = await sendLegacy(deps, request.principal, { sender: textOf(body.Sender), content, receivers, scheduleAt: at, route });
    await touchGroup(ctx.db, accountId, group.id);
    void reply.header('X-Request-Id', result.requestId);
    return { text: sentText(t, result, at, request.principal.timezone), requestId: result.requestId };
  }

  const common = { tags, security, headers: AuthKeyHeader };

  app.post<{ Body: Static<typeof SendBody> }>(
    '/send',
    { schema: { ...common, summary: 'Send an SMS (spec 4.9)', body: SendBody, response: withId } },
    (request, reply) => plain(request, reply, { ...request.body, ScheduleDate: undefined }),
  );
  app.get<{ Querystring: Static<typeof SendBody> }>(
    '/send',
    { schema: { ...common, summary: 'Send an SMS with query parameters', querystring: SendBody, response: withId } },
    (request, reply) => plain(request, reply, { ...request.query, ScheduleDate: undefined }),
  );
  app.post<{ Body: Static<typeof ScheduleBody> }>(
    '/schedule',
    { schema: { ...common, summary: 'Schedule an SMS', body: ScheduleBody, response: withId } },
    (request, reply) => plain(request, reply, request.body),
  );

  app.post<{ Body: Static<typeof ContextBody> }>(
    '/sendcontextmessage',
    { schema: { ...common, summary: 'Send with an automatic-reply rule (spec 4.9)', body: ContextBody, response: withNull } },
    async (request, reply) => ok(null, (await context(request, reply, request.body)).text),
  );
  app.post<{ Body: Static<typeof ScheduleContextBody> }>(
    '/schedulecontextmessage',
    { schema: { ...common, summary: 'Schedule a send with an automatic-reply rule', body: ScheduleContextBody, response: withId } },
    async (request, reply) => {
      const r = await context(request, reply, request.body);
      return ok({ requestUniqueId: r.requestId }, r.text);
    },
  );

  app.post<{ Body: Static<typeof ContactBody> }>(
    '/sendcontactmessage',
    { schema: { ...common, summary: 'Send to every phone of a contact group (spec 4.9)', body: ContactBody, response: withNull } },
    async (request, reply) => ok(null, (await contact(request, reply, request.body)).text),
  );
  app.post<{ Body: Static<typeof ScheduleContactBody> }>(
    '/schedulecontactmessage',
    { schema: { ...common, summary: 'Schedule a send to a contact group', body: ScheduleContactBody, response: withId } },
    async (request, reply) => {
      const r = await contact(request, reply, request.body);
      return ok({ requestUniqueId: r.requestId }, r.text);
    },
  );

  app.post<{ Body: Static<typeof CancelBody> }>(
    '/cancelrequest',
    { schema: { ...common, summary: 'Cancel the scheduled and queued messages of a request', body: CancelBody, response: withNull } },
    async (request) => {
      const id = request.body.RequestUniqueId.trim();
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw badRequest((x) => x.requestIdInvalid);
      try {
        const r = await cancelRequest(ctx.db, request.principal.accountId, id.toLowerCase());
        return ok(null, t.cancelled(r.cancelled));
      } catch (err) {
        if (err instanceof DomainError && err.code === 'NOT_FOUND') throw new LegacyProblem('NOT_FOUND', (x) => x.requestNotFound(id));
        if (err instanceof DomainError && err.code === 'NOT_CANCELLABLE') throw new LegacyProblem('NOT_CANCELLABLE', (x) => x.notCancellable(id));
        throw err;
      }
    },
  );
}
