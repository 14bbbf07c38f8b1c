import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

/**
 * The OpenAPI document (GET /openapi.json, rendered at /docs; docs/api.md).
 *
 * Each route declares its documentation in its own schema: operationId,
 * summary, description, tags and security (read by @fastify/swagger as
 * they are), and under `x-doc` every answer it can give, built by the
 * interface's helper (gateway/docs.ts, legacy/docs.ts, admin/docs.ts,
 * public-docs.ts).
 *
 * Why `x-doc` and not more `response` schemas: Fastify serializes an
 * answer with the route's `response` schema for its status
 * (fast-json-stringify), which drops properties the schema does not name
 * and may change the bytes a client gets. The `response` schemas the
 * routes had are kept exactly as they were (they define the success
 * bodies in the document too); everything else is documentation only:
 * response descriptions, error statuses that were not in `response`,
 * examples, response headers, and the bodies of routes that never had a
 * response schema (operator API, public routes). @fastify/swagger copies
 * `x-*` keys of a route schema into its operation untouched, and
 * `finishDocument` (the plugin's `transformObject`) turns them into the
 * operation's `responses` before the document is served.
 */

/** Security scheme names: one per interface. */
export const GATEWAY_KEY = 'gatewayApiKey';
export const LEGACY_KEY = 'legacyAuthKey';
export const OPERATOR_TOKEN = 'operatorToken';
/** The browser panel's session cookie (docs/panel.md). */
export const PANEL_SESSION = 'panelSession';

export type Security = { [scheme: string]: string[] }[];
export const security = {
  gateway: [{ [GATEWAY_KEY]: [] }] as Security,
  legacy: [{ [LEGACY_KEY]: [] }] as Security,
  operator: [{ [OPERATOR_TOKEN]: [] }] as Security,
  panel: [{ [PANEL_SESSION]: [] }] as Security,
  /** No authentication: health, the document itself, short link redirects, media. */
  none: [] as Security,
};

/** A schema in the document: a reference to a component, or an inline OpenAPI schema. */
export type DocSchema = { $ref: string } | Record<string, unknown>;

export interface MediaDoc {
  /** Absent: the route's own `response` schema for that status (what Fastify serializes with). */
  schema?: DocSchema;
  example?: unknown;
}

export interface HeaderDoc {
  description: string;
  schema: Record<string, unknown>;
}

export interface ResponseDoc {
  description: string;
  headers?: Record<string, HeaderDoc>;
  /** By media type; absent: no body. */
  content?: Record<string, MediaDoc>;
}

/** What a route schema carries under `x-doc`. */
export interface OperationDoc {
  /** Every status the operation answers. */
  responses: Record<string, ResponseDoc>;
  /** Example of the request body (shown and sent by "Try it out"). */
  requestExample?: unknown;
  /** Parameters the route reads without a schema for them (OpenAPI Parameter Objects). */
  parameters?: Record<string, unknown>[];
}

/** The documentation fields of a route schema; spread into `schema`. */
export interface DocumentedSchema {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Security;
  'x-doc': OperationDoc;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Documentation only (see src/http/openapi.ts): never used to validate or serialize. */
    'x-doc'?: OperationDoc;
  }
}

/**
 * Named schemas of the document (`components.schemas`). Filled when the
 * modules that define them are loaded; read by @fastify/swagger when it
 * first builds the document (it converts them to OpenAPI 3.0 as it does
 * route schemas: `type: 'null'` unions become `nullable`).
 */
const COMPONENT_SCHEMAS: Record<string, TSchema> = {};

