import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import helmet from '@fastify/helmet';
import { failure } from '../gateway/envelope.ts';

/** Where `npm run build:web` writes the panel (web/dist at the repository's root). */
export const PANEL_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

export const NOT_BUILT_TEXT = 'The panel is not built: run npm run build:web';

/**
 * The browser panel's files at /panel/ (register with prefix /panel): the
 * Vite build, and index.html for every other path that is not under
 * /panel/api/ (the front end routes them itself). Panel pages get a
 * Content-Security-Policy that allows this origin only, and may not be
 * framed. Without a build, 503 with what to run.
 */
export async function panelStatic(app: FastifyInstance, opts: { dir?: string }) {
  const dir = opts.dir ?? PANEL_DIST;
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    // Left to whatever terminates TLS (it may serve other sites of the domain).
    hsts: false,
  });
  const apiNotFound = (request: FastifyRequest, reply: FastifyReply) => {
    const text = `No panel operation ${request.method} ${request.url.split('?')[0]}; see docs/panel.md.`;
    return reply.status(404).send(failure(text, [text]));
  };
  const isApi = (request: FastifyRequest) => request.url.startsWith('/panel/api/') || request.url === '/panel/api';

  if (!existsSync(join(dir, 'index.html'))) {
    const notBuilt = (request: FastifyRequest, reply: FastifyReply) =>
      isApi(request) ? apiNotFound(request, reply) : reply.status(503).type('text/plain; charset=utf-8').send(NOT_BUILT_TEXT);
    app.get('/', { schema: { hide: true } }, notBuilt);
    app.get('/*', { schema: { hide: true } }, notBuilt);
    app.setNotFoundHandler(apiNotFound);
    return;
  }
  await app.register(fastifyStatic, { root: dir, prefix: '/', index: ['index.html'], schemaHide: true });
  // A path that is no file: the front end's own route (GET), or an unknown panel API operation.
  app.setNotFoundHandler((request, reply) => {
    if (isApi(request) || (request.method !== 'GET' && request.method !== 'HEAD')) return apiNotFound(request, reply);
    return reply.sendFile('index.html');
  });
}
