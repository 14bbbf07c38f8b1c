import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addContacts, createContactGroup } from '../../contacts/groups.ts';
import { DomainError } from '../../common/errors.ts';
import { blockPhone, listBlocked, unblockPhone } from '../../contacts/blocklist.ts';
import { Envelope, LegacyProblem, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, IdParams, IdQuery, Name, Nullable, Phone, idFrom } from './schemas.ts';
import { alias, legacyDoc, t as pt } from './docs.ts';
import { parsePhone } from './phones.ts';
import { formatDate } from './dates.ts';
import { textOf } from './sending.ts';
import { deleteGroup, findGroup, hasContact, listGroups, removeContact, type LegacyGroup } from '../../contacts/legacy-groups.ts';
import type { LegacyContext } from './context.ts';

const GroupBody = Type.Object(
  { Name: Name('Group name, unique in the account'), Description: Type.Optional(Type.String({ maxLength: 1000 })) },
  { required: ['Name'] },
);
const GroupChange = Type.Object(
  {
    GroupName: Type.Optional(Name('Group name (or give the group in the path or ?id=)')),
    Action: Type.Union([Type.Literal('add_number'), Type.Literal('remove_number')], { description: 'add_number or remove_number' }),
    ContactName: Type.Optional(Type.String({ maxLength: 200 })),
    ContactPhone: Phone,
  },
  { required: ['Action', 'ContactPhone'] },
);
const GroupRef = Type.Union([Type.Object({ GroupName: Type.Optional(Name('Group name')) }), Type.Null()]);
const PhoneBody = Type.Object({ PhoneNumber: Phone }, { required: ['PhoneNumber'] });
const PhoneRef = Type.Union([Type.Object({ PhoneNumber: Type.Optional(Phone) }), Type.Null()]);

const Group = Type.Object({
  Id: Type.Integer(),
  Name: Type.String(),
  Description: Nullable(Type.String()),
  TotalContacts: Type.Integer(),
  LastUsed: Nullable(Type.String()),
});
const Blocked = Type.Object({ PhoneNumber: Type.String(), CreatedDate: Nullable(Type.String()) });

const GROUPS = ['Legacy v2: contact groups'];
const BLOCKLIST = ['Legacy v2: blocklist'];
const GROUP = { Id: 7, Name: 'Clientes', Description: 'Clientes ativos', TotalContacts: 1250, LastUsed: '2026-11-22T17:02:36-03:00' };
const NO_GROUP = { description: 'No group with this name or id.', message: pt.groupNotFound('Clientes') };
const NOT_BLOCKED = { description: 'The number is not on the blocklist.', message: pt.notBlocked('5511955554444') };
const BAD_PHONE = { description: 'The phone is missing or not a valid number.', message: pt.phoneInvalid('1195555') };
const DOCS = {
  createGroup: legacyDoc({
    operationId: 'legacyCreateContactGroup',
    tags: GROUPS,
    summary: 'Create a contact group',
    description: "A new, empty contact group of the account (the gateway's contact groups: GET /contacts lists the same). Add numbers with PUT.",
    success: { description: 'Created: the group.', object: { ...GROUP, TotalContacts: 0, LastUsed: null }, message: pt.groupCreated('Clientes') },
    errors: { 400: { description: '`Name` missing, or a group with this name exists.', message: pt.groupExists('Clientes') } },
    requestExample: { Name: 'Clientes', Description: 'Clientes ativos' },
  }),
  listGroups: legacyDoc({
    operationId: 'legacyListContactGroups',
    tags: GROUPS,
    summary: 'Contact groups: all, or one (name or Id in the path or ?id=)',
    description:
      'The contact groups of the account with their number of contacts and when a send last used them. With a group (name, exact then ignoring case, or `Id`; in the path or `?id=`), a list of that one.',
    success: { description: 'The groups.', object: [GROUP], message: pt.groups(1) },
    errors: { 400: { description: 'The id is over 200 characters.', message: pt.tooLong('id', 200) }, 404: NO_GROUP },
  }),
  deleteGroup: legacyDoc({
    operationId: 'legacyDeleteContactGroup',
    tags: GROUPS,
    summary: 'Delete a contact group and its contacts',
    description: 'Deletes the group named in the path, `?id=` or `GroupName` of the body, with its contacts.',
    success: { description: 'Deleted.', object: null, message: pt.groupDeleted('Clientes') },
    errors: { 400: { description: 'No group named.', message: pt.groupNameMissing }, 404: NO_GROUP },
    requestExample: { GroupName: 'Clientes' },
  }),
  changeGroup: legacyDoc({
    operationId: 'legacyChangeContactGroup',
    tags: GROUPS,
    summary: 'Add a number to a group, or remove it',
    description: `\`Action\` \`add_number\` adds \`ContactPhone\` (area code + number; with an optional \`ContactName\`) to the group named in
the path, \`?id=\` or \`GroupName\`; a number already there is a 200 saying so. \`remove_number\` removes it.`,
    success: { description: 'Added or removed; `Message` says which.', object: null, message: pt.contactAdded('5511977776666', 'Clientes') },
    errors: {
      400: { description: 'No group named, `Action` not one of the two, or the phone missing or invalid.', message: pt.invalidField('Action') },
      404: {
        description: 'No group with this name or id, or (remove_number) the number is not in the group.',
        message: pt.contactNotInGroup('5511977776666', 'Clientes'),
      },
    },
    requestExample: { GroupName: 'Clientes', Action: 'add_number', ContactName: 'Ana', ContactPhone: '11977776666' },
  }),
  block: legacyDoc({
    operationId: 'legacyBlockNumber',
    tags: BLOCKLIST,
    summary: 'Block a number: sends to it are skipped (BLOCKED, not charged) on both interfaces',
    description:
      "Adds `PhoneNumber` (area code + number) to the account's blocklist: every later send to it, on both interfaces, records the message as `BLOCKED` and does not charge it. A number already there is a 200 saying so.",
    success: { description: 'Blocked.', object: null, message: pt.blocked('5511955554444') },
    errors: { 400: BAD_PHONE },
    requestExample: { PhoneNumber: '11955554444' },
  }),
  listBlocked: legacyDoc({
    operationId: 'legacyListBlockedNumbers',
    tags: BLOCKLIST,
    summary: 'Blocked numbers: all, or one (phone in the path or ?id=)',
    description: "The account's blocked numbers with when they were added; with a phone (path or `?id=`), a list of that one.",
    success: {
      description: 'The blocked numbers.',
      object: [{ PhoneNumber: '5511955554444', CreatedDate: '2026-11-22T17:02:36-03:00' }],
      message: pt.blockedList(1),
    },
    errors: { 400: BAD_PHONE, 404: NOT_BLOCKED },
  }),
  unblock: legacyDoc({
    operationId: 'legacyUnblockNumber',
    tags: BLOCKLIST,
    summary: 'Unblock a number (phone in the path, ?id= or the body)',
    description: 'Takes the number off the blocklist: sends reach it again.',
    success: { description: 'Unblocked.', object: null, message: pt.unblocked('5511955554444') },
    errors: { 400: BAD_PHONE, 404: NOT_BLOCKED },
    requestExample: { PhoneNumber: '11955554444' },
  }),
};

