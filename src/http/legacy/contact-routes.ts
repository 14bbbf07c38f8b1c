import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addContacts, createContactGroup } from '../../contacts/groups.ts';
import { DomainError } from '../../common/errors.ts';
import { blockPhone, listBlocked, unblockPhone } from '../../contacts/blocklist.ts';
import { Envelope, LegacyProblem, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, IdParams, IdQuery, Name, Nullable, Phone, idFrom, security, tags } from './schemas.ts';
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

/** /contactgroup (the gateway's contact groups) and /blacklist (the account's blocklist). */
export async function contactRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const { t } = ctx;
  const common = { tags, security, headers: AuthKeyHeader };
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
    { schema: { ...common, summary: 'Create a contact group', body: GroupBody, response: { 200: Envelope(Group), ...errorResponses } } },
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
    const groups = (await listGroups(ctx.db, accountId, groupId)).map((g) => shape(g, request.principal.timezone));
    return ok(groups, t.groups(groups.length));
  };
  const listSchema = {
    ...common,
    summary: 'Contact groups: all, or one (name or Id in the path or ?id=)',
    response: { 200: Envelope(Type.Array(Group)), ...errorResponses },
  };
  app.get('/contactgroup', { schema: { ...listSchema, querystring: IdQuery } }, list);
  app.get('/contactgroup/:id', { schema: { ...listSchema, params: IdParams } }, list);

  const remove = async (request: FastifyRequest<{ Body: Static<typeof GroupRef> }>) => {
    const group = await groupOf(request, request.body?.GroupName);
    await deleteGroup(ctx.db, request.principal.accountId, group.id);
    return ok(null, t.groupDeleted(group.name));
  };
  const removeSchema = {
    ...common,
    summary: 'Delete a contact group and its contacts',
    body: GroupRef,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.delete('/contactgroup', { schema: { ...removeSchema, querystring: IdQuery } }, remove);
  app.delete('/contactgroup/:id', { schema: { ...removeSchema, params: IdParams } }, remove);

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
    summary: 'Add a number to a group, or remove it',
    body: GroupChange,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.put('/contactgroup', { schema: { ...changeSchema, querystring: IdQuery } }, change);
  app.put('/contactgroup/:id', { schema: { ...changeSchema, params: IdParams } }, change);

  app.post<{ Body: Static<typeof PhoneBody> }>(
    '/blacklist',
    {
      schema: {
        ...common,
        summary: 'Block a number: sends to it are skipped (BLOCKED, not charged) on both interfaces',
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
    const rows = await listBlocked(ctx.db, request.principal.accountId, phone);
    if (phone !== undefined && rows.length === 0) throw new LegacyProblem('NOT_FOUND', (x) => x.notBlocked(phone));
    const list = rows.map((r) => ({ PhoneNumber: r.phone, CreatedDate: formatDate(r.createdAt, request.principal.timezone) }));
    return ok(list, t.blockedList(list.length));
  };
  const blockedSchema = {
    ...common,
    summary: 'Blocked numbers: all, or one (phone in the path or ?id=)',
    response: { 200: Envelope(Type.Array(Blocked)), ...errorResponses },
  };
  app.get('/blacklist', { schema: { ...blockedSchema, querystring: IdQuery } }, blocked);
  app.get('/blacklist/:id', { schema: { ...blockedSchema, params: IdParams } }, blocked);

  const unblock = async (request: FastifyRequest<{ Body: Static<typeof PhoneRef> }>) => {
    const phone = parsePhone(idFrom(request) ?? request.body?.PhoneNumber);
    if (!(await unblockPhone(ctx.db, request.principal.accountId, phone))) throw new LegacyProblem('NOT_FOUND', (x) => x.notBlocked(phone));
    return ok(null, t.unblocked(phone));
  };
  const unblockSchema = {
    ...common,
    summary: 'Unblock a number (phone in the path, ?id= or the body)',
    body: PhoneRef,
    response: { 200: Envelope(Type.Null()), ...errorResponses },
  };
  app.delete('/blacklist', { schema: { ...unblockSchema, querystring: IdQuery } }, unblock);
  app.delete('/blacklist/:id', { schema: { ...unblockSchema, params: IdParams } }, unblock);
}
