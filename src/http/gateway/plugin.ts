import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import type { Principal } from '../../accounts/api-keys.ts';
import { failure, gatewayErrorHandler } from './envelope.ts';
import { smsRoutes } from './sms.ts';
import { reportRoutes } from './reports.ts';
import { accountRoutes } from './account.ts';
import { tokenRoutes } from './tokens.ts';
import { webhookRoutes } from './webhooks.ts';
import { childUserRoutes } from './child-users.ts';
import { shortLinkRoutes } from './short-links.ts';
import { rcsRoutes } from './rcs.ts';
import type { MediaStorage } from '../../rcs/storage.ts';
import { DomainError } from '../../common/errors.ts';
import { accountRateLimit } from '../rate-limit.ts';
import type { PanelSessions } from '../panel/sessions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/**
 * The Gateway interface (sends, reports, contacts, routes, balance, tokens,
 * child users, short links, webhooks), served at the server root. Every
 * route in this plugin needs an API key; public routes (health, docs, short
 * link redirects) are registered outside it.
 */
export async function gatewayPlugin(app: FastifyInstance, opts: { core: Core; mediaStorage: MediaStorage; sessions?: PanelSessions }) {
  const { core, mediaStorage } = opts;
  app.decorateRequest('principal', null as unknown as Principal);
  app.setErrorHandler(gatewayErrorHandler);
  app.setNotFoundHandler((request, reply) => {
    const text = `No operation ${request.method} ${request.url.split('?')[0]}; see /docs.`;
    return reply.status(404).send(failure(text, [text]));
  });
  // Per account, after authentication (docs/operations.md, "Rate limits"): RATE_LIMIT_PER_SECOND unless the operator set the account's own.
  const perSecond = core.config.RATE_LIMIT_PER_SECOND;
  const windowSeconds = core.config.RATE_LIMIT_WINDOW_SECONDS;
  const limited = await accountRateLimit(app, core, {
    scope: 'gateway',
    defaultLimit: perSecond > 0 ? { max: perSecond * windowSeconds, windowMs: windowSeconds * 1000 } : null,
  });
  app.addHook('onRequest', async (request) => {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    // Without a key, an account user's panel session (docs/panel.md); a key, when given, wins.
    const fromSession = key === undefined && opts.sessions ? await opts.sessions.accountPrincipal(request) : null;
    request.principal = fromSession ?? (await core.auth.authenticate(key, request.ip));
    const wait = await limited(request);
    if (wait > 0) {
      const error = new DomainError(
        'RATE_LIMITED',
        `Too many requests for this account: retry after ${wait} second(s) (Retry-After), and spread your requests over time; the operator can raise the account's limit.`,
      );
      error.retryAfterSeconds = wait;
      throw error;
    }
  });
  await app.register(smsRoutes, { core });
  await app.register(reportRoutes, { core });
  await app.register(accountRoutes, { core });
  await app.register(tokenRoutes, { core });
  await app.register(webhookRoutes, { core });
  await app.register(childUserRoutes, { core });
  await app.register(shortLinkRoutes, { core });
  await app.register(rcsRoutes, { core, mediaStorage });
}
