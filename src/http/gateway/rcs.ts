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

const schema = (summary: string, body: typeof BasicBody | typeof FileBody | typeof CardBody | typeof CarouselBody) => ({
  // 503: the media storage (bucket) is down; nothing was queued or charged.
  schema: { tags: ['RCS'], summary, headers: ApiKeyHeader, body, response: { 200: Envelope(Type.Null()), ...errorResponses, 503: ErrorEnvelope } },
});

/** Spec 4.2: the four RCS sends; charged one send x route farePrice per receiver; queued, scheduled, cancelled and reported like SMS (docs/rcs.md). */
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
    schema('Send an RCS text message (up to 1000 characters)', BasicBody),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'basic', message: body.message }));
    },
  );
  app.post<{ Body: Static<typeof FileBody> }>(
    '/messages/rcs/file/send',
    schema('Send a file (image, video, audio or PDF) by RCS', FileBody),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'file', file: body.file, fileName: body.fileName }));
    },
  );
  app.post<{ Body: Static<typeof CardBody> }>(
    '/messages/rcs/card/send',
    schema('Send an RCS rich card (image, title, text, up to 4 buttons)', CardBody),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'card', card: card(body) }));
    },
  );
  app.post<{ Body: Static<typeof CarouselBody> }>(
    '/messages/rcs/carousel/send',
    schema('Send an RCS carousel of 2 to 10 cards', CarouselBody),
    async (request, reply) => {
      const body = absent(request.body);
      return answer(reply, await send(request, body, { kind: 'carousel', cards: body.cards.map(card) }));
    },
  );
}
