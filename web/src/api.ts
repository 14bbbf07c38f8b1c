import { createGatewayClient } from '@messaging-gateway/client';

/**
 * The panel's one client of the gateway: the typed client generated from
 * /openapi.json (clients/typescript), with the session cookie as the
 * credential and the session's CSRF token on every write.
 */
let csrfToken = '';
export function setCsrfToken(token: string): void {
  csrfToken = token;
}
export function currentCsrfToken(): string {
  return csrfToken;
}

export const api = createGatewayClient({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use({
  onRequest({ request }) {
    if (request.method !== 'GET' && csrfToken) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401 && onSignedOut) onSignedOut();
    return response;
  },
});

let onSignedOut: (() => void) | null = null;
/** Called when an answer says the session is gone (401): the app shows the sign-in page. */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** An answer the gateway refused: its status and the message of its envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The message of any of the interfaces' error bodies: Gateway `message`, Legacy v2 `Message`, operator `error`. */
export function errorText(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    for (const k of ['message', 'Message', 'error']) if (typeof b[k] === 'string' && b[k]) return b[k] as string;
    if (Array.isArray(b.errors) && typeof b.errors[0] === 'string') return b.errors[0];
  }
  return typeof body === 'string' && body ? body : `HTTP ${status}`;
}

/** The data of an openapi-fetch answer, or an ApiError. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw new ApiError(response.status, errorText(error, response.status));
  return data as T;
}

/** A Legacy v2 answer refused in its body (`Success: false`) is an error too. */
export async function legacyOk<T extends { Success: boolean; Message: string }>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const data = await ok(call);
  if (!data.Success) throw new ApiError(200, data.Message);
  return data;
}
