import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Core } from '../core.ts';
import { MEDIA_NAME, contentTypeOfName } from './media.ts';
import { rbmEventRoute } from '../carriers/rbm/events-route.ts';

/** Base of our own public URLs (media); GATEWAY_PUBLIC_URL or http://localhost:PORT. */
export const publicBase = (config: Config): string => (config.GATEWAY_PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');

const MediaParams = Type.Object({ name: Type.String() });

/**
 * Public routes of RCS, outside the gateway plugin (no API key): the stored
 * media carriers and handsets fetch, and the signed event endpoint of RBM
 * connections.
 */
export async function rcsPublicRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const dir = join(core.config.GATEWAY_DATA_DIR, 'media');
  app.get<{ Params: Static<typeof MediaParams> }>('/media/:name', { schema: { hide: true, params: MediaParams } }, async (request, reply) => {
    const { name } = request.params;
    const type = MEDIA_NAME.test(name) ? contentTypeOfName(name) : null;
    const info = type ? await stat(join(dir, name)).catch(() => null) : null;
    if (!type || !info?.isFile()) return reply.status(404).type('text/plain').send('Not found');
    return reply
      .type(type)
      .header('content-length', info.size)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(createReadStream(join(dir, name)));
  });
  await app.register(rbmEventRoute, { core });
}
