import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Core } from '../../core.ts';
import type { Principal } from '../../accounts/api-keys.ts';
import { DomainError } from '../../common/errors.ts';
import { bindKeys, legacyValidatorCompiler } from './binding.ts';
import { failure, legacyErrorHandler } from './envelope.ts';
import { DEFAULT_RATE_LIMIT, ReportWindow, windowLimit, type Clock, type RateLimit } from './limits.ts';
import { accountRateLimit } from '../rate-limit.ts';
import { TEXTS } from './texts.ts';
import type { LegacyContext } from './context.ts';
import { sendRoutes } from './send-routes.ts';
import { tokenRoutes } from './token-routes.ts';
import { creditRoutes } from './credit-routes.ts';
import { contactRoutes } from './contact-routes.ts';
import { ruleRoutes } from './rule-routes.ts';
import { reportRoutes } from './report-routes.ts';
import type { PanelSessions } from '../panel/sessions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Set on the routes that answer 405 for a known path. */
    methodNotAllowed?: boolean;
  }
}

export interface LegacyOptions {
  core: Core;
  /** Per-account request allowance behind 429 of an account without its own limit (default DEFAULT_RATE_LIMIT). */
  rateLimit?: RateLimit;
  /** One report call per key and report within this window (default 30 s). */
  reportWindowMs?: number;
  /** Time source of the report window (tests move it). */
  clock?: Clock;
  /** The browser panel's sessions: without an auth-key, an account user's session cookie is the credential (docs/panel.md). */
  sessions?: PanelSessions;
}

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/**
 * The Legacy v2 interface (docs/legacy.md), served at /api/v2. A thin
 * edge over the gateway's use cases: same accounts, queue, charging,
 * blocklist and reports. Answers are the `{Success, Object, Message}`
 * envelope, except a 401, which has an empty body.
 */
export async function legacyPlugin(app: FastifyInstance, opts: LegacyOptions) {
  const { core } = opts;
  const clock = opts.clock ?? Date.now;
  const t = TEXTS[core.config.LEGACY_LANGUAGE];
  const limited = await accountRateLimit(app, core, { scope: 'legacy', defaultLimit: windowLimit(opts.rateLimit ?? DEFAULT_RATE_LIMIT) });
  const ctx: LegacyContext = { core, db: core.db.kysely, t, reports: new ReportWindow(opts.reportWindowMs ?? 30_000, clock) };

  app.decorateRequest('principal', null as unknown as Principal);
  app.setValidatorCompiler(legacyValidatorCompiler);
  app.setErrorHandler(legacyErrorHandler(t));

  // Clients send JSON with whatever Content-Type they were written with (or
  // none); a form-encoded body is read as its fields. An empty body is no
  // body, whatever the Content-Type: the official client libraries send
  // `Content-Type: application/json` with nothing on DELETE and PUT calls
  // whose fields are in the query (`DELETE /blacklist?id=...`). Operations
  // that need a body still say so (the schema refuses a missing one).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    const form = (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
    if (form && !/^\s*[[{]/.test(text)) return done(null, Object.fromEntries(new URLSearchParams(text)));
    return json(request, text, done);
  });

  // Unknown path: 404; known path, other method: 405. Both before
  // authentication: they describe the endpoint, not the caller.
  const notAllowed = (request: FastifyRequest, reply: FastifyReply, allowed: string) =>
    reply
      .status(405)
      .header('Allow', allowed)
      .send(failure(t.methodNotAllowed(request.method, pathOf(request), allowed)));
  /** The 405 routes' handlers, with the methods their path allows. */
  const allowedBy = new Map<unknown, string>();
  app.setNotFoundHandler((request, reply) => {
    // A method no route is registered for (PROPFIND, LINK...) on a known path is a 405 as well.
    const path = pathOf(request);
    const routes = METHODS.map((method) => {
      try {
        return app.findRoute({ method, url: path });
      } catch {
        return null; // a path the router cannot read is no known path
      }
    }).filter((r) => r !== null);
    if (routes.length > 0)
      return notAllowed(request, reply, routes.map((r) => allowedBy.get(r.handler)).find((a) => a !== undefined) ?? [...METHODS].sort().join(', '));
    return reply.status(404).send(failure(t.pathNotFound(request.method, path)));
  });
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.config?.methodNotAllowed) return;
    const path = route.url.slice(app.prefix.length) || '/';
    const set = methodsByPath.get(path) ?? new Set<string>();
    for (const m of [route.method].flat()) set.add(m);
    methodsByPath.set(path, set);
  });

  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || request.routeOptions.config.methodNotAllowed) return;
    const header = request.headers['auth-key'];
    const key = Array.isArray(header) ? header[0] : header;
    try {
      // Without a key, an account user's panel session; a key, when given, wins.
      const fromSession = key === undefined && opts.sessions ? await opts.sessions.accountPrincipal(request) : null;
      request.principal = fromSession ?? (await core.auth.authenticate(key, request.ip));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'UNAUTHORIZED') return reply.status(401).send();
      if (err instanceof DomainError && err.code === 'FORBIDDEN') return reply.status(403).send(failure(err.message));
      throw err;
    }
    const wait = await limited(request);
    if (wait > 0)
      return reply
        .status(429)
        .header('Retry-After', String(wait))
        .send(failure(t.tooManyRequests(wait)));
  });

  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema;
    if (!schema) return;
    if (schema.body) request.body = bindKeys(request.body ?? null, schema.body);
    if (schema.querystring) request.query = bindKeys(request.query, schema.querystring);
  });

  await app.register(sendRoutes, ctx);
  await app.register(tokenRoutes, ctx);
  await app.register(creditRoutes, ctx);
  await app.register(contactRoutes, ctx);
  await app.register(ruleRoutes, ctx);
  await app.register(reportRoutes, ctx);

  for (const [path, methods] of methodsByPath) {
    const allowed = [...methods]
      .filter((m) => m !== 'HEAD')
      .sort()
      .join(', ');
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    const handler = (request: FastifyRequest, reply: FastifyReply) => notAllowed(request, reply, allowed);
    allowedBy.set(handler, allowed);
    app.route({ method: missing, url: path, config: { methodNotAllowed: true }, schema: { hide: true }, handler });
  }
}

const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? request.url;
