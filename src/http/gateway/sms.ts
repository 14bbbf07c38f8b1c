import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { sendSms, sendSmsBatch, type SmsDeps } from '../../messaging/sms.ts';
import type { AcceptResult } from '../../messaging/accept.ts';
import { ApiKeyHeader, CommonSendFields, PhoneValue } from './schemas.ts';
import { OptionalNullable, absent } from '../../common/schema.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { shortLinkBase } from '../../shortlinks/links.ts';
import { BODY_ERRORS, SEND_ACCEPTED, gatewayDoc } from './docs.ts';
import { REQUEST_ID_HEADER } from '../openapi.ts';
import { MAX_TEXT_CHARACTERS } from '../../common/text.ts';

const SmsText = Type.String({ minLength: 1, maxLength: MAX_TEXT_CHARACTERS, description: 'Text; over 160 characters costs one credit per 153.' });

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
        ...gatewayDoc({
          operationId: 'sendSms',
          tags: ['SMS'],
          summary: 'Send an SMS to numbers and/or contact groups, now or scheduled',
          description: `Queues one text for every receiver (\`receivers\`, international numbers such as 5511999998888) and every phone of the
contact groups named (\`contactGroups\`, ids from GET /contacts); a phone listed twice gets one message. Without \`route\` the
account's first SMS route is used. The cost (one credit per part: 160 characters, or 153 per part of a longer text, at the
route's \`farePrice\`) is debited when the request is accepted; the answer comes once the request is stored. Numbers on the
account's blocklist are skipped and not charged. With \`scheduleDate\` the messages wait until then and can be cancelled with
POST /messages/request/cancel. The request id is in the \`X-Request-Id\` answer header. At most 10,000 listed receivers and
100,000 after the groups are expanded.`,
          success: SEND_ACCEPTED,
          errors: {
            ...BODY_ERRORS,
            400: {
              description:
                'A field is missing or invalid (every problem listed in `errors`; an invalid receiver refuses the whole request), the schedule date is past or more than a year ahead, or the balance does not cover the request. Nothing was sent or charged.',
              message: 'receivers[0]: 11987652003 is not a valid international number: Brazilian numbers start with 55, e.g. 5511987652003',
            },
            404: { description: 'The route, or a contact group, does not exist or is not granted to the account.', message: 'Route 7 was not found.' },
          },
          requestExample: {
            receivers: [5511999998888, '5521988887777'],
            message: 'Seu pedido saiu para entrega. Acompanhe: https://example.com/p/123',
            route: 1,
            tag: 'pedidos',
          },
        }),
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
        ...gatewayDoc({
          operationId: 'sendSmsBatch',
          tags: ['SMS'],
          summary: 'Send many SMS, each with its own text, as one request',
          description: `Up to 10,000 messages, each with its own receiver and text (and optionally its own \`tag\` and \`custom\`), accepted
and charged together under one request id. A receiver that appears twice gets its first message only. \`route\`,
\`scheduleDate\`, \`tag\`, \`custom\` and \`shortenLinks\` apply to the whole batch. The body may be up to 10 times the usual
size limit. \`object\` gives the request id and the credits charged.`,
          success: {
            description: 'Accepted (or scheduled): `object` has the request id and the credits charged.',
            object: { requestId: '01a204da-7993-7576-be8d-fdf9450e1c0e', credits: 2 },
            message: 'Accepted 2 message(s), 2 credit(s).',
            headers: REQUEST_ID_HEADER,
          },
          errors: {
            ...BODY_ERRORS,
            400: {
              description: 'A message or field is invalid (every problem listed), or the balance does not cover the batch. Nothing was sent or charged.',
              message: 'messages[1].message: must NOT have more than 2000 characters',
            },
            404: { description: 'The route does not exist or is not granted to the account.', message: 'Route 7 was not found.' },
            413: 'The body is over 10 times the size limit (`BODY_LIMIT_BYTES`, 1 MiB by default).',
          },
          requestExample: {
            messages: [
              { receiver: 5511999998888, message: 'Olá Ana, seu boleto vence amanhã.', custom: 'cliente-1021' },
              { receiver: 5521988887777, message: 'Olá Bruno, seu boleto vence amanhã.', custom: 'cliente-1022' },
            ],
            route: 1,
            tag: 'cobranca',
          },
        }),
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
