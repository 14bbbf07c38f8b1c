import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import {
  createCredential,
  deliveriesView,
  LIMITS,
  listCredentials,
  PASSWORD_MAX,
  removeCredential,
  SYSTEM_ID_MAX,
  updateCredential,
} from '../../smpp-server/credentials.ts';
import { component } from '../openapi.ts';
import { ERROR_TEXT } from '../validation.ts';
import { operatorDoc } from './docs.ts';
import { Nullable } from './schemas.ts';

/*
 * SMPP credentials of an account and the deliveries owed to its SMPP
 * customers (docs/smpp-server.md). Registered inside the operator API
 * plugin, so its token check and `{ error }` answers apply.
 */

const ACCOUNTS = ['Operator: accounts'];
const AccountId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Account id' }) });
const SystemIdParam = Type.Object({ systemId: Type.String({ minLength: 1, maxLength: SYSTEM_ID_MAX }) });

/** One form in a union: a value that does not match is answered with the union's text (src/http/validation.ts). */
const SystemId = Type.Unsafe<string>({
  anyOf: [Type.String({ pattern: '^[A-Za-z0-9_.-]+$', minLength: 1, maxLength: SYSTEM_ID_MAX })],
  [ERROR_TEXT]: `must be 1 to ${SYSTEM_ID_MAX} letters, digits, '_', '.' or '-' (SMPP 3.4 carries at most ${SYSTEM_ID_MAX} characters)`,
  description: 'What the customer binds with (unique in the gateway)',
});
const Password = Type.Unsafe<string>({
  anyOf: [Type.String({ pattern: '^[!-~]+$', minLength: 1, maxLength: PASSWORD_MAX })],
  [ERROR_TEXT]: `must be 1 to ${PASSWORD_MAX} printable ASCII characters without spaces (SMPP 3.4 carries at most ${PASSWORD_MAX} characters)`,
  description: `At most ${PASSWORD_MAX} characters (SMPP 3.4); when not given at creation, one is generated`,
});
const Fields = {
  routeId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The SMS route its submits use (granted to the account)' }),
  allowedIps: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, description: 'Addresses or CIDR ranges binds may come from; absent or empty: any' }),
  windowSize: Type.Integer({
    minimum: 1,
    maximum: LIMITS.windowSize,
    description: 'Submits a bind may have unanswered, and deliver_sm the gateway leaves unanswered per bind (default 100)',
  }),
  submitsPerSecond: Type.Integer({ minimum: 0, maximum: LIMITS.submitsPerSecond, description: 'submit_sm a second per bind; 0: no limit (default)' }),
  maxBinds: Type.Integer({ minimum: 1, maximum: LIMITS.maxBinds, description: 'Binds open at once, per gateway process (default 4)' }),
};
const CreateBody = Type.Object(
  {
    systemId: SystemId,
    password: Type.Optional(Password),
    routeId: Fields.routeId,
    allowedIps: Type.Optional(Fields.allowedIps),
    windowSize: Type.Optional(Fields.windowSize),
    submitsPerSecond: Type.Optional(Fields.submitsPerSecond),
    maxBinds: Type.Optional(Fields.maxBinds),
  },
  { required: ['systemId', 'routeId'], additionalProperties: false },
);
const UpdateBody = Type.Object(
  {
    password: Type.Optional(Password),
    routeId: Type.Optional(Fields.routeId),
    allowedIps: Type.Optional(Type.Union([Fields.allowedIps, Type.Null()])),
    windowSize: Type.Optional(Fields.windowSize),
    submitsPerSecond: Type.Optional(Fields.submitsPerSecond),
    maxBinds: Type.Optional(Fields.maxBinds),
  },
  { additionalProperties: false },
);

const CredentialSchema = Type.Object({
  systemId: Type.String(),
  accountId: Type.Integer(),
  routeId: Type.Integer(),
  allowedIps: Nullable(Type.Array(Type.String())),
  windowSize: Type.Integer(),
  submitsPerSecond: Type.Integer(),
  maxBinds: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
});
const Credential = component('SmppCredential', CredentialSchema);
const CreatedCredential = component(
  'CreatedSmppCredential',
  Type.Object({ ...CredentialSchema.properties, password: Type.String({ description: 'The password: shown only in this answer (the gateway keeps a hash)' }) }),
);
const Credentials = component('SmppCredentials', Type.Object({ records: Type.Array(CredentialSchema) }));
const Deliveries = component(
  'SmppDeliveries',
  Type.Object({
    accountId: Type.Integer(),
    pending: Type.Integer({ description: 'deliver_sm waiting for a customer answer, all credentials' }),
    credentials: Type.Array(
      Type.Object({
        systemId: Type.String(),
        pending: Type.Integer(),
        oldest: Nullable(Type.String({ format: 'date-time', description: 'When the oldest waiting one was queued' })),
        maxAttempts: Type.Integer({ description: 'Most attempts any waiting one has had' }),
        lastError: Nullable(Type.String({ description: 'The last refusal by the customer, e.g. deliver_sm answered ESME_RX_T_APPN (0x64)' })),
      }),
    ),
  }),
);

const EXAMPLE = {
  systemId: 'acme01',
  accountId: 42,
  routeId: 2,
  allowedIps: ['203.0.113.0/24'],
  windowSize: 100,
  submitsPerSecond: 50,
  maxBinds: 4,
  createdAt: '2026-11-26T13:15:00.000Z',
};
const NO_ACCOUNT = { description: 'No account with this id.', message: 'Account 42 was not found.' };
const NO_CREDENTIAL = { description: 'No SMPP credential with this system_id.', message: 'SMPP credential acme01 was not found.' };

