import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Core } from '../../core.ts';
import { ApiKeyHeader, CommonSendFields } from './schemas.ts';
import { absent, type Absent } from '../../common/schema.ts';
import { Envelope, ErrorEnvelope, errorResponses, ok } from './envelope.ts';
import { acceptedText } from './sms.ts';
import { CardFields, CardSchema, HttpUrl, Text, MAX_BASIC_TEXT, MAX_CAROUSEL_CARDS, MIN_CAROUSEL_CARDS } from '../../rcs/payload.ts';
import { MediaStore } from '../../rcs/media.ts';
import type { MediaStorage } from '../../rcs/storage.ts';
import { sendRcs, type RcsContent, type RcsSendResult } from '../../rcs/send.ts';
import { publicBase } from '../../rcs/media.ts';
import { BODY_ERRORS, SEND_ACCEPTED, gatewayDoc } from './docs.ts';

const BasicBody = Type.Object({ ...CommonSendFields, message: Text(MAX_BASIC_TEXT, 'Plain text, up to 1000 characters.') }, { required: ['message'] });
const FileBody = Type.Object(
  {
    ...CommonSendFields,
    file: HttpUrl,
    fileName: Text(255, 'File name shown to the receiver.'),
  },
  { required: ['file', 'fileName'] },
);
const CardBody = Type.Object({ ...CommonSendFields, ...CardFields });
const CarouselBody = Type.Object(
  { ...CommonSendFields, cards: Type.Array(CardSchema, { minItems: MIN_CAROUSEL_CARDS, maxItems: MAX_CAROUSEL_CARDS }) },
  { required: ['cards'] },
);

const RCS_COMMON = `Queued for every receiver and contact group phone like an SMS (same fields: \`receivers\`, \`contactGroups\`,
\`route\`, \`scheduleDate\`, \`tag\`, \`custom\`), through an RCS route (default: the account's first), charged one send at the
route's \`farePrice\` per receiver. Reported, scheduled and cancelled like SMS; phones without RCS get the route's SMS
fallback when it has one (docs/rcs.md).`;
const FETCHES = `Images are fetched once when the request is accepted (public http(s) URLs only), checked and resized, and served to
the carrier by the gateway.`;

const schema = (
  doc: { operationId: string; summary: string; description: string; invalid: string; requestExample: unknown },
  body: typeof BasicBody | typeof FileBody | typeof CardBody | typeof CarouselBody,
) => ({
  schema: {
    ...gatewayDoc({
      operationId: doc.operationId,
      tags: ['RCS'],
      summary: doc.summary,
      description: `${doc.description}\n\n${RCS_COMMON}`,
      success: SEND_ACCEPTED,
      errors: {
        ...BODY_ERRORS,
        400: {
          description:
            'A field is missing or invalid (every problem listed), a media URL cannot be fetched or is not an accepted file, the route is not an RCS route, or the balance does not cover the request.',
          message: doc.invalid,
        },
        404: {
          description: 'The route, or a contact group, does not exist or is not granted; or the account has no RCS route.',
          message: 'An RCS route for this account was not found.',
        },
        // 503 also when the media storage (bucket) is down; nothing was queued or charged.
        503: 'The database or the media storage (bucket) is unavailable: nothing was queued or charged. Retry after `Retry-After` seconds.',
      },
      requestExample: doc.requestExample,
    }),
    headers: ApiKeyHeader,
    body,
    response: { 200: Envelope(Type.Null()), ...errorResponses, 503: ErrorEnvelope },
  },
});

