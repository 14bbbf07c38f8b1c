import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { createToken, validateToken, DEFAULT_EXPIRY_MINUTES, MAX_EXPIRY_MINUTES } from '../../tokens/store.ts';
import { Envelope, badRequest, errorResponses, ok } from './envelope.ts';
import { AuthKeyHeader, Phone, security, tags } from './schemas.ts';
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

/**
 * /tokenmanager: POST creates a verification code and sends it by SMS
 * (charged like any SMS); PUT validates it once. The store lives in
 * src/tokens so the gateway's /api-tokens/* share it, and with it the
 * account's budget of wrong guesses (429 with Retry-After once spent).
 */
export async function tokenRoutes(app: FastifyInstance, ctx: LegacyContext) {
  const common = { tags, security, headers: AuthKeyHeader };

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/tokenmanager',
    {
      schema: {
        ...common,
        summary: 'Create a verification code and send it by SMS',
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
        summary: 'Validate a verification code (single use)',
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
