import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import helmet from '@fastify/helmet';
import type { Core } from '../../core.ts';
import { DomainError, forbidden, unauthorized } from '../../common/errors.ts';
import { failure, gatewayErrorHandler } from '../gateway/envelope.ts';
import { Nullable } from '../gateway/schemas.ts';
import { operatorTokenCheck } from '../operator-token.ts';
import { STATUSES } from '../../messaging/reports.ts';
import { signIn, changePassword, prepareSignIn, WRONG_CREDENTIALS } from '../../panel/sign-in.ts';
import { sessionIdHash } from '../../panel/sessions.ts';
import { dashboard } from '../../panel/dashboard.ts';
import { RECEIVED_COLUMNS, SENT_COLUMNS, receivedCsv, sentCsv } from '../../panel/export.ts';
import { createKey, listKeys, revokeKey, setAllowedIps } from '../../panel/keys.ts';
import { getCallbacks, setCallbacks } from '../../events/callbacks.ts';
import { CSRF_TEXT, isStateChanging, type PanelSessions, SIGNED_OUT_TEXT, type SessionView } from './sessions.ts';
import { panelDoc } from './docs.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call a panel API route: anyone, anyone signed in, or an account's user (default). */
    panelAccess?: 'public' | 'signed-in' | 'account';
  }
}

/** Sign-in attempts one address may make per minute (each process counts its own). */
export const SIGN_IN_PER_MINUTE = 30;

const VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();

const Account = Type.Object({ id: Type.Integer(), name: Type.String(), parentId: Nullable(Type.Integer()) });
const SessionBody = Type.Object({
  email: Type.String({ description: 'As signed in; `operator` for the operator token.' }),
  operator: Type.Boolean({ description: 'true: the operator console; false: an account panel.' }),
  account: Nullable(Account),
  csrfToken: Type.String({ description: 'Send it as the `x-csrf-token` header on every POST, PUT, PATCH and DELETE.' }),
});
const SignInBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { required: ['email', 'password'], additionalProperties: false },
);
const PasswordBody = Type.Object(
  { current: Type.String({ maxLength: 1024 }), next: Type.String({ maxLength: 1024 }) },
  { required: ['current', 'next'], additionalProperties: false },
);
const Counts = Type.Record(Type.String(), Type.Integer());
const DashboardBody = Type.Object({
  balance: Type.Number(),
  today: Counts,
  week: Counts,
  perDay: Type.Array(Type.Object({ day: Type.String(), status: Type.String(), count: Type.Integer() })),
  replies: Type.Array(Type.Object({ id: Type.String(), from: Type.String(), text: Type.String(), receivedAt: Type.String() })),
});
const KeyBody = Type.Object({
  id: Type.Integer(),
  prefix: Type.String({ description: 'The key masked for display (its last 4 characters).' }),
  allowedIps: Nullable(Type.Array(Type.String())),
  createdAt: Type.String(),
  revokedAt: Nullable(Type.String()),
});
const NewKeyBody = Type.Object({
  id: Type.Integer(),
  key: Type.String({ description: 'The API key: shown in this answer only.' }),
  prefix: Type.String(),
  allowedIps: Nullable(Type.Array(Type.String())),
});
const Ips = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 });
const CreateKeyBody = Type.Object({ allowedIps: Type.Optional(Ips) }, { additionalProperties: false });
const IpsBody = Type.Object({ allowedIps: Ips }, { required: ['allowedIps'], additionalProperties: false });
const KeyId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const InfoBody = Type.Object({ gatewayBaseUrl: Type.String(), legacyBaseUrl: Type.String(), version: Type.String() });

const Dates = {
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC day) or ISO 8601; default 2 days ago' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (whole UTC day, inclusive) or ISO 8601; default no end' })),
  content: Type.Optional(Type.String({ description: 'substring, case-insensitive' })),
};
const SentQuery = Type.Object({
  ...Dates,
  receiver: Type.Optional(Type.String()),
  custom: Type.Optional(Type.String()),
  tag: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
  statuses: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 100 })], { description: `comma-separated or repeated: ${STATUSES.join(', ')}` }),
  ),
});
const ReceivedQuery = Type.Object({ ...Dates, sender: Type.Optional(Type.String()) });

