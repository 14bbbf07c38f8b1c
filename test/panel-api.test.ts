import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { ADMIN_TOKEN, startGateway, type Customer, type TestGateway } from './helpers.ts';
import { PASSWORD, browse, childBody, nextAddress, panelUser, signIn } from './panel-api-helpers.ts';
import { buildApp } from '../src/app.ts';
import { EXPORT_PAGE, sentCsv } from '../src/panel/export.ts';

/*
 * The browser panel's API (docs/panel.md): sign-in and sessions, the lock
 * after failed sign-ins, password changes, the dashboard, CSV exports, API
 * keys, the operator console's session, child users, panel users (API and
 * CLI) and the panel's files. Real cookies through app.inject; the export
 * through a listening server.
 */

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 100 });
});
after(() => gw.close());

const sessionRows = async () => Number((await sql<{ n: number }>`select count(*) as n from panel_sessions`.execute(gw.core.db.kysely)).rows[0]?.n);

test('sign in, the session, sign out: cookie flags, body, server-side deletion', async () => {
  const user = await panelUser(gw, alice.accountId);
  const browser = await signIn(gw, user.email.toUpperCase(), PASSWORD);
  assert.deepEqual(browser.body.account, { id: alice.accountId, name: 'Customer', parentId: null });
  assert.equal(browser.body.operator, false);
  assert.equal(browser.body.email, user.email);
  assert.ok(browser.csrf.length > 10);
  const flags = browser.setCookie.split(';').map((f) => f.trim().toLowerCase());
  assert.ok(flags.includes('httponly'), browser.setCookie);
  assert.ok(flags.includes('samesite=strict'), browser.setCookie);
  assert.ok(flags.includes('path=/'), browser.setCookie);
  assert.ok(!flags.includes('secure'), 'no Secure over plain HTTP by default');

  const again = await browse(gw, browser, 'GET', '/panel/api/session');
  assert.equal(again.status, 200);
  assert.equal(again.body.email, user.email);
  assert.notEqual(again.body.csrfToken, browser.csrf, 'a fresh token');
  // The fresh token is as good as the first.
  const withFresh = await browse(gw, { ...browser, csrf: again.body.csrfToken }, 'GET', '/panel/api/keys');
  assert.equal(withFresh.status, 200);

  const rows = await sessionRows();
  const out = await browse(gw, browser, 'DELETE', '/panel/api/session', { csrf: true });
  assert.equal(out.status, 204);
  assert.match(String(out.headers['set-cookie']), /gw_session=;/);
  assert.equal(await sessionRows(), rows - 1, 'deleted on the server');
  const gone = await browse(gw, browser, 'GET', '/panel/api/session');
  assert.equal(gone.status, 401);
  assert.equal(gone.body.hasError, true);
  assert.equal((await browse(gw, browser, 'GET', '/balance')).status, 401, 'the old cookie no longer works anywhere');
});

test('the cookie is Secure with PANEL_SECURE_COOKIE=true (a TLS-terminating proxy in front)', async () => {
  const secure = await startGateway({ PANEL_SECURE_COOKIE: 'true' });
  try {
    const c = await secure.customer();
    const user = await panelUser(secure, c.accountId);
    const browser = await signIn(secure, user.email, PASSWORD);
    assert.ok(
      browser.setCookie
        .split(';')
        .map((f) => f.trim().toLowerCase())
        .includes('secure'),
      browser.setCookie,
    );
    assert.equal((await browse(secure, browser, 'GET', '/panel/api/session')).status, 200);
  } finally {
    await secure.close();
  }
});