/** The four RCS sends (basic, file, card, carousel); charged one send x route farePrice per receiver; queued, scheduled, cancelled and reported like SMS (docs/rcs.md). */
export async function rcsRoutes(app: FastifyInstance, { core, mediaStorage }: { core: Core; mediaStorage: MediaStorage }) {
  const media = new MediaStore(core.events.fetcher, mediaStorage, {
    publicBase: publicBase(core.config),
    maxBytes: core.config.RCS_MEDIA_MAX_BYTES,
    timeoutMs: core.config.RCS_MEDIA_TIMEOUT_MS,
    log: core.log,
  });
  const answer = (reply: FastifyReply, sent: RcsSendResult) => {
    void reply.header('X-Request-Id', sent.result.requestId);
    return ok(null, acceptedText(sent.result, sent.scheduled));
  };
  const common = (b: Absent<Static<typeof CardBody>>) => ({
    receivers: b.receivers,
    contactGroups: b.contactGroups,
    route: b.route,
    scheduleDate: b.scheduleDate,
    tag: b.tag,
    custom: b.custom,
  });
  const card = (b: Absent<Static<typeof CardSchema>>) => ({ cardImage: b.cardImage, cardTitle: b.cardTitle, cardMessage: b.cardMessage, buttons: b.buttons });
  const send = (request: { principal: Parameters<typeof sendRcs>[2] }, body: Absent<Static<typeof CardBody>>, content: RcsContent) =>
    sendRcs(core, media, request.principal, common(body), content);

  // absent(): a null optional field (cards and buttons included) is read as absent.
  app.post<{ Body: Static<typeof BasicBody> }>(
    '/messages/rcs/basic/send',
    schema(
      {
        operationId: 'sendRcsBasic',
        summary: 'Send an RCS text message (up to 1000 characters)',
        description: 'Sends `message`, plain text of 1 to 1000 characters, as an RCS message.',
        invalid: 'message: must be text of 1 to 1000 characters, not only spaces',
        requestExample: { receivers: [5511999998888], message: 'Seu pedido #4471 saiu para entrega e chega hoje até as 18h.', route: 2 },
      },
      BasicBody,
    ),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'basic', message: body.message }));
    },
  );
  app.post<{ Body: Static<typeof FileBody> }>(
    '/messages/rcs/file/send',
    schema(
      {
        operationId: 'sendRcsFile',
        summary: 'Send a file (image, video, audio or PDF) by RCS',
        description: `Sends the file at \`file\` (a public http(s) URL) with the name \`fileName\`. ${FETCHES}`,
        invalid: 'file: must be an http(s) URL (at most 2048 characters)',
        requestExample: { receivers: [5511999998888], file: 'https://example.com/boletos/4471.pdf', fileName: 'boleto-4471.pdf', route: 2 },
      },
      FileBody,
    ),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'file', file: body.file, fileName: body.fileName }));
    },
  );
  app.post<{ Body: Static<typeof CardBody> }>(
    '/messages/rcs/card/send',
    schema(
      {
        operationId: 'sendRcsCard',
        summary: 'Send an RCS rich card (image, title, text, up to 4 buttons)',
        description: `Sends one rich card: an image (\`cardImage\`), a title, a text and up to 4 buttons opening URLs; it needs an image
or some text. ${FETCHES}`,
        invalid: 'cardImage: a card needs an image (cardImage) or text (cardTitle or cardMessage)',
        requestExample: {
          receivers: [5511999998888],
          route: 2,
          cardImage: 'https://example.com/promo.png',
          cardTitle: 'Black Friday',
          cardMessage: '20% off today only',
          buttons: [{ text: 'Shop now', url: 'https://example.com/shop' }],
        },
      },
      CardBody,
    ),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'card', card: card(body) }));
    },
  );
  app.post<{ Body: Static<typeof CarouselBody> }>(
    '/messages/rcs/carousel/send',
    schema(
      {
        operationId: 'sendRcsCarousel',
        summary: 'Send an RCS carousel of 2 to 10 cards',
        description: `Sends 2 to 10 rich cards side by side (\`cards\`), each like the card of POST /messages/rcs/card/send. ${FETCHES}`,
        invalid: 'cards: must NOT have fewer than 2 items',
        requestExample: {
          receivers: [5511999998888],
          route: 2,
          cards: [
            {
              cardImage: 'https://example.com/p/tenis.png',
              cardTitle: 'Tênis Run',
              cardMessage: 'R$ 299,90',
              buttons: [{ text: 'Comprar', url: 'https://example.com/p/tenis' }],
            },
            {
              cardImage: 'https://example.com/p/meia.png',
              cardTitle: 'Meia Pro',
              cardMessage: 'R$ 39,90',
              buttons: [{ text: 'Comprar', url: 'https://example.com/p/meia' }],
            },
          ],
        },
      },
      CarouselBody,
    ),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'carousel', cards: body.cards.map(card) }));
    },
  );
}
