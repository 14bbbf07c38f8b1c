import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { resolveTargeting } from '../../messaging/send.ts';
import { chargedSegments } from '../../billing/segments.ts';
import { internationalProblem, normalizeInternational } from '../../shared/phone.ts';
import { validation } from '../../shared/errors.ts';
import type { AcceptResult } from '../../messaging/accept.ts';
import { ApiKeyHeader, CommonSendFields, PhoneValue } from './schemas.ts';
import { OptionalNullable, absent } from '../../shared/schema.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { shortenForSend } from '../../shortlinks/shorten.ts';
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
  const db = core.db.kysely;

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
      const body = absent(request.body);
      const target = await resolveTargeting(db, core.routes, request.principal, body, 'SMS');
      const shortened = await shortenForSend(db, request.principal.accountId, shortLinkBase(core.config), body.shortenLinks, [body.message]);
      const message = shortened.texts[0] ?? body.message;
      const segments = chargedSegments(message);
      const result = await core
        .accept({
          accountId: request.principal.accountId,
          route: target.route,
          source: 'gateway',
          content: message,
          tag: body.tag ?? null,
          custom: body.custom ?? null,
          sender: null,
          scheduleAt: target.scheduleAt,
          items: target.receivers.map((receiver) => ({
            receiver,
            content: message,
            segments,
            tag: body.tag ?? null,
            custom: body.custom ?? null,
            payload: null,
          })),
        })
        .catch(shortened.discard);
      void reply.header('X-Request-Id', result.requestId);
      return ok(null, acceptedText(result, target.scheduleAt !== null));
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
      const body = absent(request.body);
      const problems: string[] = [];
      const items = new Map<string, { receiver: string; content: string; segments: number; tag: string | null; custom: string | null; payload: null }>();
      body.messages.forEach((m, i) => {
        const receiver = normalizeInternational(m.receiver);
        if (!receiver) problems.push(`messages[${i}].receiver: ${internationalProblem(m.receiver)}`);
        else if (!items.has(receiver)) {
          items.set(receiver, {
            receiver,
            content: m.message,
            segments: chargedSegments(m.message),
            tag: m.tag ?? body.tag ?? null,
            custom: m.custom ?? body.custom ?? null,
            payload: null,
          });
        }
      });
      if (problems.length) throw validation(problems);
      const target = await resolveTargeting(
        db,
        core.routes,
        request.principal,
        { route: body.route, scheduleDate: body.scheduleDate, receivers: [...items.keys()] },
        'SMS',
      );
      const shortened = await shortenForSend(
        db,
        request.principal.accountId,
        shortLinkBase(core.config),
        body.shortenLinks,
        [...items.values()].map((item) => item.content),
      );
      const finalItems = [...items.values()].map((item, i) => {
        const content = shortened.texts[i] ?? item.content;
        return { ...item, content, segments: chargedSegments(content) };
      });
      const result = await core
        .accept({
          accountId: request.principal.accountId,
          route: target.route,
          source: 'gateway',
          content: finalItems[0]?.content ?? body.messages[0]?.message ?? '',
          tag: body.tag ?? null,
          custom: body.custom ?? null,
          sender: null,
          scheduleAt: target.scheduleAt,
          items: finalItems,
        })
        .catch(shortened.discard);
      void reply.header('X-Request-Id', result.requestId);
      return ok({ requestId: result.requestId, credits: result.credits }, acceptedText(result, target.scheduleAt !== null));
    },
  );
}
