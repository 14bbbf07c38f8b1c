import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * The access log: one line per answered HTTP request, at `info`, through the
 * request's logger (so it carries `reqId`, Fastify's request id):
 *
 *   {"reqId":"…","method":"POST","route":"/messages/sms/send","status":200,"durationMs":3.2,"accountId":7,"msg":"request"}
 *
 * It names the route pattern (`/admin/accounts/:id`), never the URL: no
 * query string (where a client may put a secret), no path parameters. No
 * header is logged, so never an API key, `auth-key` or operator token. A
 * request no route matched is logged with `route: null`. `accountId` is the
 * account whose key authenticated the request (Gateway and Legacy v2
 * interfaces), absent otherwise; `operator: true` marks operator API and
 * /metrics requests that carried an Authorization header (whether or not it
 * was right: the status tells).
 */
export function accessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const principal = (request as FastifyRequest & { principal?: { accountId?: number } | null }).principal;
    const route = request.routeOptions.url ?? null;
    const entry: Record<string, unknown> = {
      method: request.method,
      route,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    if (principal && typeof principal.accountId === 'number') entry.accountId = principal.accountId;
    else if (route !== null && (route.startsWith('/admin') || route === '/metrics') && request.headers.authorization !== undefined) entry.operator = true;
    request.log.info(entry, 'request');
    done();
  });
}