test('wrong password and unknown email: the same 401; 5 failures lock the email (429, Retry-After) until the window passes', async () => {
  const user = await panelUser(gw, alice.accountId);
  const attempt = (email: string, password: string) =>
    gw.app.inject({ method: 'POST', url: '/panel/api/session', payload: { email, password }, remoteAddress: nextAddress() });
  const wrong = await attempt(user.email, 'not the password');
  const unknown = await attempt('nobody-here@acme.example', 'not the password');
  assert.equal(wrong.statusCode, 401);
  assert.equal(unknown.statusCode, 401);
  assert.equal(wrong.body, unknown.body, 'no user enumeration');
  assert.equal(wrong.json().message, 'Email or password is wrong');
  assert.equal(wrong.headers['set-cookie'], undefined);

  for (let i = 2; i <= 5; i++) assert.equal((await attempt(user.email, `wrong ${i}`)).statusCode, 401);
  const locked = await attempt(user.email, PASSWORD);
  assert.equal(locked.statusCode, 429, 'locked even with the right password');
  const retryAfter = Number(locked.headers['retry-after']);
  assert.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
  assert.match(locked.json().message, /Too many failed sign-ins for this email/);
  // Case does not dodge the lock.
  assert.equal((await attempt(user.email.toUpperCase(), PASSWORD)).statusCode, 429);

  // An unknown email locks the same way (a lock tells nothing about who exists).
  for (let i = 1; i <= 5; i++) await attempt('ghost@acme.example', `wrong ${i}`);
  assert.equal((await attempt('ghost@acme.example', 'x')).statusCode, 429);

  // The window passes (moved in the database, no sleeping): the right password works, failures are forgotten.
  const past = Date.now() - 16 * 60_000;
  await gw.core.db.kysely.updateTable('panel_sign_in_failures').set({ locked_until: past, window_start: past }).execute();
  await signIn(gw, user.email, PASSWORD);
  const row = await gw.core.db.kysely.selectFrom('panel_sign_in_failures').selectAll().where('email_key', '=', user.email).executeTakeFirst();
  assert.equal(row, undefined);
  // Failures older than the window do not add up: 4 old ones and 1 new one lock nothing.
  await gw.core.db.kysely.insertInto('panel_sign_in_failures').values({ email_key: user.email, window_start: past, failures: 4, locked_until: null }).execute();
  assert.equal((await attempt(user.email, 'wrong again')).statusCode, 401);
  assert.equal((await attempt(user.email, PASSWORD)).statusCode, 200);
});

test('sign-ins from one address are throttled (429, Retry-After)', async () => {
  const address = '10.200.0.1';
  let last = 0;
  let retryAfter: unknown;
  for (let i = 0; i < 31; i++) {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/panel/api/session',
      payload: { email: `throttle${i}@acme.example`, password: 'whatever password' },
      remoteAddress: address,
    });
    last = res.statusCode;
    retryAfter = res.headers['retry-after'];
  }
  assert.equal(last, 429);
  assert.ok(Number(retryAfter) > 0);
  // Another address is not held back.
  const other = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: 'a@acme.example', password: 'x' },
    remoteAddress: '10.200.0.2',
  });
  assert.equal(other.statusCode, 401);
});

test('a password change ends the other sessions of the user, keeps this one; checks current and next', async () => {
  const user = await panelUser(gw, alice.accountId);
  const a = await signIn(gw, user.email, PASSWORD);
  const b = await signIn(gw, user.email, PASSWORD);
  const other = await panelUser(gw, alice.accountId);
  const c = await signIn(gw, other.email, PASSWORD);

  const wrong = await browse(gw, a, 'POST', '/panel/api/password', { csrf: true, payload: { current: 'nope', next: 'a new long password' } });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.message, /current/);
  const short = await browse(gw, a, 'POST', '/panel/api/password', { csrf: true, payload: { current: PASSWORD, next: 'short' } });
  assert.equal(short.status, 400);
  assert.match(short.body.message, /at least 10 characters/);
  assert.equal((await browse(gw, b, 'GET', '/panel/api/session')).status, 200, 'nothing changed yet');

  const noCsrf = await browse(gw, a, 'POST', '/panel/api/password', { payload: { current: PASSWORD, next: 'a new long password' } });
  assert.equal(noCsrf.status, 403);

  const ok = await browse(gw, a, 'POST', '/panel/api/password', { csrf: true, payload: { current: PASSWORD, next: 'a new long password' } });
  assert.equal(ok.status, 204);
  assert.equal((await browse(gw, a, 'GET', '/panel/api/session')).status, 200, 'this session stays');
  assert.equal((await browse(gw, b, 'GET', '/panel/api/session')).status, 401, 'the other session ended');
  assert.equal((await browse(gw, c, 'GET', '/panel/api/session')).status, 200, "another user's session is untouched");
  const old = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: user.email, password: PASSWORD },
    remoteAddress: nextAddress(),
  });
  assert.equal(old.statusCode, 401);
  await signIn(gw, user.email, 'a new long password');
});

