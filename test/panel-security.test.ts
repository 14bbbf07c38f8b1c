import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ADMIN_TOKEN, startGateway, type Customer, type TestGateway } from './helpers.ts';
import { PASSWORD, browse, nextAddress, panelUser, signIn, type Browser } from './panel-api-helpers.ts';

/*
 * The browser panel's session as a credential (docs/panel.md, "Sign-in,
 * sessions and security"): no session, no access; one account's session
 * sees and changes nothing of another's; every state change through the
 * cookie needs the session's CSRF token; an API key header still works
 * alone; the cookie cannot be forged.
 */

let gw: TestGateway;
let A: Customer;
let B: Customer;
let a: Browser;
let b: Browser;
let aKeyViaPanel: { id: number; key: string };

const CSRF_TEXT = 'Missing or wrong CSRF token: send the x-csrf-token header the session answered';

before(async () => {
  gw = await startGateway();
  A = await gw.customer({ balance: 100 });
  B = await gw.customer({ balance: 100 });
  a = await signIn(gw, (await panelUser(gw, A.accountId)).email, PASSWORD);
  b = await signIn(gw, (await panelUser(gw, B.accountId)).email, PASSWORD);
  const sent = await gw.call(A.key, 'POST', '/messages/sms/send', { receivers: [5511977771234], message: 'A-secret text', route: A.routeId, tag: 'A-tag' });
  assert.equal(sent.status, 200);
  await gw.eventually(
    async () => (await gw.call(A.key, 'GET', '/reports/messages/sent')).body.object[0]?.status,
    (s) => s === 'DELIVERED',
    "A's message delivered",
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: '5511977771234', text: 'A-secret reply' });
  await gw.eventually(
    async () => (await gw.call(A.key, 'GET', '/reports/messages/received')).body.totalRecords,
    (n) => n === 1,
    "A's reply",
  );
  const key = await browse(gw, a, 'POST', '/panel/api/keys', { csrf: true, payload: {} });
  assert.equal(key.status, 201);
  aKeyViaPanel = key.body;
});
after(() => gw.close());

/** What A has: keys (with revocation and allowed addresses), balance, messages, sessions. */
async function stateOfA() {
  const db = gw.core.db.kysely;
  return {
    keys: await db.selectFrom('api_keys').select(['id', 'revoked_at', 'allowed_ips']).where('account_id', '=', A.accountId).orderBy('id').execute(),
    balance: (await db.selectFrom('accounts').select('balance').where('id', '=', A.accountId).executeTakeFirstOrThrow()).balance,
    messages: (await db.selectFrom('messages').select(['id', 'status']).where('account_id', '=', A.accountId).orderBy('id').execute()).map(
      (m) => `${m.id}:${m.status}`,
    ),
    users: await db.selectFrom('panel_users').select(['id', 'password_hash']).orderBy('id').execute(),
    sessions: Number((await sql<{ n: number }>`select count(*) as n from panel_sessions`.execute(db)).rows[0]?.n),
    accounts: Number((await sql<{ n: number }>`select count(*) as n from accounts`.execute(db)).rows[0]?.n),
  };
}

const PANEL_ROUTES: [string, string, unknown?][] = [
  ['GET', '/panel/api/session'],
  ['DELETE', '/panel/api/session'],
  ['POST', '/panel/api/password', { current: PASSWORD, next: 'another password 1' }],
  ['GET', '/panel/api/dashboard'],
  ['GET', '/panel/api/export/sent.csv'],
  ['GET', '/panel/api/export/received.csv'],
  ['GET', '/panel/api/keys'],
  ['POST', '/panel/api/keys', {}],
  ['DELETE', '/panel/api/keys/1'],
  ['PUT', '/panel/api/keys/1/allowed-ips', { allowedIps: [] }],
];

