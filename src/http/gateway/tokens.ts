import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { createToken, validateToken, DEFAULT_EXPIRY_MINUTES, MAX_EXPIRY_MINUTES } from '../../tokens/store.ts';
import { maskCode } from '../../tokens/mask.ts';
import { resolveTargeting } from '../../messaging/send.ts';
import { normalizeBrazilian, normalizeInternational } from '../../common/phone.ts';
import { validation } from '../../common/errors.ts';
import { ApiKeyHeader, RouteId } from './schemas.ts';
import { OptionalNullable, absent } from '../../common/schema.ts';
import { Envelope, ErrorEnvelope, errorResponses, ok } from './envelope.ts';
import { BODY_ERRORS, gatewayDoc } from './docs.ts';
import { REQUEST_ID_HEADER } from '../openapi.ts';

const PhoneText = Type.Union([Type.String({ minLength: 1, maxLength: 32 }), Type.Integer({ minimum: 1 })], {
  description: 'Phone: 55 + area code + number (a national number is taken as Brazilian).',
});

const CreateBody = Type.Object(
  {
    prefix: OptionalNullable(Type.String({ maxLength: 50, description: 'Text before the code: "{prefix}: {code}"' })),
    phoneNumber: PhoneText,
    expireInMinutes: OptionalNullable(Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_MINUTES, default: DEFAULT_EXPIRY_MINUTES })),
    enforceSecureValidation: OptionalNullable(Type.Boolean({ description: 'Validation must then name the phone the code was sent to.' })),
    route: OptionalNullable(RouteId),
  },
  { required: ['phoneNumber'] },
);

const ValidateBody = Type.Object(
  {
    token: Type.Union([Type.String({ minLength: 1, maxLength: 16 }), Type.Integer({ minimum: 0 })]),
    phoneNumber: OptionalNullable(PhoneText),
  },
  { required: ['token'] },
);

/** The token message: the text sent (code masked), its receivers and the route's display name. */
const TokenMessage = Type.Object({ content: Type.String(), receivers: Type.Array(Type.String()), sender: Type.String() });
const Validated = Type.Object({ valid: Type.Boolean(), phoneNumber: Type.String() });

function phoneOf(value: string | number): string {
  const text = String(value).trim();
  const phone = normalizeInternational(text.replace(/[\s()\-.]/g, '')) ?? normalizeBrazilian(text);
  if (!phone) throw validation([`phoneNumber: ${JSON.stringify(value)} is not a phone number (55 + area code + number)`]);
  return phone;
}

/**
 * One-time codes sent by SMS through a route, charged like any SMS; the
 * store (src/tokens) is shared with the legacy /tokenmanager. No answer,
 * report or event contains the code itself, and validation spends the
 * account's budget of wrong guesses (429 with Retry-After once spent).
 */
export async function tokenRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/api-tokens/create',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'createToken',
          tags: ['Tokens'],
          summary: 'Create a one-time code and send it by SMS',
          description: `Makes a 6-digit code and sends \`{prefix}: {code}\` by SMS to \`phoneNumber\` through the route (default: the account's
first SMS route), charged like any SMS. The code is valid for \`expireInMinutes\` (default 10, at most 1440) and once.
The answer never contains the code: \`content\` shows the text with the code masked. With \`enforceSecureValidation\`,
validation must give the phone too. At most 5 codes per phone every 10 minutes (the sixth is a 429, not charged).`,
          success: {
            description: 'The code was sent: the text (code masked), the receiver and the route name.',
            object: { content: 'Acme: ******', receivers: ['5511999998888'], sender: 'Claro SMS' },
            message: 'Code sent to 5511999998888; valid for 10 minute(s).',
            headers: REQUEST_ID_HEADER,
          },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'The phone is not a phone number, `expireInMinutes` is out of range, or the balance does not cover the SMS.',
              message: 'phoneNumber: "12345" is not a phone number (55 + area code + number)',
            },
            404: { description: 'The route does not exist or is not granted to the account.', message: 'Route 7 was not found.' },
            429: {
              description: 'More than 5 codes for this phone in 10 minutes: nothing sent or charged; retry after `Retry-After` seconds.',
              message: 'Too many tokens for this phone: at most 5 every 10 minutes.',
            },
          },
          requestExample: { phoneNumber: '5511999998888', prefix: 'Acme', expireInMinutes: 10, enforceSecureValidation: true },
        }),
        headers: ApiKeyHeader,
        body: CreateBody,
        response: { 200: Envelope(TokenMessage), 429: ErrorEnvelope, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = absent(request.body);
      const phone = phoneOf(body.phoneNumber);
      const { route } = await resolveTargeting(db, core.routes, request.principal, { receivers: [phone], route: body.route }, 'SMS');
      const token = await createToken({ db, accept: (input) => core.accept(input) }, request.principal.accountId, route, {
        phone,
        prefix: body.prefix ?? null,
        expireInMinutes: body.expireInMinutes,
        enforcePhone: body.enforceSecureValidation === true,
        sender: null,
      });
      void reply.header('X-Request-Id', token.requestId);
      const shown = maskCode(token.text);
      return ok(
        { content: shown, receivers: [phone], sender: route.display_name },
        `Code sent to ${phone}; valid for ${body.expireInMinutes ?? DEFAULT_EXPIRY_MINUTES} minute(s).`,
      );
    },
  );

  app.post<{ Body: Static<typeof ValidateBody> }>(
    '/api-tokens/validate',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'validateToken',
          tags: ['Tokens'],
          summary: 'Validate a one-time code (single use)',
          description: `Checks a code made by POST /api-tokens/create; a valid code is used up. Give \`phoneNumber\` when the code was made
with \`enforceSecureValidation\`. Every refused validation spends one of the account's 20 wrong guesses per 10 minutes;
once they are spent every validation is a 429 until the window ends, and 5 wrong guesses naming a phone lock that
phone's codes.`,
          success: { description: 'The code is valid (and now used).', object: { valid: true, phoneNumber: '5511999998888' }, message: 'The code is valid.' },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'The code is unknown, expired, already used, locked, sent to another phone, or needs `phoneNumber`.',
              message: 'The token code is not valid.',
            },
            429: {
              description: "The account's budget of wrong guesses is spent: every validation is refused until `Retry-After` seconds have passed.",
              message: 'Too many wrong validation attempts on this account (at most 20 every 10 minutes); try again in 412 second(s).',
            },
          },
          requestExample: { token: '810097', phoneNumber: '5511999998888' },
        }),
        headers: ApiKeyHeader,
        body: ValidateBody,
        response: { 200: Envelope(Validated), 429: ErrorEnvelope, ...errorResponses },
      },
    },
    async (request) => {
      const body = absent(request.body);
      const raw = String(body.token).trim();
      // A code sent as a JSON number loses its leading zeros.
      const code = /^\d{1,6}$/.test(raw) ? raw.padStart(6, '0') : raw;
      const phone = body.phoneNumber === undefined ? null : phoneOf(body.phoneNumber);
      const result = await validateToken(db, request.principal.accountId, { code, phone });
      return ok({ valid: true, phoneNumber: result.phone }, 'The code is valid.');
    },
  );
}