test('the dashboard counts the messages sent through the simulator, and shows the latest replies', async () => {
  const bob = await gw.customer({ balance: 50 });
  const user = await panelUser(gw, bob.accountId);
  const browser = await signIn(gw, user.email, PASSWORD);
  const empty = await browse(gw, browser, 'GET', '/panel/api/dashboard');
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, { balance: 50, today: {}, week: {}, perDay: [], replies: [] });

  const sent = await gw.call(bob.key, 'POST', '/messages/sms/send', {
    receivers: [5511988880001, 5511988880002, 5511988887777, 5511988886666],
    message: 'Hi',
    route: bob.routeId,
  });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  // Sent through the session cookie too (with the CSRF token): the same account.
  const viaPanel = await browse(gw, browser, 'POST', '/messages/sms/send', {
    csrf: true,
    payload: { receivers: [5511988885555], message: 'Hi', route: bob.routeId },
  });
  assert.equal(viaPanel.status, 200, JSON.stringify(viaPanel.body));
  await gw.eventually(
    () => browse(gw, browser, 'GET', '/panel/api/dashboard'),
    (r) => r.body.today.DELIVERED === 3 && r.body.today.UNDELIVERED === 1 && r.body.today.EXPIRED === 1,
    'final statuses',
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: '5511988887777', text: 'Thanks!' });
  const dash = await gw.eventually(
    () => browse(gw, browser, 'GET', '/panel/api/dashboard'),
    (r) => r.body.replies.length === 1,
    'the reply',
  );
  const d = dash.body;
  assert.deepEqual(d.today, { DELIVERED: 3, UNDELIVERED: 1, EXPIRED: 1 });
  assert.deepEqual(d.week, d.today);
  const today = new Date().toISOString().slice(0, 10);
  assert.deepEqual(
    d.perDay.filter((r: any) => r.day === today).sort((x: any, y: any) => x.status.localeCompare(y.status)),
    [
      { day: today, status: 'DELIVERED', count: 3 },
      { day: today, status: 'EXPIRED', count: 1 },
      { day: today, status: 'UNDELIVERED', count: 1 },
    ],
  );
  assert.equal(d.replies[0].from, '5511988887777');
  assert.equal(d.replies[0].text, 'Thanks!');
  assert.ok(!Number.isNaN(Date.parse(d.replies[0].receivedAt)));
  const balance = (await gw.call(bob.key, 'GET', '/balance')).body.object.balance;
  assert.equal(d.balance, balance);

  // Older messages: in the week and per day, not today; 15 days back: nowhere.
  const day = 86_400_000;
  const { id } = await gw.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', bob.accountId).executeTakeFirstOrThrow();
  await gw.core.db.kysely
    .updateTable('messages')
    .set({ created_at: Date.now() - 3 * day })
    .where('id', '=', id)
    .execute();
  const later = (await browse(gw, browser, 'GET', '/panel/api/dashboard')).body;
  const todayTotal = Object.values(later.today as Record<string, number>).reduce((a, b) => a + b, 0);
  const weekTotal = Object.values(later.week as Record<string, number>).reduce((a, b) => a + b, 0);
  assert.equal(todayTotal, 4);
  assert.equal(weekTotal, 5);
  const threeDaysAgo = new Date(Date.now() - 3 * day).toISOString().slice(0, 10);
  assert.deepEqual(
    later.perDay.filter((r: any) => r.day !== today).map((r: any) => [r.day, r.count]),
    [[threeDaysAgo, 1]],
  );
  assert.equal(
    later.perDay.reduce((n: number, r: any) => n + r.count, 0),
    5,
  );
  await gw.core.db.kysely
    .updateTable('messages')
    .set({ created_at: Date.now() - 15 * day })
    .where('id', '=', id)
    .execute();
  const gone = (await browse(gw, browser, 'GET', '/panel/api/dashboard')).body;
  assert.equal(
    Object.values(gone.week as Record<string, number>).reduce((a, b) => a + b, 0),
    4,
  );
});