const SESSION_EXAMPLE = {
  email: 'ana@acme.example',
  operator: false,
  account: { id: 12, name: 'Acme', parentId: null },
  csrfToken: 'KxwE0rVb-3JzQYd6p5d8xO2lq1rW0z6bqk1A',
};

/**
 * The panel API (docs/panel.md), at /panel/api: sign-in and sessions, and
 * the account panel's own pages (dashboard, CSV exports, API keys). The
 * session plugins live in this context only; the other interfaces ask
 * `sessions` when a request has no key header.
 */
export async function panelApiPlugin(app: FastifyInstance, opts: { core: Core; sessions: PanelSessions }) {
  const { core, sessions } = opts;
  const db = core.db.kysely;
  const isOperatorToken = operatorTokenCheck(sessions.adminToken);
  await sessions.register(app);
  prepareSignIn();
  // JSON answers: nothing to load, nothing to frame. HSTS is left to whatever terminates TLS.
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
    hsts: false,
  });
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      const error = new DomainError('RATE_LIMITED', `Too many sign-in attempts from this address: retry after ${seconds} second(s).`);
      error.retryAfterSeconds = seconds;
      return error;
    },
  });
  app.setErrorHandler(gatewayErrorHandler);
  app.setNotFoundHandler((request, reply) => {
    const text = `No panel operation ${request.method} ${request.url.split('?')[0]}; see docs/panel.md.`;
    return reply.status(404).send(failure(text, [text]));
  });

  // After the session plugin's own onRequest (it reads the cookie): who may call, and CSRF on state changes.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.panelAccess ?? 'account';
    if (access === 'public' || request.is404) return;
    const view = signedIn(request);
    if (isStateChanging(request) && !(await sessions.verifyCsrf(request))) throw forbidden(CSRF_TEXT);
    if (access === 'account' && !view.principal) throw forbidden('This page belongs to an account panel; an operator session has no account.');
  });

  app.post<{ Body: Static<typeof SignInBody> }>(
    '/session',
    {
      config: { panelAccess: 'public', rateLimit: { max: SIGN_IN_PER_MINUTE, timeWindow: 60_000 } },
      schema: {
        ...panelDoc({
          operationId: 'panelSignIn',
          summary: 'Sign in',
          description: `Signs in with an e-mail and password and sets the session cookie \`gw_session\` (HttpOnly, SameSite=Strict,
Path=/; Secure over HTTPS or with \`PANEL_SECURE_COOKIE=true\`). Who signs in: a panel user of an account, a child user
(its e-mail and password), an operator user, or \`operator\` with the operator token as password. Wrong e-mail or password:
401, the same answer for an e-mail nobody has. 5 failures for one e-mail within 15 minutes lock it for 15 minutes (429,
\`Retry-After\`); each address may try ${SIGN_IN_PER_MINUTE} times a minute.`,
          security: [],
          success: { description: 'Signed in: who, and the CSRF token to send on state changes.', example: SESSION_EXAMPLE },
          errors: {
            400: { description: 'The body is not `{email, password}`.', message: "body must have required property 'password'" },
            401: { description: 'Wrong e-mail or password (or an e-mail nobody has).', message: WRONG_CREDENTIALS },
            403: { description: 'The account (or its reseller) is deactivated.', message: 'This account is deactivated.' },
            429: {
              description: 'Too many failed sign-ins for this e-mail, or too many attempts from this address: wait `Retry-After` seconds.',
              message: 'Too many failed sign-ins for this email: try again in 15 minute(s)',
            },
          },
          requestExample: { email: 'ana@acme.example', password: 'correct horse battery' },
        }),
        body: SignInBody,
        response: { 200: SessionBody },
      },
    },
    async (request, reply) => {
      const subject = await signIn(db, request.body.email, request.body.password, {
        isOperatorToken: (password) => isOperatorToken(`Bearer ${password}`),
        operatorTokenSha256: sessions.tokenSha256,
        now: Date.now(),
      });
      // A new session id at every sign-in (an id set before it is never promoted).
      await request.session.regenerate();
      if (request.protocol === 'https') request.session.options({ secure: true });
      request.session.subject = subject;
      const csrfToken = reply.generateCsrf();
      await request.session.save();
      // Read back as every later request will see it (account name, deactivation).
      const view = await sessions.load(request.session.sessionId);
      if (!view) throw unauthorized(WRONG_CREDENTIALS);
      if (view.refusal) {
        await request.session.destroy();
        reply.clearCookie('gw_session', { path: '/' });
        throw forbidden(view.refusal);
      }
      return sessionBody(view, csrfToken);
    },
  );

  app.get(
    '/session',
    {
      config: { panelAccess: 'signed-in' },
      schema: {
        ...panelDoc({
          operationId: 'panelSession',
          summary: 'The current session',
          description: 'Who is signed in, with a fresh CSRF token (any token the session answered stays valid). 401 when signed out.',
          success: { description: 'Signed in.', example: SESSION_EXAMPLE },
        }),
        response: { 200: SessionBody },
      },
    },
    async (request, reply) => sessionBody(signedIn(request), reply.generateCsrf()),
  );

  app.delete(
    '/session',
    {
      config: { panelAccess: 'signed-in' },
      schema: panelDoc({
        operationId: 'panelSignOut',
        summary: 'Sign out',
        description: 'Deletes the session on the server (every gateway process on the database refuses it from now on) and clears the cookie.',
        success: { status: 204, description: 'Signed out.' },
        errors: { 403: true },
      }),
    },
    async (request, reply) => {
      await request.session.destroy();
      reply.clearCookie('gw_session', { path: '/' });
      return reply.status(204).send();
    },
  );

  app.post<{ Body: Static<typeof PasswordBody> }>(
    '/password',
    {
      config: { panelAccess: 'signed-in' },
      schema: {
        ...panelDoc({
          operationId: 'panelChangePassword',
          summary: 'Change the password',
          description: `Changes the signed-in user's password (\`next\`: at least 10 characters) after checking \`current\`. Every other
session of the user ends; this one stays signed in. A child user changes its owner credential's password. The operator token is
not a password: it is replaced as docs/operator.md says.`,
          success: { status: 204, description: 'Changed; the other sessions of the user ended.' },
          errors: {
            400: { description: '`current` is wrong, or `next` is too short.', message: 'current: the current password is wrong' },
            403: true,
          },
          requestExample: { current: 'correct horse battery', next: 'a longer passphrase 2026' },
        }),
        body: PasswordBody,
      },
    },
    async (request, reply) => {
      const subject = request.session.subject;
      if (!subject) throw unauthorized(SIGNED_OUT_TEXT);
      await changePassword(db, subject, request.body.current, request.body.next, sessionIdHash(request.session.sessionId));
      return reply.status(204).send();
    },
  );

  app.get(
    '/dashboard',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelDashboard',
          summary: 'The account dashboard',
          description: `The balance, the account's messages by status accepted today, over the last 7 days and per day over the last
14 (UTC days; days without messages are left out of \`perDay\`), and the 10 latest replies.`,
          success: {
            description: 'The dashboard.',
            example: {
              balance: 99.5,
              today: { DELIVERED: 4, UNDELIVERED: 1 },
              week: { DELIVERED: 30, UNDELIVERED: 2 },
              perDay: [{ day: '2026-11-26', status: 'DELIVERED', count: 4 }],
              replies: [{ id: '41', from: '5511999998888', text: 'SIM', receivedAt: '2026-11-26T14:05:12.004Z' }],
            },
          },
          errors: {
            403: {
              description: 'An operator session: the dashboard belongs to an account.',
              message: 'This page belongs to an account panel; an operator session has no account.',
            },
          },
        }),
        response: { 200: DashboardBody },
      },
    },
    async (request) => core.db.report(accountOf(request), (db) => dashboard(db, accountOf(request), Date.now())),
  );

  const csvDoc = (which: 'sent' | 'received', columns: readonly string[]) =>
    panelDoc({
      operationId: which === 'sent' ? 'panelExportSent' : 'panelExportReceived',
      summary: which === 'sent' ? 'Sent messages as CSV' : 'Received replies as CSV',
      description: `Every ${which === 'sent' ? 'message' : 'reply'} the filters of GET /reports/messages/${which} match (no paging),
newest first, as CSV (RFC 4180, CRLF lines) with a header row, streamed from the database as it is read. Columns:
\`${columns.join(',')}\`. Text starting with \`=\`, \`+\`, \`-\` or \`@\` is prefixed with \`'\` so spreadsheets do not run it.`,
      success: {
        description: 'The CSV file (an attachment).',
        headers: { 'Content-Disposition': { description: `\`attachment; filename="${which}.csv"\``, schema: { type: 'string' } } },
        content: { 'text/csv': { schema: { type: 'string' }, example: `${columns.join(',')}\r\n` } },
      },
      errors: {
        400: { description: 'A filter is invalid (the problem is named).', message: 'startDate: "yesterday" is not a date (YYYY-MM-DD)' },
        403: {
          description: 'An operator session: exports belong to an account.',
          message: 'This page belongs to an account panel; an operator session has no account.',
        },
      },
    });
  const sendCsv = (reply: FastifyReply, name: string, lines: AsyncGenerator<string>) =>
    reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(lines));
  app.get<{ Querystring: Static<typeof SentQuery> }>(
    '/export/sent.csv',
    { schema: { ...csvDoc('sent', SENT_COLUMNS), querystring: SentQuery } },
    async (request, reply) => sendCsv(reply, 'sent.csv', sentCsv(core.db, accountOf(request), request.query)),
  );
  app.get<{ Querystring: Static<typeof ReceivedQuery> }>(
    '/export/received.csv',
    { schema: { ...csvDoc('received', RECEIVED_COLUMNS), querystring: ReceivedQuery } },
    async (request, reply) => sendCsv(reply, 'received.csv', receivedCsv(core.db, accountOf(request), request.query)),
  );

  const accountOnly = {
    description: 'An operator session: API keys belong to an account.',
    message: 'This page belongs to an account panel; an operator session has no account.',
  };
  const KEY_EXAMPLE = { id: 7, prefix: '****…9f3c', allowedIps: null, createdAt: '2026-11-26T14:00:00.000Z', revokedAt: null };
  app.get(
    '/keys',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelListKeys',
          summary: "The account's API keys",
          description: 'Every API key of the account, revoked ones included, oldest first: never the key itself, only its last 4 characters.',
          success: { description: 'The keys.', example: [KEY_EXAMPLE] },
          errors: { 403: accountOnly },
        }),
        response: { 200: Type.Array(KeyBody) },
      },
    },
    async (request) => listKeys(db, accountOf(request)),
  );
  app.post<{ Body: Static<typeof CreateKeyBody> }>(
    '/keys',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelCreateKey',
          summary: 'Create an API key',
          description: 'A new API key of the account, optionally limited to addresses or CIDR ranges. The key is in this answer only.',
          success: {
            status: 201,
            description: 'Created: keep the key now.',
            example: { id: 8, key: '5c1f1a44-6a55-4d0e-9d33-2f1b8b0f9f3c', prefix: '****…9f3c', allowedIps: null },
          },
          errors: {
            400: { description: 'An address is not an IP address or CIDR range.', message: 'allowedIps: "10.0.0.300" is not an IP address or CIDR range' },
            403: true,
          },
          requestExample: { allowedIps: ['203.0.113.0/24'] },
        }),
        body: CreateKeyBody,
        response: { 201: NewKeyBody },
      },
    },
    async (request, reply) => reply.status(201).send(await createKey(db, accountOf(request), request.body?.allowedIps)),
  );
  app.delete<{ Params: Static<typeof KeyId> }>(
    '/keys/:id',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelRevokeKey',
          summary: 'Revoke an API key',
          description:
            "Revokes one of the account's keys: every gateway process refuses it within a second. Another account's key id is 404 and nothing changes.",
          success: { status: 204, description: 'Revoked.' },
          errors: { 400: true, 403: true, 404: true },
        }),
        params: KeyId,
      },
    },
    async (request, reply) => {
      await revokeKey(db, accountOf(request), request.params.id);
      core.auth.invalidate();
      return reply.status(204).send();
    },
  );
  app.put<{ Params: Static<typeof KeyId>; Body: Static<typeof IpsBody> }>(
    '/keys/:id/allowed-ips',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelSetKeyAllowedIps',
          summary: "Set an API key's allowed addresses",
          description: "Replaces the addresses or CIDR ranges one of the account's live keys may be used from (`[]`: any address).",
          success: { description: 'The key as it is now.', example: { ...KEY_EXAMPLE, allowedIps: ['203.0.113.0/24'] } },
          errors: {
            400: { description: 'An address is not an IP address or CIDR range.', message: 'allowedIps: "x" is not an IP address or CIDR range' },
            403: true,
            404: true,
          },
          requestExample: { allowedIps: ['203.0.113.0/24'] },
        }),
        params: KeyId,
        body: IpsBody,
        response: { 200: KeyBody },
      },
    },
    async (request) => {
      const key = await setAllowedIps(db, accountOf(request), request.params.id, request.body.allowedIps);
      core.auth.invalidate();
      return key;
    },
  );

  // The account's Legacy v2 callback URLs (docs/webhooks.md), as the operator sets them with /admin/accounts/{id}/callbacks.
  const CallbackUrl = Nullable(Type.String({ maxLength: 2000 }));
  const CallbacksBody = Type.Object(
    {
      replyUrl: Type.Optional({ ...CallbackUrl, description: 'Where replies are POSTed in the Legacy v2 format; null or absent: off' }),
      statusUrl: Type.Optional({ ...CallbackUrl, description: 'Where status changes are POSTed in the Legacy v2 format; null or absent: off' }),
    },
    { additionalProperties: false },
  );
  const CallbacksAnswer = Type.Object({ replyUrl: Nullable(Type.String()), statusUrl: Nullable(Type.String()) });
  const CALLBACKS_EXAMPLE = { replyUrl: 'https://example.com/sms/reply', statusUrl: 'https://example.com/sms/status' };
  const callbacksOnly = {
    description: 'An operator session: callback URLs belong to an account.',
    message: 'This page belongs to an account panel; an operator session has no account.',
  };
  app.get(
    '/callbacks',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelGetCallbacks',
          summary: "The account's Legacy v2 callback URLs",
          description: 'Where replies and status changes are POSTed for Legacy v2 clients (docs/webhooks.md); null: that callback is off.',
          success: { description: 'The callback URLs.', example: CALLBACKS_EXAMPLE },
          errors: { 403: callbacksOnly },
        }),
        response: { 200: CallbacksAnswer },
      },
    },
    async (request) => getCallbacks(db, accountOf(request)),
  );
  app.put<{ Body: Static<typeof CallbacksBody> }>(
    '/callbacks',
    {
      schema: {
        ...panelDoc({
          operationId: 'panelSetCallbacks',
          summary: "Set the account's Legacy v2 callback URLs",
          description: `Replaces both URLs: an absent, null or empty one turns that callback off. Each must be http(s) on a public address,
port 80, 443, 8080 or 8443 (the same rules as webhooks); a refused URL is a 400 naming the field and nothing changes.`,
          success: { description: 'The callback URLs as they are now.', example: CALLBACKS_EXAMPLE },
          errors: {
            400: {
              description: 'A URL is refused (not http(s), a private address or port), or a field is unknown.',
              message: 'replyUrl: 127.0.0.1 is a loopback address; only public addresses may be called',
            },
            403: true,
          },
          requestExample: CALLBACKS_EXAMPLE,
        }),
        body: CallbacksBody,
        response: { 200: CallbacksAnswer },
      },
    },
    async (request) => setCallbacks(db, (url) => core.checkUrl(url), accountOf(request), request.body),
  );

  app.get(
    '/info',
    {
      config: { panelAccess: 'public' },
      schema: {
        ...panelDoc({
          operationId: 'panelInfo',
          summary: 'Base URLs for the developer page',
          description: "The Gateway and Legacy v2 interfaces' base URLs as the caller reached this gateway (its Host header), and the gateway's version.",
          security: [],
          success: {
            description: 'The base URLs.',
            example: { gatewayBaseUrl: 'http://localhost:3000', legacyBaseUrl: 'http://localhost:3000/api/v2', version: '0.1.0' },
          },
        }),
        response: { 200: InfoBody },
      },
    },
    async (request) => {
      const base = `${request.protocol}://${request.host}`;
      return { gatewayBaseUrl: base, legacyBaseUrl: `${base}/api/v2`, version: VERSION };
    },
  );
}

/** The session of a signed-in request (401 otherwise). */
function signedIn(request: FastifyRequest): SessionView {
  const view = request.session?.subject ? request.session.view : undefined;
  if (!view) throw unauthorized(SIGNED_OUT_TEXT);
  if (view.refusal) throw unauthorized(view.refusal);
  return view;
}

function accountOf(request: FastifyRequest): number {
  const principal = signedIn(request).principal;
  if (!principal) throw forbidden('This page belongs to an account panel; an operator session has no account.');
  return principal.accountId;
}

function sessionBody(view: SessionView, csrfToken: string) {
  return { email: view.email, operator: view.operator, account: view.account, csrfToken };
}
