import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import type { TestGateway } from './helpers.ts';

/** A signed-in browser: its cookie (name=value) and the CSRF token the session answered. */
export interface Browser {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: any;
}

let address = 0;
/** Each sign-in from an address of its own, so the per-address throttle is tested on purpose only. */
export const nextAddress = () => {
  address += 1;
  return `10.9.${(address >> 8) & 255}.${address & 255}`;
};

export async function signIn(gw: TestGateway, email: string, password: string): Promise<Browser> {
  const res = await gw.app.inject({ method: 'POST', url: '/panel/api/session', payload: { email, password }, remoteAddress: nextAddress() });
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  assert.match(cookie, /^gw_session=/);
  const body = res.json();
  return { cookie, csrf: body.csrfToken, setCookie, body };
}

/** A request as the browser sends it: its cookie, the CSRF token only when asked. */
export async function browse(
  gw: TestGateway,
  browser: Browser | null,
  method: InjectOptions['method'],
  url: string,
  options: { payload?: unknown; csrf?: boolean | string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (browser) headers.cookie = browser.cookie;
  if (browser && options.csrf === true) headers['x-csrf-token'] = browser.csrf;
  if (typeof options.csrf === 'string') headers['x-csrf-token'] = options.csrf;
  const res = await gw.app.inject({ method, url, headers, ...(options.payload === undefined ? {} : { payload: options.payload as object }) });
  let body: any = res.body;
  try {
    body = res.body ? JSON.parse(res.body) : null;
  } catch {
    /* CSV or text */
  }
  return { status: res.statusCode, body, headers: res.headers, text: res.body };
}

export const PASSWORD = 'correct horse battery';

let counter = 0;
/** An account's panel user through the operator API. */
export async function panelUser(gw: TestGateway, accountId: number, password = PASSWORD): Promise<{ id: number; email: string }> {
  counter += 1;
  const email = `user${counter}-${Date.now().toString(36)}@acme.example`;
  const res = await gw.admin('POST', `/admin/accounts/${accountId}/panel-users`, { email, password });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** A valid child user body for POST /child-users. */
export function childBody(email: string) {
  return {
    fullName: 'Loja Ltda',
    email,
    phoneNumber: '(11) 99999-8888',
    document: '529.982.247-25',
    limit: 10,
    ownerCredentialFullName: 'Maria Silva',
    ownerCredentialEmail: 'maria@example.com.br',
    ownerCredentialPhoneNumber: '+55 21 98888-7777',
    password: 'child password 1',
  };
}