/** GET over a real socket, reading the answer as it comes: its chunks, status and headers. */
function download(port: number, path: string, cookie: string): Promise<{ status: number; headers: Record<string, unknown>; chunks: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { cookie } }, (res) => {
      let chunks = 0;
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks += 1;
        parts.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('CSV exports: streamed from the database in pages, every row, filtered like the reports, escaped', async () => {
  const carol = await gw.customer({ balance: 10_000 });
  const user = await panelUser(gw, carol.accountId);
  const browser = await signIn(gw, user.email, PASSWORD);
  const receivers = (from: number) => Array.from({ length: 1000 }, (_, i) => 5521900000000 + from + i * 10 + 5);
  for (const from of [0, 20_000, 40_000]) {
    const res = await gw.call(carol.key, 'POST', '/messages/sms/send', {
      receivers: receivers(from),
      message: 'Big, "quoted" batch',
      route: carol.routeId,
      tag: 'big',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  const one = await gw.call(carol.key, 'POST', '/messages/sms/send', {
    receivers: [5521977770001],
    message: '=HYPERLINK("x")',
    route: carol.routeId,
    tag: 'one',
  });
  assert.equal(one.status, 200);
  await gw.eventually(
    async () => (await gw.call(carol.key, 'GET', '/reports/messages/sent?statuses=UNDELIVERED&limit=10')).body.totalRecords,
    (n) => n === 1,
    'the undelivered message',
  );

  const address = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const port = Number(new URL(address).port);
  const all = await download(port, '/panel/api/export/sent.csv', browser.cookie);
  assert.equal(all.status, 200);
  assert.match(String(all.headers['content-type']), /^text\/csv/);
  assert.equal(all.headers['content-disposition'], 'attachment; filename="sent.csv"');
  assert.equal(all.headers['content-length'], undefined, 'streamed (chunked), not built first');
  assert.ok(all.chunks > 10, `read in ${all.chunks} chunks`);
  const lines = all.text.split('\r\n').filter(Boolean);
  assert.equal(lines[0], 'id,receiver,content,status,statusDetails,createdAt,sentAt,requestId,schedule,custom,tag,product,route');
  assert.equal(lines.length, 1 + 3001);
  const ids = new Set(lines.slice(1).map((l) => l.split(',')[0]));
  assert.equal(ids.size, 3001, 'every message once (keyset pages do not skip or repeat)');
  assert.ok(lines.some((l) => l.includes('"Big, ""quoted"" batch"')));
  assert.ok(
    lines.some((l) => l.includes(`'=HYPERLINK(""x"")`)),
    'formula text defused',
  );

  const filtered = await download(port, '/panel/api/export/sent.csv?statuses=UNDELIVERED', browser.cookie);
  const undelivered = filtered.text.split('\r\n').filter(Boolean);
  assert.equal(undelivered.length, 2);
  assert.match(undelivered[1] as string, /,5521977770001,/);
  const byTag = await download(port, '/panel/api/export/sent.csv?tag=one', browser.cookie);
  assert.equal(byTag.text.split('\r\n').filter(Boolean).length, 2);
  const bad = await browse(gw, browser, 'GET', '/panel/api/export/sent.csv?startDate=yesterday');
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /startDate/);

  await gw.admin('POST', '/admin/simulator/inbound', { from: '5521977770001', text: '+1, "yes"' });
  await gw.eventually(
    () => browse(gw, browser, 'GET', '/panel/api/export/received.csv'),
    (r) => r.text.split('\r\n').filter(Boolean).length === 2,
    'the reply in the export',
  );
  const received = await browse(gw, browser, 'GET', '/panel/api/export/received.csv?sender=5521977770001');
  const rows = received.text.split('\r\n').filter(Boolean);
  assert.equal(rows[0], 'sender,content,receivedAt,messageId');
  assert.match(rows[1] as string, /^5521977770001,"'\+1, ""yes""",/);
  assert.equal(received.headers['content-disposition'], 'attachment; filename="received.csv"');

  // Read lazily, a page at a time: once the first rows are out, rows moved out of the filter's window
  // meanwhile are not exported, so no more than one page was ever read ahead.
  const lazy = sentCsv(gw.core.db, carol.accountId, {});
  const head: string[] = [];
  for (let i = 0; i < 11; i++) head.push((await lazy.next()).value as string);
  await gw.core.db.kysely
    .updateTable('messages')
    .set({ created_at: Date.now() - 30 * 86_400_000 })
    .where('account_id', '=', carol.accountId)
    .execute();
  let rest = 0;
  for await (const _ of lazy) rest += 1;
  assert.ok(head.length + rest <= 1 + EXPORT_PAGE, `${head.length + rest} lines: at most the header and one page`);
});

test('API keys of the signed-in account: create, list masked, allowed addresses, revoke (then refused by the Gateway API)', async () => {
  const dave = await gw.customer();
  const user = await panelUser(gw, dave.accountId);
  const browser = await signIn(gw, user.email, PASSWORD);
  const created = await browse(gw, browser, 'POST', '/panel/api/keys', { csrf: true, payload: {} });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { id, key, prefix } = created.body;
  assert.equal(prefix, `****…${key.slice(-4)}`);
  assert.equal(created.body.allowedIps, null);
  assert.equal((await gw.call(key, 'GET', '/balance')).status, 200);

  const list = await browse(gw, browser, 'GET', '/panel/api/keys');
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.map((k: any) => k.id),
    [dave.keyId, id],
  );
  assert.ok(!JSON.stringify(list.body).includes(key), 'never the key itself');
  assert.ok(!JSON.stringify(list.body).includes(dave.key));

  const restricted = await browse(gw, browser, 'PUT', `/panel/api/keys/${id}/allowed-ips`, { csrf: true, payload: { allowedIps: ['10.0.0.0/8'] } });
  assert.equal(restricted.status, 200, JSON.stringify(restricted.body));
  assert.deepEqual(restricted.body.allowedIps, ['10.0.0.0/8']);
  assert.equal((await gw.call(key, 'GET', '/balance')).status, 401, 'refused from 127.0.0.1 at once');
  const invalid = await browse(gw, browser, 'PUT', `/panel/api/keys/${id}/allowed-ips`, { csrf: true, payload: { allowedIps: ['10.0.0.300'] } });
  assert.equal(invalid.status, 400);
  assert.match(invalid.body.message, /10\.0\.0\.300/);
  const open = await browse(gw, browser, 'PUT', `/panel/api/keys/${id}/allowed-ips`, { csrf: true, payload: { allowedIps: [] } });
  assert.equal(open.body.allowedIps, null);
  assert.equal((await gw.call(key, 'GET', '/balance')).status, 200);

  const withIps = await browse(gw, browser, 'POST', '/panel/api/keys', { csrf: true, payload: { allowedIps: ['127.0.0.1'] } });
  assert.deepEqual(withIps.body.allowedIps, ['127.0.0.1']);

  const revoked = await browse(gw, browser, 'DELETE', `/panel/api/keys/${id}`, { csrf: true });
  assert.equal(revoked.status, 204);
  assert.equal((await gw.call(key, 'GET', '/balance')).status, 401, 'the revoked key is refused');
  const listed = (await browse(gw, browser, 'GET', '/panel/api/keys')).body.find((k: any) => k.id === id);
  assert.ok(listed.revokedAt);
  assert.equal((await browse(gw, browser, 'DELETE', `/panel/api/keys/${id}`, { csrf: true })).status, 404, 'already revoked');
  assert.equal((await browse(gw, browser, 'DELETE', '/panel/api/keys/abc', { csrf: true })).status, 400);
});

test("the account's Legacy v2 callback URLs from its panel: read, set (CSRF, URL checks), the same as the operator's", async () => {
  const erin = await gw.customer();
  const other = await gw.customer();
  const user = await panelUser(gw, erin.accountId);
  const browser = await signIn(gw, user.email, PASSWORD);
  assert.deepEqual((await browse(gw, browser, 'GET', '/panel/api/callbacks')).body, { replyUrl: null, statusUrl: null });

  const urls = { replyUrl: 'https://example.com/sms/reply', statusUrl: 'https://example.com/sms/status' };
  assert.equal((await browse(gw, browser, 'PUT', '/panel/api/callbacks', { payload: urls })).status, 403, 'no CSRF token');
  const set = await browse(gw, browser, 'PUT', '/panel/api/callbacks', { csrf: true, payload: urls });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body, urls);
  assert.deepEqual((await browse(gw, browser, 'GET', '/panel/api/callbacks')).body, urls);
  // The operator sees what the account set, and the other account nothing.
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${erin.accountId}/callbacks`)).body, urls);
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${other.accountId}/callbacks`)).body, { replyUrl: null, statusUrl: null });

  // The same URL checks as the operator's and webhooks': 400 naming the field, nothing changed.
  for (const [body, field] of [
    [{ replyUrl: 'http://127.0.0.1/hook' }, 'replyUrl'],
    [{ statusUrl: 'http://169.254.169.254/latest/meta-data' }, 'statusUrl'],
    [{ statusUrl: 'http://10.0.0.1/x' }, 'statusUrl'],
    [{ replyUrl: 'ftp://example.com/x' }, 'replyUrl'],
    [{ replyUrl: 'https://example.com:22/x' }, 'replyUrl'],
    [{ replyUrl: 'not a url' }, 'replyUrl'],
    [{ replyUrl: 5 }, 'replyUrl'],
    [{ other: 'x' }, ''],
  ] as const) {
    const bad = await browse(gw, browser, 'PUT', '/panel/api/callbacks', { csrf: true, payload: body });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.equal(bad.body.hasError, true);
    assert.ok(
      bad.body.errors.some((e: string) => e.startsWith(field)),
      JSON.stringify(bad.body.errors),
    );
  }
  assert.deepEqual((await browse(gw, browser, 'GET', '/panel/api/callbacks')).body, urls);

  // One off, then both.
  const one = await browse(gw, browser, 'PUT', '/panel/api/callbacks', { csrf: true, payload: { replyUrl: urls.replyUrl, statusUrl: null } });
  assert.deepEqual(one.body, { replyUrl: urls.replyUrl, statusUrl: null });
  assert.deepEqual((await browse(gw, browser, 'PUT', '/panel/api/callbacks', { csrf: true, payload: {} })).body, { replyUrl: null, statusUrl: null });
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${erin.accountId}/callbacks`)).body, { replyUrl: null, statusUrl: null });

  // Signed out: 401; an operator session: 403 (no account).
  assert.equal((await browse(gw, null, 'GET', '/panel/api/callbacks')).status, 401);
  const op = await signIn(gw, 'operator', ADMIN_TOKEN);
  assert.equal((await browse(gw, op, 'GET', '/panel/api/callbacks')).status, 403);
  assert.equal((await browse(gw, op, 'PUT', '/panel/api/callbacks', { csrf: true, payload: urls })).status, 403);
});

test('operators: the operator token as password (email "operator") and operator users open the console; their session works on /admin', async () => {
  const wrong = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: 'operator', password: 'not the token' },
    remoteAddress: nextAddress(),
  });
  assert.equal(wrong.statusCode, 401);
  const op = await signIn(gw, 'operator', ADMIN_TOKEN);
  assert.deepEqual({ ...op.body, csrfToken: undefined }, { email: 'operator', operator: true, account: null, csrfToken: undefined });

  const accounts = await browse(gw, op, 'GET', '/admin/accounts');
  assert.equal(accounts.status, 200);
  assert.ok(accounts.body.records.length > 0);
  const noCsrf = await browse(gw, op, 'POST', '/admin/accounts', { payload: { name: 'Via console' } });
  assert.equal(noCsrf.status, 403);
  assert.match(noCsrf.body.error, /CSRF/);
  const created = await browse(gw, op, 'POST', '/admin/accounts', { csrf: true, payload: { name: 'Via console' } });
  assert.equal(created.status, 201);
  // An operator session is no account: the account panel and the account interfaces refuse it.
  assert.equal((await browse(gw, op, 'GET', '/panel/api/dashboard')).status, 403);
  assert.equal((await browse(gw, op, 'GET', '/balance')).status, 401);
  assert.equal((await browse(gw, op, 'GET', '/api/v2/credits')).status, 401);
  const password = await browse(gw, op, 'POST', '/panel/api/password', { csrf: true, payload: { current: ADMIN_TOKEN, next: 'something else 123' } });
  assert.equal(password.status, 400);

  const opsUser = await gw.admin('POST', '/admin/operator-users', { email: 'ops@gateway.example', password: 'operator password 1' });
  assert.equal(opsUser.status, 201);
  assert.equal(opsUser.body.accountId, null);
  const listed = await gw.admin('GET', '/admin/operator-users');
  assert.deepEqual(
    listed.body.map((u: any) => u.email),
    ['ops@gateway.example'],
  );
  const opUser = await signIn(gw, 'ops@gateway.example', 'operator password 1');
  assert.equal(opUser.body.operator, true);
  assert.equal((await browse(gw, opUser, 'GET', `/admin/accounts/${alice.accountId}`)).status, 200);
  // An account user's session is not an operator's.
  const user = await panelUser(gw, alice.accountId);
  const customer = await signIn(gw, user.email, PASSWORD);
  assert.equal((await browse(gw, customer, 'GET', '/admin/accounts')).status, 401);

  // Sessions opened with an old operator token end when the token is another one (a process with a new token).
  const other = await buildApp(gw.core, { adminToken: 'another-operator-token-98765', logger: false });
  try {
    const res = await other.inject({ method: 'GET', url: '/panel/api/session', headers: { cookie: op.cookie } });
    assert.equal(res.statusCode, 401);
    const still = await other.inject({ method: 'GET', url: '/panel/api/session', headers: { cookie: opUser.cookie } });
    assert.equal(still.statusCode, 200, 'an operator user is not tied to the token');
  } finally {
    await other.close();
  }
});

test('a child user signs in with its e-mail and password and gets the child account', async () => {
  const reseller = await gw.customer({ role: 'RESELLER', balance: 100 });
  const created = await gw.call(reseller.key, 'POST', '/child-users', childBody('Loja.Panel@example.com.br'));
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const childId = created.body.object.id;
  const child = await signIn(gw, 'loja.panel@example.com.br', 'child password 1');
  assert.deepEqual(child.body.account, { id: childId, name: 'Loja Ltda', parentId: reseller.accountId });
  assert.equal(child.body.email, 'Loja.Panel@example.com.br');
  const balance = await browse(gw, child, 'GET', '/balance');
  assert.equal(balance.body.object.balance, 10);
  const dashboard = await browse(gw, child, 'GET', '/panel/api/dashboard');
  assert.equal(dashboard.body.balance, 10);
  // Its password change is its owner credential's.
  const changed = await browse(gw, child, 'POST', '/panel/api/password', { csrf: true, payload: { current: 'child password 1', next: 'child password 2' } });
  assert.equal(changed.status, 204);
  await signIn(gw, 'loja.panel@example.com.br', 'child password 2');
  // A panel user cannot take a child user's e-mail.
  const taken = await gw.admin('POST', `/admin/accounts/${alice.accountId}/panel-users`, { email: 'LOJA.panel@example.com.br', password: PASSWORD });
  assert.equal(taken.status, 409);
});

test('panel users through the operator API: create (unique e-mail), list, delete (its sessions end)', async () => {
  const erin = await gw.customer();
  const bad = await gw.admin('POST', `/admin/accounts/${erin.accountId}/panel-users`, { email: 'not-an-email', password: 'short' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /email/);
  assert.match(bad.body.error, /password: must be at least 10 characters/);
  assert.equal((await gw.admin('POST', '/admin/accounts/999999/panel-users', { email: 'x@acme.example', password: PASSWORD })).status, 404);
  const created = await gw.admin('POST', `/admin/accounts/${erin.accountId}/panel-users`, { email: 'Erin@Acme.example', password: PASSWORD });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['accountId', 'createdAt', 'email', 'id']);
  const dup = await gw.admin('POST', `/admin/accounts/${erin.accountId}/panel-users`, { email: 'erin@ACME.example', password: PASSWORD });
  assert.equal(dup.status, 409);
  const list = await gw.admin('GET', `/admin/accounts/${erin.accountId}/panel-users`);
  assert.deepEqual(
    list.body.map((u: any) => u.email),
    ['Erin@Acme.example'],
  );
  const browser = await signIn(gw, 'erin@acme.example', PASSWORD);
  assert.equal((await gw.admin('DELETE', `/admin/panel-users/${created.body.id}`)).status, 204);
  assert.equal((await browse(gw, browser, 'GET', '/panel/api/session')).status, 401);
  assert.equal((await gw.admin('DELETE', `/admin/panel-users/${created.body.id}`)).status, 404);
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${erin.accountId}/panel-users`)).body, []);
});

