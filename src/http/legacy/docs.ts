import { Type } from '@sinclair/typebox';
import { type DocumentedSchema, type ResponseDoc, RETRY_AFTER, REQUEST_ID_HEADER, component, json, operation, security } from '../openapi.ts';
import { FailureEnvelope, failure, ok } from './envelope.ts';
import { TEXTS } from './texts.ts';

/**
 * Documentation of the Legacy v2 interface's operations (src/http/openapi.ts
 * explains `x-doc`). Example texts are the interface's own, in its default
 * language (Brazilian Portuguese).
 */

export const t = TEXTS['pt-BR'];

/** The legacy failure envelope, once in the document (the same schema routes serialize failures with). */
const LegacyError = component(
  'LegacyError',
  Type.Object(FailureEnvelope.properties, {
    description: 'Legacy v2 failure envelope: `Success` false, `Object` null, `Message` says what to fix (Brazilian Portuguese by default).',
  }),
);

export type LegacyErrorStatus = 202 | 400 | 403 | 404 | 429;
export type ErrorDoc = true | string | { description: string; message: string };

const DEFAULTS: Record<LegacyErrorStatus, { description: string; message: string; retryAfter?: boolean }> = {
  202: {
    description: 'Called again inside the 30-second window of this report and key: `Success` false, nothing read; retry after `Retry-After` seconds.',
    message: t.reportWait(27),
    retryAfter: true,
  },
  400: { description: 'A problem with the request: `Message` says which field and why.', message: t.noBody },
  403: { description: 'A reseller-only operation called with a customer key.', message: t.resellerOnly },
  404: { description: 'The record named does not exist.', message: t.notFound },
  429: {
    description: "More requests than the key's allowance (100 at once, refilled 20 per second): retry after `Retry-After` seconds.",
    message: t.tooManyRequests(2),
    retryAfter: true,
  },
};

/** What every legacy operation may answer. */
const COMMON: Record<string, ResponseDoc> = {
  401: { description: "`auth-key` missing, wrong or revoked, the calling address outside the key's allow-list, or the account deactivated: **empty body**." },
  503: {
    description: 'The database is busy or unreachable: nothing was done; retry after `Retry-After` seconds.',
    headers: RETRY_AFTER,
    content: json({ schema: LegacyError, example: failure(t.unavailable) }),
  },
};

export interface LegacyOperationDoc {
  operationId: string;
  summary: string;
  /** For a client developer: what it does, what to send, what comes back (Markdown). */
  description: string;
  tags: string[];
  /** The answer when it works: what it means, an example `Object` and `Message`, and answer headers (the sends' X-Request-Id). */
  success: { description: string; object: unknown; message: string; requestId?: boolean };
  /** The errors the operation answers besides 401, 429 and 503, which every legacy operation may answer. */
  errors: Partial<Record<LegacyErrorStatus, ErrorDoc>>;
  requestExample?: unknown;
}

/** The documentation fields of a legacy route schema (spread into `schema`). */
export function legacyDoc(doc: LegacyOperationDoc): DocumentedSchema {
  const responses: Record<string, ResponseDoc> = {
    200: {
      description: doc.success.description,
      ...(doc.success.requestId ? { headers: REQUEST_ID_HEADER } : {}),
      content: json({ example: ok(doc.success.object, doc.success.message) }),
    },
  };
  const errors: Partial<Record<LegacyErrorStatus, ErrorDoc>> = { ...doc.errors, 429: doc.errors[429] ?? true };
  for (const status of Object.keys(errors).map(Number) as LegacyErrorStatus[]) {
    const e = errors[status];
    if (e === undefined) continue;
    const base = DEFAULTS[status];
    responses[String(status)] = {
      description: e === true ? base.description : typeof e === 'string' ? e : e.description,
      ...(base.retryAfter ? { headers: RETRY_AFTER } : {}),
      content: json({ schema: LegacyError, example: failure(typeof e === 'object' ? e.message : base.message) }),
    };
  }
  Object.assign(responses, COMMON);
  const documented = operation(
    { operationId: doc.operationId, summary: doc.summary, description: doc.description, tags: doc.tags, security: security.legacy },
    responses,
    doc.requestExample,
  );
  return { ...documented, 'x-doc': { ...documented['x-doc'], parameters: [AUTH_KEY_PARAMETER] } };
}

/**
 * The `auth-key` header as a parameter too: the document listed it so before
 * the security schemes, and code generated from it may pass the key that way.
 * @fastify/swagger leaves out a header its security scheme covers, so it is
 * put back here; Swagger UI sends the scheme's value when it is authorized.
 */
const AUTH_KEY_PARAMETER = {
  in: 'header',
  name: 'auth-key',
  required: false,
  description: 'The API key (the `legacyAuthKey` security scheme sends it as well).',
  schema: { type: 'string' },
};

/** The same documentation under another operationId (an operation served at two paths, or on GET and POST). */
export const alias = (doc: DocumentedSchema, operationId: string, note?: string): DocumentedSchema => ({
  ...doc,
  operationId,
  ...(note ? { description: `${doc.description}\n\n${note}` } : {}),
});