const DOCS = {
  create: operatorDoc({
    operationId: 'createSmppCredential',
    tags: ACCOUNTS,
    summary: 'Give an account SMPP credentials',
    description: `A system_id and password the customer binds to the gateway's SMPP server with (docs/smpp-server.md): its submits are
the account's sends on \`routeId\` (an SMS route granted to the account). SMPP 3.4 carries at most ${SYSTEM_ID_MAX} characters of
system_id and ${PASSWORD_MAX} of password, so longer ones are refused. Without \`password\`, one of ${PASSWORD_MAX} characters is generated;
either way it is shown only in this answer.`,
    success: {
      status: 201,
      description: 'Created: the credential and its password.',
      schema: CreatedCredential,
      example: { ...EXAMPLE, password: 'k7Hq2mPx' },
    },
    errors: {
      400: {
        description: 'A field is invalid, or the route is not an SMS route granted to the account.',
        message: 'body/password: must be 1 to 8 printable ASCII characters without spaces (SMPP 3.4 carries at most 8 characters)',
      },
      404: NO_ACCOUNT,
      409: { description: 'The system_id is taken.', message: 'An SMPP credential with system_id "acme01" already exists.' },
      413: true,
      415: true,
    },
    requestExample: { systemId: 'acme01', routeId: 2, allowedIps: ['203.0.113.0/24'], submitsPerSecond: 50 },
  }),
  list: operatorDoc({
    operationId: 'listSmppCredentials',
    tags: ACCOUNTS,
    summary: "An account's SMPP credentials",
    description: 'Every SMPP credential of the account, by system_id (never the password).',
    success: { status: 200, description: 'The credentials.', schema: Credentials, example: { records: [EXAMPLE] } },
    errors: { 400: { description: 'The id is not a positive integer.', message: 'id: must be integer' }, 404: NO_ACCOUNT },
  }),
  update: operatorDoc({
    operationId: 'updateSmppCredential',
    tags: ACCOUNTS,
    summary: 'Change SMPP credentials',
    description: `Changes what is given: the password, the route, the IP allow-list (\`null\` or \`[]\`: any address), the window, the
submit rate, the bind limit. Binds already open keep what they bound with; the next binds get the change.`,
    success: { status: 200, description: 'Changed: the credential.', schema: Credential, example: EXAMPLE },
    errors: {
      400: { description: 'A field is invalid.', message: 'body/windowSize: must be <= 10000' },
      404: NO_CREDENTIAL,
      413: true,
      415: true,
    },
    requestExample: { password: 'n3wPassw', windowSize: 50 },
  }),
  remove: operatorDoc({
    operationId: 'removeSmppCredential',
    tags: ACCOUNTS,
    summary: 'Remove SMPP credentials',
    description: `No bind is accepted with it any more and its open binds are unbound within seconds; the receipts and replies it still
owed its customer are dropped. What it submitted stays the account's and is still sent.`,
    success: { status: 204, description: 'Removed.' },
    errors: { 400: { description: 'The system_id is too long.', message: 'systemId: must NOT have more than 15 characters' }, 404: NO_CREDENTIAL },
  }),
  deliveries: operatorDoc({
    operationId: 'getSmppDeliveries',
    tags: ACCOUNTS,
    summary: 'Receipts and replies waiting for an SMPP customer',
    description: `The deliver_sm (delivery receipts and replies) the gateway keeps for the account's SMPP customers until a receiver or
transceiver bind answers them: how many, since when, and the last refusal per credential.`,
    success: {
      status: 200,
      description: 'What waits.',
      schema: Deliveries,
      example: {
        accountId: 42,
        pending: 3,
        credentials: [
          { systemId: 'acme01', pending: 3, oldest: '2026-11-26T13:15:02.000Z', maxAttempts: 2, lastError: 'deliver_sm answered ESME_RX_T_APPN (0x64)' },
        ],
      },
    },
    errors: { 400: { description: 'The id is not a positive integer.', message: 'id: must be integer' }, 404: NO_ACCOUNT },
  }),
};

export function smppRoutes(app: FastifyInstance, core: Core): void {
  const db = core.db.kysely;
  app.post<{ Params: Static<typeof AccountId>; Body: Static<typeof CreateBody> }>(
    '/accounts/:id/smpp-credentials',
    { schema: { ...DOCS.create, params: AccountId, body: CreateBody } },
    async (request, reply) => reply.status(201).send(await createCredential(db, request.params.id, request.body)),
  );
  app.get<{ Params: Static<typeof AccountId> }>('/accounts/:id/smpp-credentials', { schema: { ...DOCS.list, params: AccountId } }, async (request) => ({
    records: await listCredentials(db, request.params.id),
  }));
  app.put<{ Params: Static<typeof SystemIdParam>; Body: Static<typeof UpdateBody> }>(
    '/smpp-credentials/:systemId',
    { schema: { ...DOCS.update, params: SystemIdParam, body: UpdateBody } },
    async (request) => updateCredential(db, request.params.systemId, request.body),
  );
  app.delete<{ Params: Static<typeof SystemIdParam> }>(
    '/smpp-credentials/:systemId',
    { schema: { ...DOCS.remove, params: SystemIdParam } },
    async (request, reply) => {
      await removeCredential(db, request.params.systemId);
      return reply.status(204).send();
    },
  );
  app.get<{ Params: Static<typeof AccountId> }>('/accounts/:id/smpp-deliveries', { schema: { ...DOCS.deliveries, params: AccountId } }, async (request) =>
    deliveriesView(db, request.params.id),
  );
}