test("an operator's session reads the submit counters on GET /admin/carriers, and is no credential for /metrics", async () => {
  const op = await signIn(gw, 'operator', ADMIN_TOKEN);
  const carriers = await browse(gw, op, 'GET', '/admin/carriers');
  assert.equal(carriers.status, 200);
  for (const c of carriers.body) assert.deepEqual(Object.keys(c.submitted), ['accepted', 'retry', 'failed']);
  assert.equal((await browse(gw, op, 'GET', '/metrics')).status, 401);
  assert.equal((await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode, 200);
});

test('the panel-user and operator-user lists answer what their documented schemas (PanelUsers) say', async () => {
  const grace = await gw.customer();
  const user = await panelUser(gw, grace.accountId);
  const op = await gw.admin('POST', '/admin/operator-users', { email: `ops-${Date.now().toString(36)}@gateway.example`, password: PASSWORD });
  assert.equal(op.status, 201);
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const answer = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema;
  assert.deepEqual(answer('/admin/accounts/{id}/panel-users', 'get', '200'), { $ref: '#/components/schemas/PanelUsers' });
  assert.deepEqual(answer('/admin/operator-users', 'get', '200'), { $ref: '#/components/schemas/PanelUsers' });
  assert.deepEqual(answer('/admin/accounts/{id}/panel-users', 'post', '201'), { $ref: '#/components/schemas/PanelUser' });
  assert.deepEqual(answer('/admin/operator-users', 'post', '201'), { $ref: '#/components/schemas/PanelUser' });
  assert.deepEqual(doc.components.schemas.PanelUsers.items, { $ref: '#/components/schemas/PanelUser' });
  const schema = doc.components.schemas.PanelUser;
  const fields = Object.keys(schema.properties).sort();
  assert.deepEqual([...schema.required].sort(), fields);

  const check = (u: any, accountId: number | null) => {
    assert.deepEqual(Object.keys(u).sort(), fields);
    assert.equal(typeof u.id, 'number');
    assert.equal(typeof u.email, 'string');
    assert.equal(u.accountId, accountId);
    assert.equal(new Date(u.createdAt).toISOString(), u.createdAt);
  };
  const accountUsers = (await gw.admin('GET', `/admin/accounts/${grace.accountId}/panel-users`)).body;
  assert.deepEqual(
    accountUsers.map((u: any) => u.id),
    [user.id],
  );
  for (const u of accountUsers) check(u, grace.accountId);
  const operators = (await gw.admin('GET', '/admin/operator-users')).body;
  assert.ok(operators.some((u: any) => u.id === op.body.id));
  for (const u of operators) check(u, null);
});

test('CLI: panel-user add (generated password printed), panel-user list, operator-user add', async () => {
  const frank = await gw.customer();
  const cli = (...args: string[]) => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, ...gw.db.env, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    return { code: res.status, out: res.stdout, err: res.stderr };
  };
  const added = cli('panel-user', 'add', '--account', String(frank.accountId), '--email', 'frank@acme.example');
  assert.equal(added.code, 0, added.err);
  const user = JSON.parse(added.out);
  assert.equal(user.email, 'frank@acme.example');
  assert.ok(typeof user.password === 'string' && user.password.length >= 20, 'a generated password');
  await signIn(gw, 'frank@acme.example', user.password);

  const given = cli('panel-user', 'add', '--account', String(frank.accountId), '--email', 'frank2@acme.example', '--password', 'given password 1');
  assert.equal(given.code, 0, given.err);
  assert.equal(JSON.parse(given.out).password, undefined, 'a given password is not printed');
  const list = cli('panel-user', 'list', '--account', String(frank.accountId));
  assert.equal(list.code, 0, list.err);
  assert.match(list.out, /frank@acme\.example/);
  assert.match(list.out, /frank2@acme\.example/);
  const op = cli('operator-user', 'add', '--email', 'cli-ops@gateway.example');
  assert.equal(op.code, 0, op.err);
  const opUser = JSON.parse(op.out);
  assert.equal(opUser.accountId, null);
  assert.equal((await signIn(gw, 'cli-ops@gateway.example', opUser.password)).body.operator, true);
  const missing = cli('panel-user', 'add', '--email', 'x@acme.example');
  assert.equal(missing.code, 65);
  assert.match(missing.err, /--account is required/);
});