/** /contactgroup (the gateway's contact groups) and /blacklist (the account's blocklist). */
export async function contactRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;
  const common = { headers: AuthKeyHeader };
  const shape = (g: LegacyGroup, tz: string) => ({
    Id: g.id,
    Name: g.name,
    Description: g.description,
    TotalContacts: g.totalContacts,
    LastUsed: formatDate(g.lastUsedAt, tz),
  });

  /** The group named in the path, the query or the body; 404 when it does not exist. */
  async function groupOf(request: FastifyRequest, fromBody: string | undefined) {
    const ref = idFrom(request) ?? textOf(fromBody);
    if (!ref) throw badRequest((x) => x.groupNameMissing);
    const group = await findGroup(ctx.db, request.principal.accountId, ref);
    if (!group) throw new LegacyProblem('NOT_FOUND', (x) => x.groupNotFound(ref));
    return group;
  }

  app.post<{ Body: Static<typeof GroupBody> }>(
    '/contactgroup',
    { schema: { ...common, ...DOCS.createGroup, body: GroupBody, response: { 200: Envelope(Group), ...errorResponses } } },
    async (request) => {
      const name = textOf(request.body.Name);
      if (name === null) throw badRequest((x) => x.required('Name'));
      const accountId = request.principal.accountId;
      if (await findGroup(ctx.db, accountId, name)) throw badRequest((x) => x.groupExists(name));
      // Created by another request since the lookup: the same answer as a later duplicate.
      const created = await createContactGroup(ctx.db, accountId, name, textOf(request.body.Description), []).catch((err: unknown) => {
        throw err instanceof DomainError && err.code === 'CONFLICT' ? badRequest((x) => x.groupExists(name)) : err;
      });
      const [group] = await listGroups(ctx.db, accountId, created.id);
      if (!group) throw new LegacyProblem('NOT_FOUND', (x) => x.groupNotFound(name));
      return ok(shape(group, request.principal.timezone), t.groupCreated(name));
    },
  );

  const list = async (request: FastifyRequest) => {
    const ref = idFrom(request);
    const accountId = request.principal.accountId;
    let groupId: number | undefined;
    if (ref !== undefined) {
      const group = await findGroup(ctx.db, accountId, ref);
      if (!group) throw new LegacyProblem('NOT_FOUND', (x) => x.groupNotFound(ref));
      groupId = group.id;
    }
    const groups = (await ctx.core.db.report(accountId, (reports) => listGroups(reports, accountId, groupId))).map((g) => shape(g, request.principal.timezone));
    return ok(groups, t.groups(groups.length));
  };
  const listSchema = {
    ...common,
    response: { 200: Envelope(Type.Array(Group)), ...errorResponses },
  };
  app.get('/contactgroup', { schema: { ...listSchema, ...DOCS.listGroups, querystring: IdQuery } }, list);
  app.get('/contactgroup/:id', { schema: { ...listSchema, ...alias(DOCS.listGroups, 'legacyGetContactGroup'), params: IdParams } }, list);

  const remove = async (request: FastifyRequest<{ Body: Static<typeof GroupRef> }>) => {
    const group = await groupOf(request, request.body?.GroupName);
    await deleteGroup(ctx.db, request.principal.accountId, group.id);
    return ok(null, t.groupDeleted(group.name));
  };
  const removeSchema = {
    ...common,
    body: GroupRef,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.delete('/contactgroup', { schema: { ...removeSchema, ...DOCS.deleteGroup, querystring: IdQuery } }, remove);
  app.delete('/contactgroup/:id', { schema: { ...removeSchema, ...alias(DOCS.deleteGroup, 'legacyDeleteContactGroupById'), params: IdParams } }, remove);

  const change = async (request: FastifyRequest<{ Body: Static<typeof GroupChange> }>) => {
    const body = request.body;
    const group = await groupOf(request, body.GroupName);
    const phone = parsePhone(body.ContactPhone);
    const accountId = request.principal.accountId;
    if (body.Action === 'add_number') {
      if (await hasContact(ctx.db, accountId, group.id, phone)) return ok(null, t.contactAlreadyInGroup(phone, group.name));
      // Added by another request since the lookup: the same answer as a later duplicate.
      const { added } = await addContacts(ctx.db, accountId, group.id, [{ phone, name: textOf(body.ContactName) }]);
      return ok(null, added > 0 ? t.contactAdded(phone, group.name) : t.contactAlreadyInGroup(phone, group.name));
    }
    if (!(await removeContact(ctx.db, accountId, group.id, phone))) throw new LegacyProblem('NOT_FOUND', (x) => x.contactNotInGroup(phone, group.name));
    return ok(null, t.contactRemoved(phone, group.name));
  };
  const changeSchema = {
    ...common,
    body: GroupChange,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.put('/contactgroup', { schema: { ...changeSchema, ...DOCS.changeGroup, querystring: IdQuery } }, change);
  app.put('/contactgroup/:id', { schema: { ...changeSchema, ...alias(DOCS.changeGroup, 'legacyChangeContactGroupById'), params: IdParams } }, change);

  app.post<{ Body: Static<typeof PhoneBody> }>(
    '/blacklist',
    {
      schema: {
        ...common,
        ...DOCS.block,
        body: PhoneBody,
        response: { 200: Envelope(Type.Null()), ...errorResponses },
      },
    },
    async (request) => {
      const phone = parsePhone(request.body.PhoneNumber);
      const added = await blockPhone(ctx.db, request.principal.accountId, phone);
      return ok(null, added ? t.blocked(phone) : t.alreadyBlocked(phone));
    },
  );

  const blocked = async (request: FastifyRequest) => {
    const ref = idFrom(request);
    const phone = ref === undefined ? undefined : parsePhone(ref);
    const rows = await ctx.core.db.report(request.principal.accountId, (reports) => listBlocked(reports, request.principal.accountId, phone));
    if (phone !== undefined && rows.length === 0) throw new LegacyProblem('NOT_FOUND', (x) => x.notBlocked(phone));
    const list = rows.map((r) => ({ PhoneNumber: r.phone, CreatedDate: formatDate(r.createdAt, request.principal.timezone) }));
    return ok(list, t.blockedList(list.length));
  };
  const blockedSchema = {
    ...common,
    response: { 200: Envelope(Type.Array(Blocked)), ...errorResponses },
  };
  app.get('/blacklist', { schema: { ...blockedSchema, ...DOCS.listBlocked, querystring: IdQuery } }, blocked);
  app.get('/blacklist/:id', { schema: { ...blockedSchema, ...alias(DOCS.listBlocked, 'legacyGetBlockedNumber'), params: IdParams } }, blocked);

  const unblock = async (request: FastifyRequest<{ Body: Static<typeof PhoneRef> }>) => {
    const phone = parsePhone(idFrom(request) ?? request.body?.PhoneNumber);
    if (!(await unblockPhone(ctx.db, request.principal.accountId, phone))) throw new LegacyProblem('NOT_FOUND', (x) => x.notBlocked(phone));
    return ok(null, t.unblocked(phone));
  };
  const unblockSchema = {
    ...common,
    body: PhoneRef,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.delete('/blacklist', { schema: { ...unblockSchema, ...DOCS.unblock, querystring: IdQuery } }, unblock);
  app.delete('/blacklist/:id', { schema: { ...unblockSchema, ...alias(DOCS.unblock, 'legacyUnblockNumberById'), params: IdParams } }, unblock);
}
