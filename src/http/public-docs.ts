import { Type } from '@sinclair/typebox';
import { FILE_TYPES } from '../rcs/media.ts';
import { OPERATOR_COMMON } from './admin/docs.ts';
import { type DocumentedSchema, type MediaDoc, RETRY_AFTER, component, json, operation, plainError, security } from './openapi.ts';

/**
 * Documentation of the routes outside the three interfaces (src/http/openapi.ts
 * explains `x-doc`): health, readiness, the document itself, /metrics,
 * RCS media, the RBM event webhook and the short link redirect. None has a
 * `response` schema: their answers are documented here only.
 */

const Readiness = component(
  'Readiness',
  Type.Object({
    status: Type.String({ description: 'ready, database unreachable, or carrier not ready' }),
    carriers: Type.Record(Type.String(), Type.Boolean(), { description: 'Each carrier connection: whether it takes messages now' }),
  }),
);

const OPERATIONS = ['Operations'];
const withParameters = (doc: DocumentedSchema, parameters: Record<string, unknown>[]): DocumentedSchema => ({
  ...doc,
  'x-doc': { ...doc['x-doc'], parameters },
});
const text = (example: string): Record<string, MediaDoc> => ({ 'text/plain': { schema: { type: 'string' }, example } });

export const PUBLIC_DOCS = {
  healthz: operation(
    {
      operationId: 'health',
      summary: 'Liveness: the process answers',
      description: 'Answers 200 as long as the process serves HTTP; it checks nothing else (see /readyz). For load balancers and supervisors.',
      tags: OPERATIONS,
      security: security.none,
    },
    {
      200: {
        description: 'The process is up.',
        content: json({ schema: { type: 'object', properties: { status: { type: 'string' } } }, example: { status: 'ok' } }),
      },
    },
  ),
  readyz: operation(
    {
      operationId: 'readiness',
      summary: 'Readiness: the database answers and takes writes, and every carrier connection is up',
      description:
        "Answers 200 when the database answers a query, took this process's last write (a full disk shows within a quarter of `DISPATCH_LEASE_MS`), and every carrier connection this process holds takes messages; 503 otherwise, saying which.",
      tags: OPERATIONS,
      security: security.none,
    },
    {
      200: { description: 'Ready.', content: json({ schema: Readiness, example: { status: 'ready', carriers: { simulator: true, claro: true } } }) },
      503: {
        description:
          'Not ready: the database is unreachable (`database unreachable`), its disk is full (`database disk full`) or it takes no writes for another reason (`database takes no writes`), or a carrier connection is down (`carrier not ready`: its bind is not up).',
        content: json({ schema: Readiness, example: { status: 'carrier not ready', carriers: { simulator: true, claro: false } } }),
      },
    },
  ),
  openapi: operation(
    {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description: 'The OpenAPI 3.0 document of every interface, as JSON; /docs renders it (Swagger UI).',
      tags: OPERATIONS,
      security: security.none,
    },
    { 200: { description: 'The document.', content: json({ schema: { type: 'object' } }) } },
  ),
  metrics: operation(
    {
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      description: `HTTP answers, messages accepted and sent, carrier submits and receipts, the outbox and the process, in the Prometheus
text format (docs/metrics.md). Behind the operator token, like the operator API: the figures are operator data.`,
      tags: OPERATIONS,
      security: security.operator,
    },
    {
      200: {
        description: 'The metrics (`text/plain; version=0.0.4`).',
        content: text(
          '# HELP gateway_messages_accepted_total Messages accepted, by channel.\n# TYPE gateway_messages_accepted_total counter\ngateway_messages_accepted_total{channel="SMS"} 1542\n',
        ),
      },
      401: OPERATOR_COMMON[401] as NonNullable<(typeof OPERATOR_COMMON)[string]>,
    },
  ),
  media: operation(
    {
      operationId: 'getMedia',
      summary: 'An RCS media file',
      description: `The images and files of RCS messages, as stored when the send was accepted, for the carrier and the handsets to
fetch. Names are the SHA-256 of the content with the type's extension; the type comes from the extension. Cached for a year
(the content of a name never changes).`,
      tags: ['Media'],
      security: security.none,
    },
    {
      200: {
        description: 'The file.',
        content: Object.fromEntries(Object.keys(FILE_TYPES).map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
      },
      404: { description: 'No file of this name (or not a media name).', content: text('Not found') },
      503: { description: 'The media storage (bucket) cannot be read now; retry later.', headers: RETRY_AFTER, content: text('Media storage unavailable') },
    },
  ),
  rbmEvents: withParameters(
    operation(
      {
        operationId: 'receiveRbmEvent',
        summary: 'Events of an RBM carrier connection (delivery receipts, replies)',
        description: `The webhook an RBM-style agent platform calls with the events of the connection named in the path. The body is
authenticated by \`X-Goog-Signature\` (base64 HMAC-SHA512 of the raw body with the connection's webhook secret) before it is
read. Answered 200 once the event is written; a 503 asks the platform to send it again.`,
        tags: ['Carrier webhooks'],
        security: security.none,
      },
      {
        200: {
          description: 'The event was written (or is not one the gateway uses: `handled` false).',
          content: json({ schema: { type: 'object', properties: { handled: { type: 'boolean' } } }, example: { handled: true } }),
        },
        400: plainError('The body is not a JSON object.', 'the body is not JSON'),
        401: plainError('The signature is missing or does not match the body.', 'bad or missing signature'),
        404: plainError('No RBM connection of this name.', 'no such RBM connection'),
        503: plainError('The event could not be written; the platform sends it again later.', 'the event could not be stored; send it again later'),
      },
    ),
    [
      // Not in the route schema, which would validate it: the handler checks the signature against the raw body.
      {
        in: 'header',
        name: 'X-Goog-Signature',
        required: true,
        description: "Base64 HMAC-SHA512 of the raw body with the connection's webhook secret.",
        schema: { type: 'string' },
      },
    ],
  ),
  shortLink: operation(
    {
      operationId: 'followShortLink',
      summary: 'Follow a short link (public, no API key): 302 to the destination, or a 404 HTML page',
      description: `The address a short link's receivers open. Redirects to the destination and counts the access, as human or as bot by
the User-Agent (no User-Agent counts as a bot); HEAD answers the same without counting (link previews and checkers). The
answer is never cached and sends no referrer, so every click is counted and the destination does not learn the code.`,
      tags: ['Short links'],
      security: security.none,
    },
    {
      302: {
        description: 'Redirect to the destination URL.',
        headers: {
          Location: { description: 'The destination URL.', schema: { type: 'string', format: 'uri', example: 'https://example.com/promo?utm_source=sms' } },
        },
      },
      404: {
        description: 'Unknown or deleted code: a small page in Portuguese and English.',
        content: { 'text/html': { schema: { type: 'string' }, example: '<!doctype html><html lang="pt-BR">…<h1>Link não encontrado</h1>…</html>' } },
      },
    },
  ),
};
