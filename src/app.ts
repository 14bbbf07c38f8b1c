import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { sql } from 'kysely';
import type { Core } from './core.ts';
import { schemaErrorFormatter, validatorCompiler } from './http/validation.ts';
import { gatewayPlugin } from './http/gateway/plugin.ts';
import { gatewayErrorHandler } from './http/gateway/envelope.ts';
import { storageFault } from './db/faults.ts';
import { PARSER_HEAD_LIMIT, clientErrorHandler, headRefusal, refuseLargeHeads, sendRefusal } from './http/malformed.ts';
import { shortLinkRedirect } from './http/gateway/short-links.ts';
import { adminPlugin } from './http/admin/plugin.ts';
import { legacyPlugin } from './http/legacy/plugin.ts';
import { rbmEventRoute, rcsPublicRoutes } from './http/public-routes.ts';
import { openMediaStorage } from './rcs/storage.ts';
import { metricsRoute, recordResponses } from './http/metrics-route.ts';
import { swaggerOptions } from './http/openapi.ts';
import { PUBLIC_DOCS } from './http/public-docs.ts';
import { accessLog } from './http/access-log.ts';
import type { AdminToken } from './http/operator-token.ts';
import { PanelSessions } from './http/panel/sessions.ts';
import { panelApiPlugin } from './http/panel/plugin.ts';
import { panelStatic } from './http/panel/static.ts';

export interface AppOptions {
  /** The operator token (/admin, /metrics), or only its SHA-256 when the database keeps it (src/bootstrap.ts). */
  adminToken: AdminToken;
  /** Pino logger for requests; tests pass false. */
  logger?: boolean;
  /** The built browser panel (default web/dist; src/http/panel/static.ts). */
  panelDir?: string;
}

/**
 * Builds the HTTP app over a core, without listening: the process
 * (server.ts) and the tests (app.inject) both use it.
 */
export async function buildApp(core: Core, options: AppOptions): Promise<FastifyInstance> {
  // RCS media: written by the sends, read by the public /media route.
  const mediaStorage = await openMediaStorage(core.config);
  const app = Fastify({
    loggerInstance: options.logger === false ? undefined : (core.log as FastifyBaseLogger),
    ...(options.logger === false ? { logger: false } : {}),
    bodyLimit: core.config.BODY_LIMIT_BYTES,
    trustProxy: false,
    genReqId: () => crypto.randomUUID(),
    // Malformed requests (docs/decisions.md): a head up to the parser's bound reaches the app, which knows the
    // path and checks the URL and header limits (refuseLargeHeads); what the parser refuses is answered by
    // clientErrorHandler. Both answer in the envelope of the interface the path belongs to.
    http: { maxHeaderSize: PARSER_HEAD_LIMIT, requireHostHeader: false },
    clientErrorHandler,
    // Errors before routing (a malformed URL such as /credits/%) get the envelope of the interface the path belongs to.
    frameworkErrors: (error, request, raw) => {
      const reply = raw as unknown as FastifyReply;
      const url = request.url ?? '';
      return sendRefusal(reply, url, headRefusal(request.raw) ?? { status: 400, text: `Malformed request: ${error.message}` });
    },
    logController: new LogController({ disableRequestLogging: true }),
    schemaErrorFormatter,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Bodies are JSON, sent as application/json: a text/plain body would reach a schema as a string ("must be
  // object"), and a browser may send text/plain across sites without asking, with the panel's cookie.
  app.removeContentTypeParser('text/plain');
  // Before any route or plugin: they all inherit these. Routes outside the three interfaces' plugins
  // (health, media, short link redirects...) answer errors in the gateway envelope.
  app.setErrorHandler(gatewayErrorHandler);
  app.addHook('onRequest', refuseLargeHeads);
  // Before any route: the hook covers them all, and the not-found handlers.
  recordResponses(app, core.metrics);
  // One log line per request (src/http/access-log.ts); Fastify's own request logging is off (logController above).
  if (options.logger !== false && core.config.ACCESS_LOG === 'true') accessLog(app);

  // The document's head, components and the x-doc pass: src/http/openapi.ts (docs/api.md).
  await app.register(swagger, swaggerOptions());
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.get('/healthz', { schema: PUBLIC_DOCS.healthz }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: PUBLIC_DOCS.readyz }, async (_request, reply) => {
    // An api process runs no carrier: ready when its database answers. A connection another process holds is not this one's to report.
    const held = core.role === 'api' ? [] : [...core.carriers.values()].filter((c) => core.dispatcher.holds(c.name));
    const carriers = Object.fromEntries(held.map((c) => [c.name, c.ready()]));
    try {
      await sql`select 1`.execute(core.db.kysely);
    } catch {
      return reply.status(503).send({ status: 'database unreachable', carriers });
    }
    // Reads may work while writes do not (a full disk): nothing could be accepted.
    const writeError = await core.beacon.writeError();
    if (writeError !== null) {
      return reply.status(503).send({ status: storageFault(writeError) === 'full' ? 'database disk full' : 'database takes no writes', carriers });
    }
    const ready = Object.values(carriers).every(Boolean);
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'carrier not ready', carriers });
  });
  app.get('/openapi.json', { schema: PUBLIC_DOCS.openapi }, async () => app.swagger());
  // Prometheus (docs/metrics.md): operator token, like /admin.
  metricsRoute(app, { metrics: core.metrics, adminToken: options.adminToken });

  // GATEWAY_ROLE=dispatch (docs/operations.md, "Running several processes"): health, metrics and the callbacks of the
  // carriers it runs (RBM events) only; no public or operator API.
  if (core.role === 'dispatch') {
    await app.register(rbmEventRoute, { core });
    app.addHook('onClose', () => mediaStorage.close());
    return app;
  }
  // The browser panel (docs/panel.md): its API and sessions first, since the other interfaces take its session cookie.
  const sessions = new PanelSessions(core, options.adminToken);
  await app.register(panelApiPlugin, { prefix: '/panel/api', core, sessions });
  await app.register(panelStatic, { prefix: '/panel', ...(options.panelDir ? { dir: options.panelDir } : {}) });
  await app.register(adminPlugin, { prefix: '/admin', core, adminToken: options.adminToken, sessions });
  await app.register(legacyPlugin, { prefix: '/api/v2', core, sessions });
  // Public (no API key), so outside the gateway plugin and its key check.
  await app.register(shortLinkRedirect, { core });
  // An api process runs no carrier: the RBM event endpoint is a dispatch process's.
  await app.register(rcsPublicRoutes, { core, mediaStorage, events: core.role !== 'api' });
  await app.register(gatewayPlugin, { core, mediaStorage, sessions });
  app.addHook('onClose', () => mediaStorage.close());
  return app;
}