test('without a session: every panel route but sign-in and info, and the other interfaces, answer 401 and change nothing', async () => {
  const before = await stateOfA();
  for (const [method, url, payload] of PANEL_ROUTES) {
    const res = await browse(gw, null, method as 'GET', url, { payload });
    assert.equal(res.status, 401, `${method} ${url}`);
    assert.equal(res.body.hasError, true, `${method} ${url}: the gateway envelope`);
  }
  const forged: Browser = { ...a, cookie: `gw_session=${'x'.repeat(32)}.${'y'.repeat(43)}` };
  const samples: [string, string, unknown?][] = [
    ['GET', '/balance'],
    ['GET', '/reports/messages/sent'],
    ['POST', '/messages/sms/send', { receivers: [5511977770000], message: 'x', route: A.routeId }],
    ['GET', '/api/v2/credits'],
    ['POST', '/api/v2/send', { Receivers: '11977770000', Content: 'x' }],
    ['GET', '/admin/accounts'],
    ['POST', '/admin/accounts', { name: 'x' }],
  ];
  for (const [method, url, payload] of [...samples, ...PANEL_ROUTES]) {
    assert.equal((await browse(gw, null, method as 'GET', url, { payload })).status, 401, `${method} ${url} without a cookie`);
    const withForged = await browse(gw, forged, method as 'GET', url, { payload, csrf: true });
    assert.equal(withForged.status, 401, `${method} ${url} with a forged cookie`);
  }
  // A real session id with a broken signature, and a signature over another id: refused.
  const [name, value] = a.cookie.split('=') as [string, string];
  const [id, signature] = value.split('.') as [string, string];
  const tampered = { ...a, cookie: `${name}=${id}x.${signature}` };
  assert.equal((await browse(gw, tampered, 'GET', '/panel/api/session')).status, 401);
  assert.equal((await browse(gw, tampered, 'GET', '/balance')).status, 401);
  const unsigned = { ...a, cookie: `${name}=${id}` };
  assert.equal((await browse(gw, unsigned, 'GET', '/panel/api/session')).status, 401);
  assert.deepEqual(await stateOfA(), before);
});

test("another account's session sees nothing of A and cannot change A's records (404, nothing changed)", async () => {
  const before = await stateOfA();
  // Reads: B's own (empty) view.
  const dash = await browse(gw, b, 'GET', '/panel/api/dashboard');
  assert.equal(dash.status, 200);
  assert.deepEqual(dash.body.today, {});
  assert.deepEqual(dash.body.replies, []);
  assert.ok(!JSON.stringify(dash.body).includes('A-secret'));
  for (const url of ['/panel/api/export/sent.csv', '/panel/api/export/received.csv', '/panel/api/export/sent.csv?tag=A-tag']) {
    const csv = await browse(gw, b, 'GET', url);
    assert.equal(csv.status, 200);
    assert.equal(csv.text.split('\r\n').filter(Boolean).length, 1, `${url}: the header row only`);
  }
  const keys = await browse(gw, b, 'GET', '/panel/api/keys');
  assert.deepEqual(
    keys.body.map((k: any) => k.id),
    [B.keyId],
  );
  const sent = await browse(gw, b, 'GET', '/reports/messages/sent');
  assert.equal(sent.body.totalRecords, 0);
  const received = await browse(gw, b, 'GET', '/reports/messages/received');
  assert.equal(received.body.totalRecords, 0);
  const legacyCredits = await browse(gw, b, 'GET', '/api/v2/credits');
  assert.equal(legacyCredits.status, 200);

  // Writes to A's ids: 404, nothing changes.
  for (const id of [A.keyId, aKeyViaPanel.id]) {
    const revoke = await browse(gw, b, 'DELETE', `/panel/api/keys/${id}`, { csrf: true });
    assert.equal(revoke.status, 404);
    assert.equal(revoke.body.hasError, true);
    const ips = await browse(gw, b, 'PUT', `/panel/api/keys/${id}/allowed-ips`, { csrf: true, payload: { allowedIps: ['10.0.0.0/8'] } });
    assert.equal(ips.status, 404);
  }
  const cancel = await browse(gw, b, 'POST', '/messages/request/cancel', {
    csrf: true,
    payload: { requestId: (await gw.call(A.key, 'GET', '/reports/messages/sent')).body.object[0].requestId },
  });
  assert.equal(cancel.status, 404);
  // Not an operator either.
  assert.equal((await browse(gw, b, 'GET', `/admin/accounts/${A.accountId}`)).status, 401);
  assert.equal((await browse(gw, b, 'POST', `/admin/accounts/${A.accountId}/credits`, { csrf: true, payload: { amount: 5 } })).status, 401);

  assert.deepEqual(await stateOfA(), before);
  assert.equal((await gw.call(aKeyViaPanel.key, 'GET', '/balance')).status, 200, "A's key still works");
});

