import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import fastifySession from '@fastify/session';
import csrfProtection from '@fastify/csrf-protection';
import type { Core } from '../../core.ts';
import { DomainError, forbidden, unauthorized } from '../../common/errors.ts';
import { operatorTokenSha256 } from '../../common/operator-token.ts';
import type { AdminToken } from '../operator-token.ts';
import { SESSION_MAX_MS, deleteSession, loadSession, saveSession, sessionIdHash, type LoadedSession, type Subject } from '../../panel/sessions.ts';

/** The session cookie (docs/panel.md, "Sign-in, sessions and security"). */
export const SESSION_COOKIE = 'gw_session';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_TEXT = 'Missing or wrong CSRF token: send the x-csrf-token header the session answered';
export const SIGNED_OUT_TEXT = 'Sign in first: there is no panel session, or it has ended.';

declare module 'fastify' {
  interface Session {
    /** Who signed in (absent: nobody). */
    subject?: Subject;
    /** The CSRF secret (@fastify/csrf-protection keeps it under this name). */
    _csrf?: string;
    /** What the store read back with the session (not written back). */
    view?: SessionView;
  }
}

/** A live session as the routes see it. */
export type SessionView = Omit<LoadedSession, 'subject' | 'csrfSecret' | 'expiresAt'>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const isStateChanging = (request: FastifyRequest) => !SAFE_METHODS.has(request.method);

type Callback = (err?: unknown) => void;

/**
 * @fastify/session's store on our database (src/panel/sessions.ts): rows
 * found by the SHA-256 of the session id, so every process sharing the
 * database shares the sessions, and deleting a row ends a session
 * everywhere at once. A session is written only once someone signed in.
 */
class DatabaseStore {
  constructor(
    private readonly core: Core,
    private readonly tokenSha256: string,
  ) {}

  get(sessionId: string, callback: (err: unknown, session?: unknown) => void): void {
    loadSession(this.core.db.kysely, sessionIdHash(sessionId), Date.now(), this.tokenSha256).then((s) => {
      if (!s) return callback(null, null);
      const { subject, csrfSecret, expiresAt, ...view } = s;
      callback(null, { cookie: { expires: new Date(expiresAt), originalMaxAge: null }, subject, _csrf: csrfSecret, view });
    }, callback);
  }

  set(sessionId: string, session: { subject?: Subject; _csrf?: string }, callback: Callback): void {
    if (!session.subject || !session._csrf) return callback();
    const now = Date.now();
    saveSession(
      this.core.db.kysely,
      sessionIdHash(sessionId),
      { subject: session.subject, csrfSecret: session._csrf, expiresAt: now + SESSION_MAX_MS },
      now,
    ).then(() => callback(), callback);
  }

  destroy(sessionId: string, callback: Callback): void {
    deleteSession(this.core.db.kysely, sessionIdHash(sessionId)).then(() => callback(), callback);
  }
}

/**
 * The panel session as a credential: registered (cookie, session and CSRF
 * plugins) in the panel API's own context, and asked by the Gateway,
 * Legacy v2 and operator interfaces when a request carries no key header.
 */
export class PanelSessions {
  readonly tokenSha256: string;
  private instance: FastifyInstance | undefined;

  constructor(
    private readonly core: Core,
    readonly adminToken: AdminToken,
  ) {
    this.tokenSha256 = typeof adminToken === 'string' ? operatorTokenSha256(adminToken) : adminToken.sha256;
  }

  /** Registers @fastify/cookie, @fastify/session (on the database) and @fastify/csrf-protection in `app` (the panel API's context). */
  async register(app: FastifyInstance): Promise<void> {
    const row = await this.core.db.kysely.selectFrom('settings').select('value').where('name', '=', 'panel_cookie_secret').executeTakeFirstOrThrow();
    await app.register(fastifyCookie);
    await app.register(fastifySession, {
      secret: row.value,
      cookieName: SESSION_COOKIE,
      store: new DatabaseStore(this.core, this.tokenSha256) as never,
      saveUninitialized: false,
      rolling: false,
      cookie: {
        path: '/',
        httpOnly: true,
        sameSite: 'strict',
        secure: this.core.config.PANEL_SECURE_COOKIE === 'true',
        maxAge: SESSION_MAX_MS,
      },
    });
    await app.register(csrfProtection, { sessionPlugin: '@fastify/session', getToken: (request) => header(request, CSRF_HEADER) });
    this.instance = app;
  }

  /** A session as the store reads it back (null: none, or ended). */
  async load(sessionId: string): Promise<SessionView | null> {
    const s = await loadSession(this.core.db.kysely, sessionIdHash(sessionId), Date.now(), this.tokenSha256);
    if (!s) return null;
    const { subject: _subject, csrfSecret: _secret, expiresAt: _expires, ...view } = s;
    return view;
  }

  /** Whether the request's x-csrf-token matches its session's secret (@fastify/csrf-protection's check). */
  verifyCsrf(request: FastifyRequest): Promise<boolean> {
    const app = this.ready();
    return new Promise((resolve) => {
      const reply = { send: () => resolve(false) } as unknown as FastifyReply;
      app.csrfProtection(request, reply, () => resolve(true));
    });
  }

  /**
   * The session of a request outside the panel API (no key header): null
   * without a session cookie; UNAUTHORIZED for a cookie of no live session;
   * FORBIDDEN for a state change without the right CSRF token.
   */
  async fromCookie(request: FastifyRequest): Promise<SessionView | null> {
    const cookies = request.headers.cookie;
    if (!cookies?.includes(SESSION_COOKIE)) return null;
    const value = fastifyCookie.parse(cookies)[SESSION_COOKIE];
    if (!value) return null;
    const app = this.ready();
    await new Promise<void>((resolve, reject) => app.decryptSession(value, request, (err?: unknown) => (err ? reject(err) : resolve())));
    const view = request.session?.subject ? request.session.view : undefined;
    if (!view) throw unauthorized(SIGNED_OUT_TEXT);
    if (isStateChanging(request) && !(await this.verifyCsrf(request))) throw forbidden(CSRF_TEXT);
    return view;
  }

  /** The account principal of a request signed in to an account's panel (Gateway and Legacy v2 interfaces); null without a session cookie. */
  async accountPrincipal(request: FastifyRequest) {
    const view = await this.fromCookie(request);
    if (!view) return null;
    if (!view.principal) throw unauthorized('An operator session cannot act as an account: use an API key.');
    if (view.refusal) throw unauthorized(view.refusal);
    return view.principal;
  }

  /** Whether the request is signed in to the operator console (operator API); false without a session cookie. */
  async isOperator(request: FastifyRequest): Promise<boolean> {
    try {
      const view = await this.fromCookie(request);
      return view?.operator === true;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'UNAUTHORIZED') return false;
      throw err;
    }
  }

  private ready(): FastifyInstance {
    if (!this.instance) throw new Error('PanelSessions.register was not called');
    return this.instance;
  }
}

export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
