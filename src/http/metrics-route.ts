import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UNMATCHED, type Metrics } from '../metrics/metrics.ts';
import { operatorTokenCheck, type AdminToken } from './operator-token.ts';
import { PUBLIC_DOCS } from './public-docs.ts';

/**
 * Counts every HTTP answer of the app, with its duration. Added on the root
 * instance, so it covers every route and every not-found handler. The route
 * label is the route template (`/admin/accounts/:id`), never the URL.
 */
export function recordResponses(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.response(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * GET /metrics in the Prometheus text format, behind the operator token like
 * /admin (docs/metrics.md): the gateway may listen on every interface
 * (HOST), and carrier names and volumes are operator data.
 */
export function metricsRoute(app: FastifyInstance, options: { metrics: Metrics; adminToken: AdminToken }): void {
  const { registry } = options.metrics;
  const isOperator = operatorTokenCheck(options.adminToken);
  const operatorOnly = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!isOperator(request.headers.authorization)) {
      return reply.status(401).send({ error: 'Operator token required: Authorization: Bearer <GATEWAY_ADMIN_TOKEN>.' });
    }
  };
  app.get('/metrics', { schema: PUBLIC_DOCS.metrics, onRequest: operatorOnly }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}