/** Registers a schema as a named component once and answers a reference to it. */
export function component(name: string, schema: TSchema): { $ref: string } {
  const known = COMPONENT_SCHEMAS[name];
  if (known !== undefined && known !== schema) throw new Error(`two OpenAPI components named ${name}`);
  COMPONENT_SCHEMAS[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/** The `Retry-After` answer header. */
export const RETRY_AFTER: Record<string, HeaderDoc> = {
  'Retry-After': { description: 'Seconds to wait before sending the request again.', schema: { type: 'integer', minimum: 0, example: 30 } },
};

/** The `X-Request-Id` answer header of the sends. */
export const REQUEST_ID_HEADER: Record<string, HeaderDoc> = {
  'X-Request-Id': {
    description: 'Id of the request (UUID): the reports show it, and cancellation takes it.',
    schema: { type: 'string', format: 'uuid', example: '01a204da-7993-7576-be8d-fdf9450e1c0e' },
  },
};

/** A JSON body: the response's media for `application/json`. */
export const json = (media: MediaDoc): Record<string, MediaDoc> => ({ 'application/json': media });

/** The documentation fields of a route schema from its parts (the interfaces' helpers build the responses). */
export function operation(
  head: { operationId: string; summary: string; description: string; tags: string[]; security: Security },
  responses: Record<string, ResponseDoc>,
  requestExample?: unknown,
): DocumentedSchema {
  return { ...head, 'x-doc': { responses, ...(requestExample === undefined ? {} : { requestExample }) } };
}

/** `{ "error": "text" }`: the errors of the operator API, /metrics and the RBM event endpoint. */
const PlainError = component(
  'PlainError',
  Type.Object(
    { error: Type.String({ description: 'What went wrong, for a person.' }) },
    { description: 'Error of the operator API, /metrics and the carrier webhooks.' },
  ),
);

/** An error response in the `{ error }` form. */
export const plainError = (description: string, error: string, headers?: Record<string, HeaderDoc>): ResponseDoc => ({
  description,
  ...(headers ? { headers } : {}),
  content: json({ schema: PlainError, example: { error } }),
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, unknown>;

/**
 * The plugin's transformObject: each operation's `x-doc` becomes its
 * `responses` (a status the route's `response` schema has keeps that
 * schema; the description, headers and example come from `x-doc`), and its
 * request example goes on the request body. Statuses that `response` lists
 * only because an interface shares one list of error schemas, and that the
 * operation never answers, are left out: `x-doc` is the list of what the
 * operation answers.
 */
export function finishDocument(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      const doc = operation?.['x-doc'] as OperationDoc | undefined;
      if (!operation || !doc) continue;
      delete operation['x-doc'];
      const generated = (operation.responses ?? {}) as Record<string, { content?: Record<string, { schema?: unknown }> }>;
      const responses: Json = {};
      for (const [status, response] of Object.entries(doc.responses)) {
        const made: Json = { description: response.description };
        if (response.headers) made.headers = response.headers;
        if (response.content) {
          const content: Json = {};
          for (const [type, media] of Object.entries(response.content)) {
            const schema = media.schema ?? generated[status]?.content?.[type]?.schema;
            content[type] = { ...(schema === undefined ? {} : { schema }), ...(media.example === undefined ? {} : { example: media.example }) };
          }
          made.content = content;
        }
        responses[status] = made;
      }
      operation.responses = responses;
      if (doc.parameters) operation.parameters = [...((operation.parameters as unknown[] | undefined) ?? []), ...doc.parameters];
      const body = operation.requestBody as { content?: Record<string, Json> } | undefined;
      if (doc.requestExample !== undefined && body?.content) {
        for (const media of Object.values(body.content)) media.example = doc.requestExample;
      }
    }
  }
  // A tree of its own: routes share pieces (tags, security, envelopes, examples), which the YAML form (/docs/yaml) would write as anchors.
  const tree = JSON.parse(JSON.stringify(document)) as Json;
  singleAnyOf(tree.paths);
  singleAnyOf(tree.components);
  return tree;
}

/**
 * An `anyOf` of one schema is that schema: the paging parameters are
 * written so for their one-line error text (gateway/paging.ts). The
 * document says it plainly (same meaning) where no keyword would clash.
 */
function singleAnyOf(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) singleAnyOf(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  for (const value of Object.values(schema)) singleAnyOf(value);
  const only = Array.isArray(schema.anyOf) && schema.anyOf.length === 1 ? (schema.anyOf[0] as unknown) : undefined;
  if (only === null || typeof only !== 'object' || Array.isArray(only)) return;
  if (Object.keys(only).some((key) => key in schema && key !== 'anyOf')) return;
  delete schema.anyOf;
  Object.assign(schema, only);
}

const INFO_DESCRIPTION = `A self-hostable SMS and RCS messaging gateway. One process serves three HTTP interfaces,
each with its own authentication and answer envelope, and a few public routes.

| interface | paths | authentication | answers |
|---|---|---|---|
| Gateway | \`/messages/…\`, \`/reports/…\`, \`/contacts\`, \`/routes\`, \`/balance\`, \`/api-tokens/…\`, \`/webhooks\`, \`/child-users\`, \`/short-links\` | header \`x-api-key: <API key>\` | \`{hasError, message, totalRecords, errors, object}\` |
| Legacy v2 | \`/api/v2/…\` | header \`auth-key: <API key>\` (the same keys) | \`{Success, Object, Message}\`; a 401 has an empty body |
| Operator API | \`/admin/…\`, \`/metrics\` | header \`Authorization: Bearer <operator token>\` | plain JSON; errors \`{error}\` |
| Browser panel | \`/panel/api/…\` | cookie \`gw_session\` (sign in with \`POST /panel/api/session\`), and \`x-csrf-token\` on state changes | plain JSON; errors in the Gateway envelope |
| Public | \`/healthz\`, \`/readyz\`, \`/openapi.json\`, \`/s/{code}\`, \`/media/{name}\`, \`/rbm/events/{connector}\` | none | see each operation |

### Gateway interface
Every answer is the envelope \`{"hasError": bool, "message": text|null, "totalRecords": n, "errors": [text], "object": …}\`.
On success \`hasError\` is false and \`object\` holds the result; on an error \`hasError\` is true, \`object\` is null and
\`errors\` lists every problem (at most 20, then one "... and N more problems" line).

| status | meaning |
|---|---|
| 200 | done; \`object\` is the result |
| 400 | a field is missing or invalid (every problem listed), the body is not JSON or is empty, insufficient balance, nothing left to cancel |
| 401 | \`x-api-key\` missing, unknown or revoked, the calling address outside the key's allow-list, or the account deactivated |
| 403 | the operation is for RESELLER keys only |
| 404 | the record named (route, contact group, request, webhook, short link, child user) does not exist or belongs to another account; also an unknown path |
| 413 | the body is over the size limit (\`BODY_LIMIT_BYTES\`, 1 MiB by default; batch sends 10 times that) |
| 414, 431 | the URL or the headers are over 16 KiB |
| 415 | the \`Content-Type\` is not \`application/json\` |
| 429 | too many tokens for a phone, or the account's budget of wrong token guesses is spent (\`Retry-After\`) |
| 503 | the database cannot store or read right now (disk full, unreachable) or the media storage is down: nothing was done, nothing charged; retry after \`Retry-After\` |
| 500 | a fault of the gateway; the text carries the request id to quote to the operator |

### Legacy v2 interface
The interface of the official client libraries, at \`/api/v2/\`. Every answer but a 401 is the envelope
\`{"Success": bool, "Object": …, "Message": "text"}\` (keys in that casing); \`Object\` is null on errors. Texts are
Brazilian Portuguese by default (English with \`LEGACY_LANGUAGE=en\`); statuses and fields never depend on the language.
Field names are case-insensitive, bodies are read as JSON whatever the \`Content-Type\` (a form-encoded body as its
fields), and values are loose (\`"ExpireInMinutes": "10"\` is accepted).

| status | meaning |
|---|---|
| 200 | done (\`Success\` true) |
| 202 | a report called again inside its 30-second window (\`Success\` false, \`Retry-After\`) |
| 400 | a problem with the request: missing or invalid field, no body, invalid JSON, insufficient credits, nothing to cancel, a body or URL too large |
| 401 | \`auth-key\` missing, wrong or revoked, an address outside the key's allow-list, or the account deactivated: **empty body** |
| 403 | a reseller-only operation called with a customer key |
| 404 | unknown operation path, or the record named does not exist |
| 405 | known path, other method; \`Allow\` lists the methods the path takes |
| 429 | more than the key's allowance (100 requests at once, refilled 20 per second), or the account's budget of wrong token guesses is spent (\`Retry-After\`) |
| 503 | the database is busy or unreachable: nothing was done; retry after \`Retry-After\` |
| 500 | only for a fault of the gateway (the text carries the request id) |

### Operator API
For the operator of the installation: accounts, API keys, credits, routes, carriers, callbacks. The token is
\`GATEWAY_ADMIN_TOKEN\` (or the one generated in the data directory). Errors are \`{"error": "text"}\`: 400 invalid
request, 401 no or wrong token, 404 unknown record, 409 duplicate, 413 body too large, 415 unsupported
\`Content-Type\`, 503 database unavailable (\`Retry-After\`).`;

/** Tags, grouped by interface (x-tagGroups: Redoc's sidebar; Swagger UI lists the tags in this order). */
const TAG_GROUPS: { name: string; tags: [string, string][] }[] = [
  {
    name: 'Gateway interface',
    tags: [
      ['SMS', 'Send SMS to numbers and contact groups, now or scheduled.'],
      ['RCS', 'Send RCS text, files, rich cards and carousels (docs/rcs.md).'],
      ['Reports', 'Messages sent, replies received, requests; cancel a request.'],
      ['Contacts', 'Contact groups of the account.'],
      ['Routes', 'Routes (products and prices) the account may send through.'],
      ['Balance', 'The balance of the account.'],
      ['Tokens', 'One-time codes sent by SMS, and their validation.'],
      ['Webhooks', 'Status and reply events pushed to your URL, signed (docs/webhooks.md).'],
      ['Child users', 'Customer accounts under a reseller: RESELLER keys only.'],
      ['Short links', 'Short links with click counters; the redirect `/s/{code}` is public.'],
    ],
  },
  {
    name: 'Legacy v2 interface',
    tags: [
      ['Legacy v2: sending', 'Sends, scheduled sends and cancellation (`/api/v2/`).'],
      ['Legacy v2: tokens', 'Verification codes sent by SMS (`/api/v2/tokenmanager`).'],
      ['Legacy v2: credits', 'Balance, transfers to sub-accounts, balance history.'],
      ['Legacy v2: contact groups', 'Contact groups and their numbers (`/api/v2/contactgroup`).'],
      ['Legacy v2: blocklist', 'Numbers no send reaches (`/api/v2/blacklist`).'],
      ['Legacy v2: context rules', 'Automatic-reply rules used by the context sends (`/api/v2/sendingcontextrules`).'],
      ['Legacy v2: reports', 'Reports, each callable once per 30 seconds per key (GET with query, or POST with a body).'],
    ],
  },
  {
    name: 'Operator API',
    tags: [
      ['Operator: accounts', 'Accounts, their API keys, credits, routes and contact groups.'],
      ['Operator: routes', 'Routes: product, prices, channel, carrier connection.'],
      ['Operator: carriers', 'Carrier connections and the built-in simulator.'],
      ['Operator: events', 'Legacy v2 callbacks and opt-out keywords of an account.'],
      ['Operator: panel users', 'Who signs in to the browser panel: users of an account, operator users (docs/panel.md).'],
    ],
  },
  {
    name: 'Browser panel',
    tags: [['Panel', 'The browser panel at /panel/: sign-in (session cookie), dashboard, CSV exports, API keys (docs/panel.md).']],
  },
  {
    name: 'Operations and public routes',
    tags: [
      ['Operations', 'Health, readiness, this document (public) and Prometheus metrics (operator token).'],
      ['Media', 'RCS media files carriers and handsets fetch.'],
      ['Carrier webhooks', 'Events pushed by carrier platforms (RBM).'],
    ],
  },
];

/** Options of @fastify/swagger: the document's head, its components, and `finishDocument`. */
export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Messaging gateway', version: '1.0.0', description: INFO_DESCRIPTION },
      // Relative: "Try it out" calls the gateway that serves the document.
      servers: [{ url: '/', description: 'This gateway' }],
      tags: TAG_GROUPS.flatMap((g) => g.tags.map(([name, description]) => ({ name, description }))),
      'x-tagGroups': TAG_GROUPS.map((g) => ({ name: g.name, tags: g.tags.map(([name]) => name) })),
      components: {
        securitySchemes: {
          [GATEWAY_KEY]: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'Gateway interface: the API key of an account (issued by the operator, or by a reseller for its child users).',
          },
          [LEGACY_KEY]: {
            type: 'apiKey',
            in: 'header',
            name: 'auth-key',
            description: 'Legacy v2 interface: the same API keys as `x-api-key`, in the header the legacy clients send.',
          },
          [OPERATOR_TOKEN]: {
            type: 'http',
            scheme: 'bearer',
            description: 'Operator API and /metrics: `Authorization: Bearer <GATEWAY_ADMIN_TOKEN>`.',
          },
          [PANEL_SESSION]: {
            type: 'apiKey',
            in: 'cookie',
            name: 'gw_session',
            description:
              'Browser panel: the session cookie `POST /panel/api/session` sets; state changes also need the `x-csrf-token` header. Also accepted, without a key header, by the Gateway and Legacy v2 interfaces (account users) and the operator API (operators).',
          },
        },
        // The live registry: @fastify/swagger copies it when it first builds the document, after every route module is loaded.
        schemas: COMPONENT_SCHEMAS as never,
      },
    } as FastifyDynamicSwaggerOptions['openapi'],
    transformObject: (documents) => finishDocument((documents as { openapiObject: Json }).openapiObject) as never,
  };
}