test("state changes through the cookie without the CSRF token, or with a wrong one (or another session's), are refused (403) and change nothing", async () => {
  const op = await signIn(gw, 'operator', ADMIN_TOKEN);
  const before = await stateOfA();
  const wrongs: (boolean | string)[] = [false, 'not-a-token', b.csrf, ''];
  const changes: [Browser, string, string, unknown?][] = [
    [a, 'POST', '/panel/api/keys', {}],
    [a, 'DELETE', `/panel/api/keys/${aKeyViaPanel.id}`],
    [a, 'PUT', `/panel/api/keys/${aKeyViaPanel.id}/allowed-ips`, { allowedIps: ['10.0.0.0/8'] }],
    [a, 'POST', '/panel/api/password', { current: PASSWORD, next: 'another password 1' }],
    [a, 'DELETE', '/panel/api/session'],
    [a, 'POST', '/messages/sms/send', { receivers: [5511977770000], message: 'x', route: A.routeId }],
    [a, 'POST', '/api/v2/send', { Receivers: '11977770000', Content: 'x' }],
    [op, 'POST', '/admin/accounts', { name: 'Not created' }],
    [op, 'POST', `/admin/accounts/${A.accountId}/credits`, { amount: 5 }],
    [op, 'POST', `/admin/accounts/${A.accountId}/api-keys`, {}],
  ];
  for (const [browser, method, url, payload] of changes) {
    for (const csrf of wrongs) {
      const res = await browse(gw, browser, method as 'POST', url, { payload, ...(csrf === false ? {} : { csrf }) });
      assert.equal(res.status, 403, `${method} ${url} with CSRF ${JSON.stringify(csrf)}: ${res.text}`);
      if (url.startsWith('/api/v2/')) assert.equal(res.body.Success, false);
      else if (url.startsWith('/admin/')) assert.equal(res.body.error, CSRF_TEXT);
      else assert.equal(res.body.message, CSRF_TEXT);
    }
  }
  assert.deepEqual(await stateOfA(), before);
  // Reads need no token.
  assert.equal((await browse(gw, a, 'GET', '/panel/api/keys')).status, 200);
  assert.equal((await browse(gw, a, 'GET', '/balance')).status, 200);
  // With the right token, the same change goes through.
  const ok = await browse(gw, a, 'POST', '/messages/sms/send', { csrf: true, payload: { receivers: [5511977770000], message: 'x', route: A.routeId } });
  assert.equal(ok.status, 200);
  const legacy = await browse(gw, a, 'POST', '/api/v2/send', { csrf: true, payload: { Receivers: '11977770000', Content: 'x' } });
  assert.equal(legacy.status, 200, legacy.text);
});

