import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.ts';
import { RbmCarrier } from './connector.ts';
import { SIGNATURE_HEADER, signatureValid, type RbmEvent } from './wire.ts';

const Params = Type.Object({ connector: Type.String({ maxLength: 40 }) });

/**
 * POST /rbm/events/:connector: the webhook of an RBM connection. The body is
 * authenticated by its HMAC (header X-Goog-Signature, base64 HMAC-SHA512 of
 * the raw body with the connection's webhook secret) before it is parsed.
 */
export async function rbmEventRoute(app: FastifyInstance, { core }: { core: Core }) {
  // The signature covers the raw bytes: keep them (this plugin's scope only).
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post<{ Params: Static<typeof Params>; Body: Buffer }>('/rbm/events/:connector', { schema: { hide: true, params: Params } }, async (request, reply) => {
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
  });
}
