import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../core.ts';
import { MEDIA_NAME, contentTypeOfName } from '../rcs/media.ts';
import type { MediaStorage } from '../rcs/media-storage.ts';
import { RbmCarrier } from '../carriers/rbm/connector.ts';
import { SIGNATURE_HEADER, signatureValid, type RbmEvent } from '../carriers/rbm/wire.ts';
import { PUBLIC_DOCS } from './public-docs.ts';

const MediaParams = Type.Object({ name: Type.String() });

/**
 * Public routes of RCS, outside the gateway plugin (no API key): the stored
 * media carriers and handsets fetch (from the data directory or the bucket,
 * the same answer either way), and the signed event endpoint of RBM
 * connections.
 */
export async function rcsPublicRoutes(
  app: FastifyInstance,
  {
    core,
    mediaStorage,
    events = true,
  }: { core: Core; mediaStorage: MediaStorage /** Serve the RBM event endpoint (not in an api process). */; events?: boolean },
) {
  app.get<{ Params: Static<typeof MediaParams> }>('/media/:name', { schema: { ...PUBLIC_DOCS.media, params: MediaParams } }, async (request, reply) => {
    const { name } = request.params;
    const type = MEDIA_NAME.test(name) ? contentTypeOfName(name) : null;
    if (!type) return reply.status(404).type('text/plain').send('Not found');
    let object: Awaited<ReturnType<MediaStorage['get']>>;
    try {
      object = await mediaStorage.get(name);
    } catch (err) {
      request.log.error({ err, name }, 'RCS media storage failed');
      return reply.status(503).header('retry-after', '30').type('text/plain').send('Media storage unavailable');
    }
    if (!object) return reply.status(404).type('text/plain').send('Not found');
    // The type comes from the name (our own extension), never from what the storage says.
    return reply
      .type(type)
      .header('content-length', object.size)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(object.body);
  });
  if (events) await app.register(rbmEventRoute, { core });
}

const Params = Type.Object({ connector: Type.String({ maxLength: 40 }) });

/**
 * POST /rbm/events/:connector: the webhook of an RBM connection. The body is
 * authenticated by its HMAC (header X-Goog-Signature, base64 HMAC-SHA512 of
 * the raw body with the connection's webhook secret) before it is parsed.
 */
export async function rbmEventRoute(app: FastifyInstance, { core }: { core: Core }) {
  // The signature covers the raw bytes: keep them (this plugin's scope only).
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post<{ Params: Static<typeof Params>; Body: Buffer }>(
    '/rbm/events/:connector',
    { schema: { ...PUBLIC_DOCS.rbmEvents, params: Params } },
    async (request, reply) => {
      const carrier = core.carriers.get(request.params.connector);
      if (!(carrier instanceof RbmCarrier)) return reply.status(404).send({ error: 'no such RBM connection' });
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers[SIGNATURE_HEADER];
      if (!signatureValid(carrier.webhookSecret, raw, Array.isArray(signature) ? signature[0] : signature)) {
        return reply.status(401).send({ error: 'bad or missing signature' });
      }
      let event: unknown;
      try {
        event = JSON.parse(raw.toString('utf8'));
      } catch {
        return reply.status(400).send({ error: 'the body is not JSON' });
      }
      if (event === null || typeof event !== 'object' || Array.isArray(event)) return reply.status(400).send({ error: 'the body is not an event object' });
      // Answered once written: a 503 makes the platform send the event again.
      try {
        return reply.status(200).send({ handled: await carrier.handleEvent(event as RbmEvent) });
      } catch (err) {
        request.log.error({ err }, 'RBM event could not be written; asking for it again');
        return reply.status(503).send({ error: 'the event could not be stored; send it again later' });
      }
    },
  );
}
