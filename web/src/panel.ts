import type { paths } from '@messaging-gateway/client';
import { ApiError, api, currentCsrfToken, errorText, ok, setCsrfToken } from './api.ts';

/** The body of a JSON answer in the generated schema. */
type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;

/** The panel's own routes (/panel/api/..., docs/panel.md), through the typed client. */
export type Session = Json<paths['/panel/api/session']['get']['responses'][200]>;
export type Dashboard = Json<paths['/panel/api/dashboard']['get']['responses'][200]>;
export type ApiKey = Json<paths['/panel/api/keys']['get']['responses'][200]>[number];
export type Info = Json<paths['/panel/api/info']['get']['responses'][200]>;

function remember(session: Session): Session {
  setCsrfToken(session.csrfToken);
  return session;
}

export const panel = {
  signIn: async (email: string, password: string) => remember(await ok(api.POST('/panel/api/session', { body: { email, password } }))),
  session: async () => remember(await ok(api.GET('/panel/api/session'))),
  signOut: () => ok(api.DELETE('/panel/api/session')),
  changePassword: (current: string, next: string) => ok(api.POST('/panel/api/password', { body: { current, next } })),
  dashboard: () => ok(api.GET('/panel/api/dashboard')),
  keys: () => ok(api.GET('/panel/api/keys')),
  createKey: (allowedIps?: string[]) => ok(api.POST('/panel/api/keys', { body: allowedIps?.length ? { allowedIps } : {} })),
  revokeKey: (id: number) => ok(api.DELETE('/panel/api/keys/{id}', { params: { path: { id } } })),
  setAllowedIps: (id: number, allowedIps: string[]) => ok(api.PUT('/panel/api/keys/{id}/allowed-ips', { params: { path: { id } }, body: { allowedIps } })),
  info: () => ok(api.GET('/panel/api/info')),
};

/** Download links of the reports (the browser sends the session cookie). */
export function exportUrl(kind: 'sent' | 'received', filters: Record<string, string>): string {
  const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''));
  return `/panel/api/export/${kind}.csv${q.size ? `?${q}` : ''}`;
}

/** A JSON call with the session, for a route the generated client does not have yet. */
export async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && currentCsrfToken()) headers['x-csrf-token'] = currentCsrfToken();
  const res = await fetch(url, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!res.ok) throw new ApiError(res.status, errorText(parsed, res.status));
  return parsed as T;
}
