import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Core } from '../core.ts';
import { MEDIA_NAME, contentTypeOfName } from './media.ts';
import type { MediaStorage } from './storage.ts';
import { rbmEventRoute } from '../carriers/rbm/events-route.ts';

/** Base of our own public URLs (media); GATEWAY_PUBLIC_URL or http://localhost:PORT. */
export const publicBase = (config: Config): string => (config.GATEWAY_PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');

const MediaParams = Type.Object({ name: Type.String() });

/**
 * Public routes of RCS, outside the gateway plugin (no API key): the stored
 * media carriers and handsets fetch (from the data directory or the bucket,
 * the same answer either way), and the signed event endpoint of RBM
 * connections.
 */
export async function rcsPublicRoutes(app: FastifyInstance, { core, mediaStorage }: { core: Core; mediaStorage: MediaStorage }) {
  app.get<{ Params: Static<typeof MediaParams> }>('/media/:name', { schema: { hide: true, params: MediaParams } }, async (request, reply) => {
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
  await app.register(rbmEventRoute, { core });
}
