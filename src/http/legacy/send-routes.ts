import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { groupPhones } from '../../contacts/groups.ts';
import { findRule } from '../../contextrules/rules.ts';
import { startConversations } from '../../contextrules/conversations.ts';
import { cancelRequest } from '../../messaging/cancel.ts';
import { MAX_RECEIVERS } from '../../messaging/send.ts';
import { DomainError } from '../../common/errors.ts';
import { Envelope, badRequest, errorResponses, ok, LegacyProblem } from './envelope.ts';
import { AuthKeyHeader, Name, Receivers, ScheduleDate, Sender, Text } from './schemas.ts';
import { alias, legacyDoc, t as pt } from './docs.ts';
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

const tags = ['Legacy v2: sending'];
const REQUEST_ID = '01a204da-7993-7576-be8d-fdf9450e1c0e';
const ACCEPTED = pt.accepted(2, 2, 0);
const SCHEDULED = pt.scheduled(1, 1, 0, '2027-01-15T09:00:00-03:00');
const RECEIVERS_400 = `No receiver, more than 100 after de-duplication, or an invalid number (the request is refused whole, naming up to 10).`;
const CREDITS_400 = "not enough credits (the balance must cover one part at the route's fare, and then the whole request), or no SMS route";
const SCHEDULE_400 = '`ScheduleDate` missing, unreadable, in the past, or more than a year ahead';
const CONTEXT_400 = '`ContextRuleName` missing, no rule with that name, or the rule has no message and no `ForceContent`';
const CONTACT_400 = '`Content` empty, `GroupName` missing, no group with that name, or the group has no contacts';
const SEND_DESCRIPTION = `Sends \`Content\` (up to 2,000 characters; one credit per part) to every phone of \`Receivers\`: comma-separated
(also \`;\`, new lines or a JSON list), each area code + number, spaces, \`-\`, \`.\`, brackets, a leading \`+\` and \`55\`
tolerated; at most 100 after de-duplication. Numbers on the blocklist are skipped and not charged. The account's first SMS
route carries it. \`Sender\` is an internal label shown in the reports. The request id is in \`Object\` and in the
\`X-Request-Id\` header; follow the messages in /detailedreporting.`;

const DOCS = {
  send: legacyDoc({
    operationId: 'legacySend',
    tags,
    summary: 'Send an SMS',
    description: `${SEND_DESCRIPTION} \`ScheduleDate\` is ignored here: use /schedule.`,
    success: {
      description: 'Accepted: `Object.requestUniqueId` is the request id.',
      object: { requestUniqueId: REQUEST_ID },
      message: ACCEPTED,
      requestId: true,
    },
    errors: {
      400: {
        description: `${RECEIVERS_400} \`Content\` empty or over 2,000 characters, no body, or ${CREDITS_400}.`,
        message: pt.invalidReceivers('1199999888'),
      },
    },
    requestExample: { Sender: 'ERP', Receivers: '11999998888, (21) 98888-7777', Content: 'Seu pedido saiu para entrega' },
  }),
  schedule: legacyDoc({
    operationId: 'legacySchedule',
    tags,
    summary: 'Schedule an SMS',
    description: `The send of POST /send at \`ScheduleDate\`: \`YYYY-MM-DD HH:mm:ss\` or \`DD/MM/YYYY HH:mm[:ss]\` in the account's time
zone (default America/Sao_Paulo), or ISO 8601 with an offset; in the future and at most a year ahead. Charged now;
POST /cancelrequest cancels and refunds.`,
    success: {
      description: 'Scheduled: `Object.requestUniqueId` is the request id (for /cancelrequest).',
      object: { requestUniqueId: REQUEST_ID },
      message: SCHEDULED,
      requestId: true,
    },
    errors: { 400: { description: `${SCHEDULE_400}; or a problem of POST /send.`, message: pt.schedulePast('2026-01-15 09:00:00') } },
    requestExample: { Receivers: '11999998888', Content: 'Lembrete: sua consulta é amanhã às 9h.', ScheduleDate: '2027-01-15 09:00:00' },
  }),
  context: legacyDoc({
    operationId: 'legacySendContextMessage',
    tags,
    summary: 'Send with an automatic-reply rule',
    description: `Sends the message of the context rule \`ContextRuleName\` (or \`ForceContent\`) to \`Receivers\`, and waits up to 72
hours for each receiver's answer: a reply matching the rule's positive or negative keywords gets the rule's answer, any
other its default answer (see /sendingcontextrules and /contextreporting). \`Object\` is null; the request id is in the
\`X-Request-Id\` header.`,
    success: { description: 'Accepted; the request id is in `X-Request-Id`.', object: null, message: pt.accepted(1, 1, 0), requestId: true },
    errors: { 400: { description: `${CONTEXT_400}; a receiver problem, or ${CREDITS_400}.`, message: pt.ruleNotFound('Confirmação') } },
    requestExample: { Receivers: '11999998888', ContextRuleName: 'Confirmação' },
  }),
  scheduleContext: legacyDoc({
    operationId: 'legacyScheduleContextMessage',
    tags,
    summary: 'Schedule a send with an automatic-reply rule',
    description: 'The send of POST /sendcontextmessage at `ScheduleDate` (see POST /schedule for the forms of the date); the answers are awaited from then.',
    success: {
      description: 'Scheduled: `Object.requestUniqueId` is the request id.',
      object: { requestUniqueId: REQUEST_ID },
      message: SCHEDULED,
      requestId: true,
    },
    errors: {
      400: { description: `${SCHEDULE_400}; ${CONTEXT_400}; a receiver problem, or ${CREDITS_400}.`, message: pt.scheduleInvalid('32/01/2027 09:00') },
    },
    requestExample: { Receivers: '11999998888', ContextRuleName: 'Confirmação', ScheduleDate: '15/01/2027 09:00' },
  }),
  contact: legacyDoc({
    operationId: 'legacySendContactMessage',
    tags,
    summary: 'Send to every phone of a contact group',
    description: `Sends \`Content\` to every phone of the contact group \`GroupName\` (exact name, then ignoring case); the 100-receiver
limit does not apply. Sets the group's \`LastUsed\`. \`Object\` is null; the request id is in the \`X-Request-Id\` header.`,
    success: { description: 'Accepted; the request id is in `X-Request-Id`.', object: null, message: pt.accepted(250, 250, 0), requestId: true },
    errors: { 400: { description: `${CONTACT_400}; or ${CREDITS_400}.`, message: pt.groupNotFound('Clientes') } },
    requestExample: { Sender: 'MKT', Content: 'Promoção de hoje: 20% em todo o site!', GroupName: 'Clientes' },
  }),
  scheduleContact: legacyDoc({
    operationId: 'legacyScheduleContactMessage',
    tags,
    summary: 'Schedule a send to a contact group',
    description: 'The send of POST /sendcontactmessage at `ScheduleDate` (see POST /schedule for the forms of the date).',
    success: {
      description: 'Scheduled: `Object.requestUniqueId` is the request id.',
      object: { requestUniqueId: REQUEST_ID },
      message: SCHEDULED,
      requestId: true,
    },
    errors: { 400: { description: `${SCHEDULE_400}; ${CONTACT_400}; or ${CREDITS_400}.`, message: pt.groupEmpty('Clientes') } },
    requestExample: { Content: 'Promoção de hoje: 20% em todo o site!', GroupName: 'Clientes', ScheduleDate: '2027-01-15 09:00:00' },
  }),
  cancel: legacyDoc({
    operationId: 'legacyCancelRequest',
    tags,
    summary: 'Cancel the scheduled and queued messages of a request',
    description: `Cancels, in one transaction, the messages of the request that are still \`SCHEDULED\` or \`QUEUED\`, and gives their
credits back. \`RequestUniqueId\` is the id a send answered.`,
    success: { description: 'Cancelled: `Message` says how many.', object: null, message: pt.cancelled(1) },
    errors: {
      400: { description: '`RequestUniqueId` missing or not a UUID, or none of its messages can still be cancelled.', message: pt.notCancellable(REQUEST_ID) },
      404: { description: 'No request with this id in the account.', message: pt.requestNotFound(REQUEST_ID) },
    },
    requestExample: { RequestUniqueId: REQUEST_ID },
  }),
};

