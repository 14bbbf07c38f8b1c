import { type DocumentedSchema, type HeaderDoc, type ResponseDoc, RETRY_AFTER, json, security, type Security } from '../openapi.ts';
import { failure } from '../gateway/envelope.ts';
import { GatewayError } from '../gateway/docs.ts';
import { CSRF_TEXT, SIGNED_OUT_TEXT } from './sessions.ts';

/** Documentation of the panel API's operations (src/http/openapi.ts explains `x-doc`). */

export type PanelErrorStatus = 400 | 401 | 403 | 404 | 409 | 429 | 503;

const DEFAULTS: Record<PanelErrorStatus, { description: string; message: string; headers?: Record<string, HeaderDoc> }> = {
  400: { description: 'Invalid request: `errors` names every field that is missing or wrong.', message: 'next: must be at least 10 characters' },
  401: { description: 'Not signed in: no `gw_session` cookie, or its session has ended (signed out, expired, password changed).', message: SIGNED_OUT_TEXT },
  403: {
    description: "A state change without the session's `x-csrf-token` header (or with a wrong one); or an operator session on an account page.",
    message: CSRF_TEXT,
  },
  404: { description: 'The record named does not exist or belongs to another account; nothing changed.', message: 'API key 7 was not found.' },
  409: { description: 'A record with the same e-mail already exists.', message: 'email: is already used by another panel user or child user' },
  429: {
    description: 'Too many requests: wait `Retry-After` seconds.',
    message: 'Too many sign-in attempts from this address: retry after 60 second(s).',
    headers: RETRY_AFTER,
  },
  503: {
    description: "The gateway's database cannot store or read right now: nothing was done. Retry after `Retry-After` seconds.",
    message: "The gateway's database is unavailable right now. Nothing was done (nothing accepted, nothing charged); send the request again later.",
    headers: RETRY_AFTER,
  },
};

export type ErrorDoc = true | string | { description: string; message: string };

export interface PanelOperationDoc {
  operationId: string;
  summary: string;
  description: string;
  /** Default: the session cookie. */
  security?: Security;
  success: { status?: number; description: string; example?: unknown; headers?: Record<string, HeaderDoc>; content?: ResponseDoc['content'] };
  /** Errors besides 401 (signed-in operations) and 503. */
  errors?: Partial<Record<PanelErrorStatus, ErrorDoc>>;
  requestExample?: unknown;
}

/** The documentation fields of a panel route schema (spread into `schema`). */
export function panelDoc(doc: PanelOperationDoc): DocumentedSchema {
  const s = doc.success;
  const sec = doc.security ?? security.panel;
  const responses: Record<string, ResponseDoc> = {
    [String(s.status ?? 200)]: {
      description: s.description,
      ...(s.headers ? { headers: s.headers } : {}),
      ...(s.content ? { content: s.content } : s.example === undefined ? {} : { content: json({ example: s.example }) }),
    },
  };
  const errors: Partial<Record<PanelErrorStatus, ErrorDoc>> = { ...(sec.length ? { 401: true } : {}), 503: true, ...doc.errors };
  for (const status of Object.keys(errors).map(Number) as PanelErrorStatus[]) {
    const e = errors[status];
    if (e === undefined) continue;
    const base = DEFAULTS[status];
    const description = e === true ? base.description : typeof e === 'string' ? e : e.description;
    const message = typeof e === 'object' ? e.message : base.message;
    responses[String(status)] = {
      description,
      ...(base.headers ? { headers: base.headers } : {}),
      content: json({ schema: GatewayError, example: failure(message, [message]) }),
    };
  }
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: ['Panel'],
    security: sec,
    'x-doc': { responses, ...(doc.requestExample === undefined ? {} : { requestExample: doc.requestExample }) },
  };
}
