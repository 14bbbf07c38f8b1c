import { Type } from '@sinclair/typebox';
import { type DocumentedSchema, type HeaderDoc, type ResponseDoc, REQUEST_ID_HEADER, RETRY_AFTER, component, json, security } from '../openapi.ts';
import { ErrorEnvelope, failure, ok } from './envelope.ts';

/** Documentation of the Gateway interface's operations (src/http/openapi.ts explains `x-doc`). */

/** The gateway's error envelope, once in the document (the same schema routes serialize errors with). */
export const GatewayError = component(
  'GatewayError',
  Type.Object(ErrorEnvelope.properties, {
    description: 'Gateway error envelope: `hasError` true, `object` null, `errors` lists every problem (at most 20).',
  }),
);

export type GatewayErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 503;

/** An error the operation answers: `true` for the interface's usual text, or what it means for this operation (and an example text). */
export type ErrorDoc = true | string | { description: string; message: string };

const DEFAULTS: Record<GatewayErrorStatus, { description: string; message: string; headers?: Record<string, HeaderDoc> }> = {
  400: {
    description: 'Invalid request: `errors` names every field that is missing or wrong, or the body is not JSON or is empty.',
    message: 'The body is not valid JSON.',
  },
  401: {
    description: "No valid API key: `x-api-key` missing, unknown or revoked, the calling address outside the key's allow-list, or the account deactivated.",
    message: 'The API key is invalid or has been revoked.',
  },
  403: { description: 'The operation is not allowed for this API key.', message: 'Only the API key of a RESELLER account may manage child users.' },
  404: { description: 'The record named in the request does not exist or belongs to another account.', message: 'Route 7 was not found.' },
  409: { description: 'A record with the same name already exists.', message: 'A contact group named "Clientes" already exists.' },
  413: { description: 'The body is over the size limit (`BODY_LIMIT_BYTES`, 1 MiB by default).', message: 'The body is too large.' },
  415: { description: 'The `Content-Type` is not `application/json`.', message: 'Unsupported Content-Type; send application/json.' },
  429: {
    description:
      'Too many requests from this account (its rate limit: docs/operations.md, "Rate limits"): wait `Retry-After` seconds and spread the requests over time.',
    message:
      "Too many requests for this account: retry after 1 second(s) (Retry-After), and spread your requests over time; the operator can raise the account's limit.",
    headers: RETRY_AFTER,
  },
  503: {
    description:
      "The gateway's database cannot store or read right now (disk full, unreachable): nothing was done, nothing charged. Retry after `Retry-After` seconds.",
    message: "The gateway's database is unavailable right now. Nothing was done (nothing accepted, nothing charged); send the request again later.",
    headers: RETRY_AFTER,
  },
};

/** One error response in the gateway envelope. */
function errorResponse(status: GatewayErrorStatus, doc: ErrorDoc): ResponseDoc {
  const base = DEFAULTS[status];
  const description = doc === true ? base.description : typeof doc === 'string' ? doc : doc.description;
  const message = typeof doc === 'object' ? doc.message : base.message;
  return {
    description,
    ...(base.headers ? { headers: base.headers } : {}),
    content: json({ schema: GatewayError, example: failure(message, [message]) }),
  };
}

export interface GatewayOperationDoc {
  operationId: string;
  summary: string;
  /** For a client developer: what it does, what to send, what comes back (Markdown). */
  description: string;
  tags: string[];
  /** The answer when it works: its status (default 200), what it means, an example `object` and `message`, answer headers. */
  success: {
    status?: number;
    description: string;
    object: unknown;
    message?: string | null;
    totalRecords?: number;
    headers?: Record<string, HeaderDoc>;
    /** Fields of the answer besides the envelope's (GET /balance has `o`). */
    extra?: Record<string, unknown>;
  };
  /** The errors the operation answers besides 401, 429 (the account's rate limit) and 503, which every gateway operation may answer. */
  errors: Partial<Record<GatewayErrorStatus, ErrorDoc>>;
  requestExample?: unknown;
}

/** The documentation fields of a gateway route schema (spread into `schema`). */
export function gatewayDoc(doc: GatewayOperationDoc): DocumentedSchema {
  const s = doc.success;
  const responses: Record<string, ResponseDoc> = {
    [String(s.status ?? 200)]: {
      description: s.description,
      ...(s.headers ? { headers: s.headers } : {}),
      content: json({ example: { ...ok(s.object, s.message ?? null, s.totalRecords ?? 0), ...s.extra } }),
    },
  };
  const errors: Partial<Record<GatewayErrorStatus, ErrorDoc>> = { 401: true, 429: true, 503: true, ...doc.errors };
  for (const status of Object.keys(errors).map(Number) as GatewayErrorStatus[]) {
    const e = errors[status];
    if (e !== undefined) responses[String(status)] = errorResponse(status, e);
  }
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: doc.tags,
    security: security.gateway,
    'x-doc': { responses, ...(doc.requestExample === undefined ? {} : { requestExample: doc.requestExample }) },
  };
}

/** Errors of an operation with a JSON body: invalid (400), too large (413), wrong Content-Type (415). */
export const BODY_ERRORS = { 400: true, 413: true, 415: true } as const;

/** The success answer of a send (SMS or RCS): accepted or scheduled, counted in `message`, the request id in a header. */
export const SEND_ACCEPTED = {
  description: 'Accepted (or scheduled): `message` says how many messages and credits.',
  object: null,
  message: 'Accepted 1 message(s), 1 credit(s).',
  headers: REQUEST_ID_HEADER,
};
