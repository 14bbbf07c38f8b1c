import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { createPanelUser, deletePanelUser, listPanelUsers } from '../../panel/users.ts';
import { operatorDoc } from '../admin/docs.ts';
import { Nullable } from '../admin/schemas.ts';
import { component } from '../openapi.ts';

const TAGS = ['Operator: panel users'];
const Id = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const UserBody = Type.Object(
  { email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 1024, description: 'At least 10 characters' }) },
  { required: ['email', 'password'], additionalProperties: false },
);
const PanelUser = component(
  'PanelUser',
  Type.Object({
    id: Type.Integer(),
    email: Type.String({ description: 'As given when created; sign-in ignores its case' }),
    accountId: Nullable(Type.Integer({ description: 'The account whose panel the user opens; null: an operator user (the operator console)' })),
    createdAt: Type.String({ format: 'date-time' }),
  }),
);
const PanelUsers = component('PanelUsers', Type.Array(Type.Unsafe(PanelUser), { description: 'Oldest first; never their passwords' }));
const USER = { id: 3, email: 'ana@acme.example', accountId: 42, createdAt: '2026-11-26T14:00:00.000Z' };
const BAD_USER = {
  description: 'The e-mail is not an e-mail address, or the password is shorter than 10 characters (every problem named).',
  message: 'password: must be at least 10 characters',
};
const TAKEN = {
  description: 'A panel user or a child user already has this e-mail (case-insensitively).',
  message: 'email: is already used by another panel user or child user',
};

/**
 * Operator API routes of the browser panel's users (docs/panel.md, "Panel
 * users"), registered inside the operator plugin (its token check, its
 * `{ error }` answers).
 */
export async function panelUserAdminRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof UserBody> }>(
    '/accounts/:id/panel-users',
    {
      schema: {
        ...operatorDoc({
          operationId: 'createPanelUser',
          summary: "Create a user of an account's panel",
          description:
            'A user who signs in to the browser panel (`/panel/`) with this e-mail and password and sees the account: dashboard, reports, exports, API keys. The password is stored as a scrypt hash.',
          tags: TAGS,
          success: { status: 201, description: 'Created.', schema: PanelUser, example: USER },
          errors: { 400: BAD_USER, 404: true, 409: TAKEN, 413: true, 415: true },
          requestExample: { email: 'ana@acme.example', password: 'correct horse battery' },
        }),
        params: Id,
        body: UserBody,
      },
    },
    async (request, reply) => reply.status(201).send(await createPanelUser(db, { ...request.body, accountId: request.params.id })),
  );
  app.get<{ Params: Static<typeof Id> }>(
    '/accounts/:id/panel-users',
    {
      schema: {
        ...operatorDoc({
          operationId: 'listPanelUsers',
          summary: "The users of an account's panel",
          description:
            'The panel users of the account, oldest first (never their passwords). Child users sign in with their own credential and are not listed here.',
          tags: TAGS,
          success: { status: 200, description: 'The users.', schema: PanelUsers, example: [USER] },
          errors: { 400: true },
        }),
        params: Id,
      },
    },
    async (request) => listPanelUsers(db, request.params.id),
  );
  app.delete<{ Params: Static<typeof Id> }>(
    '/panel-users/:id',
    {
      schema: {
        ...operatorDoc({
          operationId: 'deletePanelUser',
          summary: 'Delete a panel user',
          description: 'Deletes a panel user (of an account, or an operator user); its sessions end at once in every gateway process.',
          tags: TAGS,
          success: { status: 204, description: 'Deleted.' },
          errors: { 400: true, 404: { description: 'No panel user with this id.', message: 'Panel user 3 was not found.' } },
        }),
        params: Id,
      },
    },
    async (request, reply) => {
      await deletePanelUser(db, request.params.id);
      return reply.status(204).send();
    },
  );
  app.post<{ Body: Static<typeof UserBody> }>(
    '/operator-users',
    {
      schema: {
        ...operatorDoc({
          operationId: 'createOperatorUser',
          summary: 'Create an operator user',
          description:
            'A user who signs in to the operator console (`/panel/`) with this e-mail and password, with the rights of the operator token. (The operator can also sign in as `operator` with the token as password.)',
          tags: TAGS,
          success: { status: 201, description: 'Created.', schema: PanelUser, example: { ...USER, email: 'ops@gateway.example', accountId: null } },
          errors: { 400: BAD_USER, 409: TAKEN, 413: true, 415: true },
          requestExample: { email: 'ops@gateway.example', password: 'correct horse battery' },
        }),
        body: UserBody,
      },
    },
    async (request, reply) => reply.status(201).send(await createPanelUser(db, { ...request.body, accountId: null })),
  );
  app.get(
    '/operator-users',
    {
      schema: operatorDoc({
        operationId: 'listOperatorUsers',
        summary: 'The operator users',
        description: 'Users who sign in to the operator console, oldest first (never their passwords).',
        tags: TAGS,
        success: { status: 200, description: 'The users.', schema: PanelUsers, example: [{ ...USER, email: 'ops@gateway.example', accountId: null }] },
        errors: {},
      }),
    },
    async () => listPanelUsers(db, null),
  );
}