test('a key header wins over the cookie and needs no CSRF token; a wrong key is not rescued by a good cookie', async () => {
  const withKey = await browse(gw, b, 'POST', '/messages/sms/send', {
    headers: { 'x-api-key': A.key },
    payload: { receivers: [5511977775555], message: 'by key', route: A.routeId },
  });
  assert.equal(withKey.status, 200, 'the key decides the account, no CSRF needed');
  const mine = await gw.call(A.key, 'GET', '/reports/messages/sent?receiver=5511977775555');
  assert.equal(mine.body.totalRecords, 1, "sent as A (the key's account), not as B (the cookie's)");
  const noKeyNoCsrf = await gw.app.inject({
    method: 'POST',
    url: '/messages/sms/send',
    headers: { 'x-api-key': B.key },
    payload: { receivers: [5511977775556], message: 'x', route: B.routeId },
  });
  assert.equal(noKeyNoCsrf.statusCode, 200);
  const legacy = await browse(gw, b, 'GET', '/api/v2/credits', { headers: { 'auth-key': A.key } });
  assert.equal(legacy.status, 200);
  const wrongKey = await browse(gw, a, 'GET', '/balance', { headers: { 'x-api-key': 'not-a-key' } });
  assert.equal(wrongKey.status, 401);
  const wrongLegacy = await browse(gw, a, 'GET', '/api/v2/credits', { headers: { 'auth-key': 'not-a-key' } });
  assert.equal(wrongLegacy.status, 401);
  const wrongBearer = await browse(gw, await signIn(gw, 'operator', ADMIN_TOKEN), 'GET', '/admin/accounts', {
    headers: { authorization: 'Bearer wrong-token' },
  });
  assert.equal(wrongBearer.status, 401);
  const bearer = await gw.app.inject({
    method: 'POST',
    url: '/admin/accounts',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { name: 'By token' },
  });
  assert.equal(bearer.statusCode, 201, 'the operator token needs no CSRF');
});

test('sessions: a new id at every sign-in, stored only hashed, refused after expiry; a deactivated account is refused', async () => {
  const user = await panelUser(gw, A.accountId);
  const first = await signIn(gw, user.email, PASSWORD);
  // Signing in again from a browser that has a cookie gives a new session id; the old cookie is not promoted.
  const res = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: user.email, password: PASSWORD },
    headers: { cookie: first.cookie },
    remoteAddress: nextAddress(),
  });
  const second = String(res.headers['set-cookie']).split(';')[0] as string;
  assert.notEqual(second, first.cookie);
  assert.equal((await browse(gw, first, 'GET', '/panel/api/session')).status, 401, 'the old session is gone');
  // The database holds no session id, only hashes.
  const id = (second.split('=')[1] as string).split('.')[0] as string;
  const rows = await gw.core.db.kysely.selectFrom('panel_sessions').select(['id_hash', 'csrf_secret']).execute();
  assert.ok(rows.every((r) => r.id_hash !== id && r.id_hash.length === 64));
  // Expired (moved in the database: no sleeping): refused everywhere.
  const browser = { ...first, cookie: second };
  await gw.core.db.kysely
    .updateTable('panel_sessions')
    .set({ last_seen_at: Date.now() - 3 * 3600_000 })
    .execute();
  assert.equal((await browse(gw, browser, 'GET', '/panel/api/session')).status, 401);
  assert.equal((await browse(gw, browser, 'GET', '/balance')).status, 401);
  // All sessions above are gone now: sign A and B in again for the other tests.
  a = await signIn(gw, (await panelUser(gw, A.accountId)).email, PASSWORD);
  b = await signIn(gw, (await panelUser(gw, B.accountId)).email, PASSWORD);

  const c = await gw.customer();
  const cUser = await panelUser(gw, c.accountId);
  const cBrowser = await signIn(gw, cUser.email, PASSWORD);
  assert.equal((await gw.admin('POST', `/admin/accounts/${c.accountId}/deactivate`)).status, 200);
  assert.equal((await browse(gw, cBrowser, 'GET', '/panel/api/dashboard')).status, 401);
  assert.equal((await browse(gw, cBrowser, 'GET', '/balance')).status, 401);
  const refused = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: cUser.email, password: PASSWORD },
    remoteAddress: nextAddress(),
  });
  assert.equal(refused.statusCode, 403);
  assert.equal(refused.headers['set-cookie'] === undefined || String(refused.headers['set-cookie']).includes('gw_session=;'), true);
});
