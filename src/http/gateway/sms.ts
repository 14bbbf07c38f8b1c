import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { sendSms, sendSmsBatch, type SmsDeps } from '../../messaging/sms.ts';
import type { AcceptResult } from '../../messaging/accept.ts';
import { ApiKeyHeader, CommonSendFields, PhoneValue } from './schemas.ts';
import { OptionalNullable, absent } from '../../common/schema.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { shortLinkBase } from '../../shortlinks/links.ts';

/** Longest SMS text we accept (about 13 concatenated parts). */
const MAX_SMS_LENGTH = 2000;

const SmsText = Type.String({ minLength: 1, maxLength: MAX_SMS_LENGTH, description: 'Text; over 160 characters costs one credit per 153.' });

/** Replace each http(s) URL of the text(s) by a new short link of the account before segments are counted (docs/child-users-and-short-links.md). */
const ShortenLinks = OptionalNullable(
  Type.Boolean({ description: 'Replace each http(s) URL in the text by a short link of the account (counted clicks) before the text is charged and sent.' }),
);

const SmsSendBody = Type.Object({ ...CommonSendFields, message: SmsText, shortenLinks: ShortenLinks }, { required: ['message'] });

const BatchBody = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        {
          receiver: PhoneValue,
          message: SmsText,
          custom: OptionalNullable(Type.String({ maxLength: 1000 })),
          tag: OptionalNullable(Type.String({ maxLength: 100 })),
        },
        { required: ['receiver', 'message'] },
      ),
      { minItems: 1, maxItems: 10_000 },
    ),
    route: CommonSendFields.route,
    scheduleDate: CommonSendFields.scheduleDate,
    tag: CommonSendFields.tag,
    custom: CommonSendFields.custom,
    shortenLinks: ShortenLinks,
  },
  { required: ['messages'] },
);

const BatchAnswer = Type.Object({ requestId: Type.String({ format: 'uuid' }), credits: Type.Integer() });

/** Text of a send answer: what was accepted, what it cost. */
export function acceptedText(r: AcceptResult, scheduled: boolean): string {
  const blocked = r.blocked ? `; ${r.blocked} on the blocklist not sent` : '';
  return `${scheduled ? 'Scheduled' : 'Accepted'} ${r.messages - r.blocked} message(s), ${r.credits} credit(s)${blocked}.`;
}

export async function smsRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const deps: SmsDeps = { db: core.db.kysely, routes: core.routes, accept: (input) => core.accept(input), shortLinkBase: shortLinkBase(core.config) };

  app.post<{ Body: Static<typeof SmsSendBody> }>(
    '/messages/sms/send',
    {
      schema: {
        tags: ['SMS'],
        summary: 'Send an SMS to numbers and/or contact groups, now or scheduled',
        headers: ApiKeyHeader,
        body: SmsSendBody,
        response: { 200: Envelope(Type.Null()), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { result, scheduled } = await sendSms(deps, request.principal, absent(request.body));
      void reply.header('X-Request-Id', result.requestId);
      return ok(null, acceptedText(result, scheduled));
    },
  );

  app.post<{ Body: Static<typeof BatchBody> }>(
    '/messages/sms/batch/send',
    {
      bodyLimit: core.config.BODY_LIMIT_BYTES * 10,
      schema: {
        tags: ['SMS'],
        summary: 'Send many SMS, each with its own text, as one request',
        headers: ApiKeyHeader,
        body: BatchBody,
        response: { 200: Envelope(BatchAnswer), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { result, scheduled } = await sendSmsBatch(deps, request.principal, absent(request.body));
      void reply.header('X-Request-Id', result.requestId);
      return ok({ requestId: result.requestId, credits: result.credits }, acceptedText(result, scheduled));
    },
  );
}