test('GET /panel/api/info: base URLs from the Host the request was sent to', async () => {
  const res = await gw.app.inject({ method: 'GET', url: '/panel/api/info', headers: { host: 'sms.acme.example:8080' } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { gatewayBaseUrl: 'http://sms.acme.example:8080', legacyBaseUrl: 'http://sms.acme.example:8080/api/v2', version: '0.1.0' });
});

test("the panel's files: the build at /panel/, index.html for the front end's routes, security headers; 503 without a build", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'panel-dist-'));
  try {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Panel</title><script type="module" src="/panel/assets/app.js"></script>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log("panel")');
    const app = await buildApp(gw.core, { adminToken: ADMIN_TOKEN, logger: false, panelDir: dir });
    try {
      const index = await app.inject({ method: 'GET', url: '/panel/' });
      assert.equal(index.statusCode, 200);
      assert.match(index.body, /<title>Panel<\/title>/);
      assert.match(String(index.headers['content-security-policy']), /default-src 'self'/);
      assert.match(String(index.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(index.headers['x-frame-options'], 'DENY');
      const asset = await app.inject({ method: 'GET', url: '/panel/assets/app.js' });
      assert.equal(asset.statusCode, 200);
      assert.match(asset.body, /console\.log/);
      const route = await app.inject({ method: 'GET', url: '/panel/reports/sent?x=1' });
      assert.equal(route.statusCode, 200);
      assert.match(route.body, /<title>Panel<\/title>/);
      const api = await app.inject({ method: 'GET', url: '/panel/api/nothing-here' });
      assert.equal(api.statusCode, 404);
      assert.equal(api.json().hasError, true);
      const apiPost = await app.inject({ method: 'POST', url: '/panel/api/nothing-here', payload: {} });
      assert.equal(apiPost.statusCode, 404);
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/panel/') && !p.startsWith('/panel/api/')), 'static routes are hidden');
      assert.ok(doc.paths['/panel/api/session'].post.tags.includes('Panel'));
    } finally {
      await app.close();
    }
    const missing = await buildApp(gw.core, { adminToken: ADMIN_TOKEN, logger: false, panelDir: join(dir, 'nope') });
    try {
      for (const url of ['/panel/', '/panel/dashboard']) {
        const res = await missing.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 503, url);
        assert.equal(res.body, 'The panel is not built: run npm run build:web');
      }
      assert.equal((await missing.inject({ method: 'GET', url: '/panel/api/info' })).statusCode, 200);
    } finally {
      await missing.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
