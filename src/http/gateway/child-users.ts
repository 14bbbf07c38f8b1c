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
import { BODY_ERRORS, gatewayDoc } from './docs.ts';

const Name = Type.String({ maxLength: 200 });
const Email = Type.String({ maxLength: 254, description: 'E-mail address; unique (case-insensitive) across all child users.' });
const Phone = Type.String({
  maxLength: 32,
  description: 'Brazilian phone: area code + number, separators, + and a leading 55 tolerated; stored as 55 + area code + number.',
});

/** The body of POST /child-users; every field is required. */
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

/** A child user as the API answers it (no password, no keys). */
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
/** Every child user operation refuses a CUSTOMER key, before looking at the request. */
const NOT_RESELLER = {
  description: "The API key is not a RESELLER account's: only resellers manage child users.",
  message: 'Only the API key of a RESELLER account may manage child users.',
};
const CHILD = {
  id: 2051,
  fullName: 'Loja Exemplo Ltda',
  email: 'contato@lojaexemplo.com.br',
  phoneNumber: '5511987654321',
  document: '11222333000181',
  role: 'CUSTOMER',
  parentUserId: 2040,
};
const NO_CHILD = { description: 'No child user with this id under the reseller.', message: 'Child user 2051 was not found.' };

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

/** Creating child users, and what a reseller needs next: list, keys and credits of its child users. Only RESELLER keys (else 403). */
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
        ...gatewayDoc({
          operationId: 'createChildUser',
          tags,
          summary: 'Create a child user (a CUSTOMER account under the reseller of the key)',
          description: `Creates a CUSTOMER account under the reseller, with its owner credential (the child's panel login), and moves
\`limit\` credits from the reseller's balance to it. Every field is required. \`document\` is a CPF or CNPJ (check digits
verified); \`phoneNumber\` a Brazilian phone; \`email\` is unique across all child users. Every problem is listed at once.
Issue the child's API key next with POST /child-users/{id}/api-keys.`,
          success: { description: 'Created: the child user.', object: CHILD, message: 'Child user 2051 created.' },
          errors: {
            ...BODY_ERRORS,
            400: {
              description:
                "A field is missing or invalid (every problem listed), the e-mail is already in use, or the reseller's balance does not cover `limit`.",
              message: 'document: is not a valid CNPJ (check digits do not match)',
            },
            403: NOT_RESELLER,
          },
          requestExample: {
            fullName: 'Loja Exemplo Ltda',
            email: 'contato@lojaexemplo.com.br',
            phoneNumber: '(11) 98765-4321',
            document: '11.222.333/0001-81',
            limit: 100,
            ownerCredentialFullName: 'Ana Souza',
            ownerCredentialEmail: 'ana@lojaexemplo.com.br',
            ownerCredentialPhoneNumber: '11987654321',
            password: 'correct-horse-battery-staple',
          },
        }),
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
        ...gatewayDoc({
          operationId: 'listChildUsers',
          tags,
          summary: 'Child users of the reseller, oldest first',
          description: 'The child users created by the reseller, oldest first. `skip`/`limit` page them (at most 1,000).',
          success: { description: 'The page of child users; `totalRecords` counts them all.', object: [CHILD], totalRecords: 1 },
          errors: { 400: { description: 'A paging parameter is invalid.', message: 'limit: must be a whole number from 1 to 1000' }, 403: NOT_RESELLER },
        }),
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
        ...gatewayDoc({
          operationId: 'issueChildUserApiKey',
          tags,
          summary: 'Issue an API key for a child user (shown only in this answer)',
          description: `Issues a new API key for the child user; the key is shown only in this answer (the gateway keeps a hash). The body
is optional: \`allowedIps\` (addresses or CIDR ranges) restricts where the key may be used from.`,
          success: {
            description: 'Issued: the key and its id.',
            object: { id: 318, key: 'b5950ecf-9e54-40e4-80da-ce552c8cc741' },
            message: 'API key 318 issued for child user 2051; store it now, it is not shown again.',
          },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'An entry of `allowedIps` is not an address or CIDR range.',
              message: 'allowedIps: "10.0.0.300" is not an IP address or CIDR range',
            },
            403: NOT_RESELLER,
            404: NO_CHILD,
          },
          requestExample: { allowedIps: ['203.0.113.0/24'] },
        }),
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
        ...gatewayDoc({
          operationId: 'moveChildUserCredits',
          tags,
          summary: 'Move credits between the reseller and a child user',
          description: `A positive \`amount\` moves credits from the reseller to the child, a negative one back; at most 6 decimals. Both
balances change in one transaction, each with a ledger entry; the answer gives both new balances.`,
          success: {
            description: 'Moved: the amount and both balances after it.',
            object: { childUserId: 2051, amount: 50, balance: 150, resellerBalance: 849.5 },
            message: 'Moved 50 to child user 2051.',
          },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'The amount is zero, has more than 6 decimals, or the giving side lacks the balance.',
              message: 'amount: must have at most 6 decimals',
            },
            403: NOT_RESELLER,
            404: NO_CHILD,
          },
          requestExample: { amount: 50 },
        }),
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
