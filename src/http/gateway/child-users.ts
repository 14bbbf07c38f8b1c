import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Core } from '../../core.ts';
import { toMicros } from '../../billing/money.ts';
import { forbidden, validation } from '../../common/errors.ts';
import { describeValidation } from '../validation.ts';
import { CHILD_USER_FIELDS, MIN_PASSWORD_LENGTH, type ChildUserInput } from '../../childusers/validate.ts';
import { checkNewChildUser, createChildUser, issueChildApiKey, listChildUsers, moveChildCredits } from '../../childusers/child-users.ts';
import { ApiKeyHeader } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { OptionalNullable, absent } from '../../common/schema.ts';
import { Envelope, ErrorEnvelope, errorResponses, ok } from './envelope.ts';

const Name = Type.String({ maxLength: 200 });
const Email = Type.String({ maxLength: 254, description: 'E-mail address; unique (case-insensitive) across all child users.' });
const Phone = Type.String({
  maxLength: 32,
  description: 'Brazilian phone: area code + number, separators, + and a leading 55 tolerated; stored as 55 + area code + number.',
});

/** Spec 4.7 body; every field is required. */
const CreateBody = Type.Object(
  {
    fullName: Name,
    email: Email,
    phoneNumber: Phone,
    document: Type.String({
      maxLength: 32,
      description:
        'CPF (11 digits) or CNPJ (14 characters; alphanumeric CNPJ accepted), formatted or not; check digits are verified; stored without formatting.',
    }),
    limit: Type.Integer({
      minimum: 0,
      maximum: 1_000_000_000,
      description: "Credit allotment moved from the reseller's balance to the child (same unit as GET /balance).",
    }),
    ownerCredentialFullName: Name,
    ownerCredentialEmail: Type.String({ maxLength: 254, description: "E-mail of the owner credential (the child's panel login)." }),
    ownerCredentialPhoneNumber: Phone,
    password: Type.String({
      minLength: MIN_PASSWORD_LENGTH,
      maxLength: 1024,
      description: `Owner credential password, at least ${MIN_PASSWORD_LENGTH} characters; stored as a scrypt hash.`,
    }),
  },
  { required: [...CHILD_USER_FIELDS] },
);

/** Spec 2.10 PublicChildUser. */
const ChildUser = Type.Object({
  id: Type.Integer(),
  fullName: Type.String(),
  email: Type.String(),
  phoneNumber: Type.String(),
  document: Type.String(),
  role: Type.String(),
  parentUserId: Type.Integer(),
});

const ChildId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const Page = Type.Object({
  skip: Skip(),
  limit: Limit(1000),
});
const KeyBody = Type.Object({
  allowedIps: OptionalNullable(
    Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, description: 'IP addresses or CIDR ranges allowed to use the key; absent or null: any.' }),
  ),
});
const IssuedKey = Type.Object({ id: Type.Integer(), key: Type.String({ description: 'The API key; shown only in this answer.' }) });
const CreditsBody = Type.Object(
  {
    amount: Type.Number({
      minimum: -1_000_000_000,
      maximum: 1_000_000_000,
      description: 'Positive: moved reseller -> child; negative: child -> reseller. At most 6 decimals.',
    }),
  },
  { required: ['amount'] },
);
const CreditMove = Type.Object({ childUserId: Type.Integer(), amount: Type.Number(), balance: Type.Number(), resellerBalance: Type.Number() });

const tags = ['Child users'];
const responses = { ...errorResponses, 403: ErrorEnvelope };

/**
 * What the body has of each field with the right type; a field the schema
 * already refused is left out, so each problem is reported once.
 */
function typedInput(body: Record<string, unknown>, refused: Set<string>): ChildUserInput {
  const input: ChildUserInput = {};
  for (const field of CHILD_USER_FIELDS) {
    const value = body[field];
    if (refused.has(field)) continue;
    if (field === 'limit') input.limit = typeof value === 'number' ? value : undefined;
    else input[field] = typeof value === 'string' ? value : undefined;
  }
  return input;
}

/** Spec 4.7 and what a reseller needs next: list, keys and credits of its child users. Only RESELLER keys (else 403). */
export async function childUserRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;
  const dialect = core.db.dialect;

  // Before body validation: a CUSTOMER key gets 403 whatever it sent.
  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.principal.role !== 'RESELLER') throw forbidden('Only the API key of a RESELLER account may manage child users.');
  });

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/child-users',
    {
      // Type errors and field checks (document, phone, e-mail in use...) are answered together.
      attachValidation: true,
      schema: {
        tags,
        summary: 'Create a child user (a CUSTOMER account under the reseller of the key)',
        headers: ApiKeyHeader,
        body: CreateBody,
        response: { 200: Envelope(ChildUser), ...responses },
      },
    },
    async (request) => {
      const body: unknown = request.body;
      const refused = request.validationError ? describeValidation(request.validationError.validation, request.validationError.validationContext) : [];
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw validation(refused.length ? refused : ['body: must be a JSON object']);
      const fields = new Set(refused.map((line) => line.slice(0, line.indexOf(':'))));
      const input = await checkNewChildUser(db, typedInput(body as Record<string, unknown>, fields), refused);
      const child = await createChildUser(db, dialect, request.principal, input);
      return ok(child, `Child user ${child.id} created.`);
    },
  );

  app.get<{ Querystring: Static<typeof Page> }>(
    '/child-users',
    {
      schema: {
        tags,
        summary: 'Child users of the reseller, oldest first',
        headers: ApiKeyHeader,
        querystring: Page,
        response: { 200: Envelope(Type.Array(ChildUser)), ...responses },
      },
    },
    async (request) => {
      const page = await listChildUsers(db, request.principal.accountId, { skip: request.query.skip ?? 0, limit: request.query.limit ?? 100 });
      return ok(page.records, null, page.total);
    },
  );

  app.post<{ Params: Static<typeof ChildId>; Body: Static<typeof KeyBody> }>(
    '/child-users/:id/api-keys',
    {
      // The body is optional: no body is the same as {}.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        tags,
        summary: 'Issue an API key for a child user (shown only in this answer)',
        headers: ApiKeyHeader,
        params: ChildId,
        body: KeyBody,
        response: { 200: Envelope(IssuedKey), ...responses },
      },
    },
    async (request) => {
      const issued = await issueChildApiKey(db, request.principal.accountId, request.params.id, absent(request.body).allowedIps);
      return ok(issued, `API key ${issued.id} issued for child user ${request.params.id}; store it now, it is not shown again.`);
    },
  );

  app.post<{ Params: Static<typeof ChildId>; Body: Static<typeof CreditsBody> }>(
    '/child-users/:id/credits',
    {
      schema: {
        tags,
        summary: 'Move credits between the reseller and a child user',
        headers: ApiKeyHeader,
        params: ChildId,
        body: CreditsBody,
        response: { 200: Envelope(CreditMove), ...responses },
      },
    },
    async (request) => {
      const micros = toMicros(request.body.amount);
      if (micros === null) throw validation(['amount: must have at most 6 decimals']);
      const move = await moveChildCredits(db, dialect, request.principal.accountId, request.params.id, micros);
      return ok(move, `Moved ${Math.abs(move.amount)} ${move.amount > 0 ? 'to' : 'from'} child user ${move.childUserId}.`);
    },
  );
}