type SendFields = Static<typeof SendBody> & { ScheduleDate?: string };
type ContextFields = Static<typeof ContextBody> & { ScheduleDate?: string };
type ContactFields = Static<typeof ContactBody> & { ScheduleDate?: string };

/** The legacy sends, their scheduled forms, GET /send and /cancelrequest. */
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

  const common = { headers: AuthKeyHeader };

  app.post<{ Body: Static<typeof SendBody> }>('/send', { schema: { ...common, ...DOCS.send, body: SendBody, response: withId } }, (request, reply) =>
    plain(request, reply, { ...request.body, ScheduleDate: undefined }),
  );
  app.get<{ Querystring: Static<typeof SendBody> }>(
    '/send',
    {
      schema: {
        ...common,
        ...alias(DOCS.send, 'legacySendWithQuery', 'The same send with the fields in the query: `GET /api/v2/send?Receivers=11999998888&Content=Ol%C3%A1`.'),
        summary: 'Send an SMS with query parameters',
        querystring: SendBody,
        response: withId,
      },
    },
    (request, reply) => plain(request, reply, { ...request.query, ScheduleDate: undefined }),
  );
  app.post<{ Body: Static<typeof ScheduleBody> }>(
    '/schedule',
    { schema: { ...common, ...DOCS.schedule, body: ScheduleBody, response: withId } },
    (request, reply) => plain(request, reply, request.body),
  );

  app.post<{ Body: Static<typeof ContextBody> }>(
    '/sendcontextmessage',
    { schema: { ...common, ...DOCS.context, body: ContextBody, response: withNull } },
    async (request, reply) => ok(null, (await context(request, reply, request.body)).text),
  );
  app.post<{ Body: Static<typeof ScheduleContextBody> }>(
    '/schedulecontextmessage',
    { schema: { ...common, ...DOCS.scheduleContext, body: ScheduleContextBody, response: withId } },
    async (request, reply) => {
      const r = await context(request, reply, request.body);
      return ok({ requestUniqueId: r.requestId }, r.text);
    },
  );

  app.post<{ Body: Static<typeof ContactBody> }>(
    '/sendcontactmessage',
    { schema: { ...common, ...DOCS.contact, body: ContactBody, response: withNull } },
    async (request, reply) => ok(null, (await contact(request, reply, request.body)).text),
  );
  app.post<{ Body: Static<typeof ScheduleContactBody> }>(
    '/schedulecontactmessage',
    { schema: { ...common, ...DOCS.scheduleContact, body: ScheduleContactBody, response: withId } },
    async (request, reply) => {
      const r = await contact(request, reply, request.body);
      return ok({ requestUniqueId: r.requestId }, r.text);
    },
  );

  app.post<{ Body: Static<typeof CancelBody> }>(
    '/cancelrequest',
    { schema: { ...common, ...DOCS.cancel, body: CancelBody, response: withNull } },
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
