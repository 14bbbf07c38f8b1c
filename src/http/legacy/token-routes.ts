import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { createToken, validateToken, DEFAULT_EXPIRY_MINUTES, MAX_EXPIRY_MINUTES } from '../../tokens/store.ts';
import { Envelope, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, Phone } from './schemas.ts';
import { legacyDoc, t as pt } from './docs.ts';
import { parsePhone } from './phones.ts';
import { textOf } from './sending.ts';
import { legacyRoute, requireOneCredit } from '../../messaging/legacy-send.ts';
import { formatDate } from './dates.ts';
import type { LegacyContext } from './context.ts';

const CreateBody = Type.Object(
  {
    PhoneNumber: Phone,
    Prefix: Type.Optional(Type.String({ maxLength: 100, description: 'Text before the code: "{Prefix}: {code}"; without it the code alone is sent' })),
    ExpireInMinutes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_MINUTES, description: `Minutes the code is valid (default ${DEFAULT_EXPIRY_MINUTES}, at most 24 h)` }),
    ),
    EnforceSecureValidation: Type.Optional(Type.Boolean({ description: 'When true, validation must give the phone number too' })),
    Sender: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { required: ['PhoneNumber'] },
);

const ValidateBody = Type.Object(
  {
    TokenCode: Type.Union([Type.String({ maxLength: 20 }), Type.Integer()], { description: 'The 6-digit code the phone received' }),
    PhoneNumber: Type.Optional(Phone),
  },
  { required: ['TokenCode'] },
);

const Created = Type.Object({ RequestUniqueId: Type.String(), PhoneNumber: Type.String(), ExpireDate: Type.String() });
const Validated = Type.Object({ Valid: Type.Boolean(), PhoneNumber: Type.String() });

const tags = ['Legacy v2: tokens'];
const DOCS = {
  create: legacyDoc({
    operationId: 'legacyCreateToken',
    tags,
    summary: 'Create a verification code and send it by SMS',
    description: `Makes a 6-digit code and sends \`{Prefix}: {code}\` (or the code alone) by SMS to \`PhoneNumber\` (area code + number),
charged like any SMS. Valid for \`ExpireInMinutes\` (default ${DEFAULT_EXPIRY_MINUTES}, at most 1440) and once; with
\`EnforceSecureValidation\` the validation must give the phone too. The answer never contains the code. At most 5 codes per
phone every 10 minutes (the same store as the gateway's /api-tokens).`,
    success: {
      description: 'Sent: the request id, the phone and when the code expires (account time zone).',
      object: { RequestUniqueId: '01a204da-7993-7576-be8d-fdf9450e1c0e', PhoneNumber: '5511999998888', ExpireDate: '2026-11-22T17:12:47-03:00' },
      message: pt.tokenSent('5511999998888', DEFAULT_EXPIRY_MINUTES),
      requestId: true,
    },
    errors: {
      400: { description: '`PhoneNumber` missing or invalid, `ExpireInMinutes` out of range, or not enough credits.', message: pt.phoneInvalid('1199999') },
      429: {
        description: 'More than 5 codes for this phone in 10 minutes (nothing sent or charged), or too many requests for the key.',
        message: pt.tokenRateLimited,
      },
    },
    requestExample: { PhoneNumber: '11999998888', Prefix: 'Acme', ExpireInMinutes: 10, EnforceSecureValidation: true },
  }),
  validate: legacyDoc({
    operationId: 'legacyValidateToken',
    tags,
    summary: 'Validate a verification code (single use)',
    description: `Checks \`TokenCode\` (a number is accepted too: \`12345\` reads as \`012345\`); a valid code is used up. Give
\`PhoneNumber\` when the code was made with \`EnforceSecureValidation\`. Every refused validation spends one of the account's
20 wrong guesses per 10 minutes (shared with the gateway's /api-tokens/validate); once spent, every validation is a 429
until the window ends.`,
    success: { description: 'The code is valid (and now used).', object: { Valid: true, PhoneNumber: '5511999998888' }, message: pt.tokenValid },
    errors: {
      400: {
        description: 'The code is missing, unknown, expired, already used, locked, sent to another phone, or needs `PhoneNumber`.',
        message: pt.tokenInvalid,
      },
      429: {
        description: "The account's budget of wrong guesses is spent (every validation refused until `Retry-After`), or too many requests for the key.",
        message: pt.tokenGuessLimit(412),
      },
    },
    requestExample: { TokenCode: '810097', PhoneNumber: '11999998888' },
  }),
};

/**
 * /tokenmanager: POST creates a verification code and sends it by SMS
 * (charged like any SMS); PUT validates it once. The store lives in
 * src/tokens so the gateway's /api-tokens/* share it, and with it the
 * account's budget of wrong guesses (429 with Retry-After once spent).
 */
export async function tokenRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const common = { headers: AuthKeyHeader };

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/tokenmanager',
    {
      schema: {
        ...common,
        ...DOCS.create,
        body: CreateBody,
        response: { 200: Envelope(Created), ...errorResponses },
      },
    },
    async (request, reply) => {
      const phone = parsePhone(request.body.PhoneNumber);
      const { accountId, timezone } = request.principal;
      const route = await legacyRoute(ctx.core.routes, accountId);
      await requireOneCredit(ctx.db, accountId, route);
      const minutes = request.body.ExpireInMinutes ?? DEFAULT_EXPIRY_MINUTES;
      const token = await createToken({ db: ctx.db, accept: (input) => ctx.core.accept(input) }, accountId, route, {
        phone,
        prefix: textOf(request.body.Prefix),
        expireInMinutes: minutes,
        enforcePhone: request.body.EnforceSecureValidation === true,
        sender: textOf(request.body.Sender),
      });
      void reply.header('X-Request-Id', token.requestId);
      return ok(
        { RequestUniqueId: token.requestId, PhoneNumber: phone, ExpireDate: formatDate(token.expiresAt, timezone) ?? '' },
        ctx.t.tokenSent(phone, minutes),
      );
    },
  );

  app.put<{ Body: Static<typeof ValidateBody> }>(
    '/tokenmanager',
    {
      schema: {
        ...common,
        ...DOCS.validate,
        body: ValidateBody,
        response: { 200: Envelope(Validated), ...errorResponses },
      },
    },
    async (request) => {
      const raw = String(request.body.TokenCode).trim();
      if (!raw) throw badRequest((x) => x.tokenCodeMissing);
      // A code sent as a JSON number loses its leading zeros.
      const code = /^\d{1,6}$/.test(raw) ? raw.padStart(6, '0') : raw;
      const given = request.body.PhoneNumber;
      const phone = given === undefined || String(given).trim() === '' ? null : parsePhone(given);
      const result = await validateToken(ctx.db, request.principal.accountId, { code, phone });
      return ok({ Valid: true, PhoneNumber: result.phone }, ctx.t.tokenValid);
    },
  );
}
