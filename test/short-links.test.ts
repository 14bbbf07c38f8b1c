/**
 * Short links (docs/child-users-and-short-links.md):
 * the account's CRUD, the public redirect with its counters, and
 * `shortenLinks` on SMS sends. Runs on SQLite, or PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';
import { loadConfig, ConfigError } from '../src/config.ts';
import { findUrls, checkDestination } from '../src/shortlinks/urls.ts';
import { insertLinks, shortLinkBase } from '../src/shortlinks/links.ts';
import { newCode } from '../src/shortlinks/codes.ts';
import type { ShortLinkTables } from '../src/shortlinks/tables.ts';

const BASE = 'https://go.example.com.br/s';

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

before(async () => {
  // A trailing slash on the configured base is dropped.
  gw = await startGateway({ SHORT_LINK_BASE: `${BASE}/` });
  alice = await gw.customer({ balance: 100, farePrice: '0.10' });
  bob = await gw.customer({ balance: 100 });
});
after(() => gw.close());

type Res = Pick<Awaited<ReturnType<TestGateway['call']>>, 'status' | 'body'>;

const BROWSER = 'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const WHATSAPP = 'WhatsApp/2.23.20.0';

const create = (key: string | null, destinationUrl: unknown) => gw.call(key, 'POST', '/short-links', { destinationUrl });
const list = (key: string, query = '') => gw.call(key, 'GET', `/short-links${query}`);
const follow = (code: string, userAgent?: string, method: 'GET' | 'HEAD' = 'GET') =>
  gw.app.inject({ method, url: `/s/${code}`, headers: userAgent === undefined ? {} : { 'user-agent': userAgent } });
const balance = async (key: string): Promise<number> => (await gw.call(key, 'GET', '/balance')).body.object.balance as number;

async function link(key: string, destinationUrl: string) {
  const res = await create(key, destinationUrl);
  assertOk(res);
  return res.body.object as {
    id: number;
    code: string;
    shortUrl: string;
    destinationUrl: string;
    accessCount: number;
    humanAccessCount: number;
    botAccessCount: number;
    createdAt: string;
    updatedAt: string;
  };
}
/** One of the account's links, as listed. */
async function listed(key: string, id: number) {
  const res = await list(key, '?limit=1000');
  return res.body.object.find((l: { id: number }) => l.id === id);
}

function assertOk(res: Res) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.hasError, false);
  assert.deepEqual(res.body.errors, []);
}

function assertFailure(res: Res, status: number, fields?: string[]) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.equal(res.body.totalRecords, 0);
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, JSON.stringify(res.body));
  if (fields) {
    assert.equal(res.body.errors.length, fields.length, `expected one error per problem (${fields.join(', ')}): ${JSON.stringify(res.body.errors)}`);
    for (const f of fields)
      assert.ok(
        res.body.errors.some((e: string) => e.startsWith(`${f}:`)),
        `no error for ${f}: ${JSON.stringify(res.body.errors)}`,
      );
  }
}

function assertNotFoundPage(res: Awaited<ReturnType<typeof follow>>) {
  assert.equal(res.statusCode, 404);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.body, /Link not found/);
  assert.equal(res.headers.location, undefined);
}

test('create: a short link with an unguessable base62 code, shortUrl under SHORT_LINK_BASE, counters at zero', async () => {
  const before = Date.now();
  const l = await link(alice.key, 'https://example.com/promo?utm_source=sms&x=1#top');
  assert.deepEqual(Object.keys(l).sort(), [
    'accessCount',
    'botAccessCount',
    'code',
    'createdAt',
    'destinationUrl',
    'humanAccessCount',
    'id',
    'shortUrl',
    'updatedAt',
  ]);
  assert.match(l.code, /^[0-9A-Za-z]{8}$/);
  assert.equal(l.shortUrl, `${BASE}/${l.code}`);
  assert.equal(l.destinationUrl, 'https://example.com/promo?utm_source=sms&x=1#top');
  assert.deepEqual([l.accessCount, l.humanAccessCount, l.botAccessCount], [0, 0, 0]);
  assert.equal(l.createdAt, l.updatedAt);
  assert.ok(Date.parse(l.createdAt) >= before - 1000);
  assert.match(l.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // http is accepted too, and the same destination twice is two links.
  const a = await link(alice.key, 'http://example.com/promo');
  const b = await link(alice.key, 'http://example.com/promo');
  assert.notEqual(a.code, b.code);
});

test('codes are distinct across many links, and a colliding code is retried', async () => {
  const codes = new Set<string>();
  for (let i = 0; i < 50; i++) codes.add((await link(bob.key, `https://example.org/${i}`)).code);
  assert.equal(codes.size, 50);

  const taken = (await link(alice.key, 'https://example.com/taken')).code;
  const draws = [taken, taken, 'Fresh123'];
  const [row] = await insertLinks(gw.core.db.kysely, alice.accountId, ['https://example.com/retry'], () => draws.shift() ?? newCode());
  assert.equal(row?.code, 'Fresh123');
  await assert.rejects(
    insertLinks(gw.core.db.kysely, alice.accountId, ['https://example.com/never'], () => taken),
    /free short link code/,
  );
  // The same code drawn twice in one insert goes to one destination; the other retries.
  const pair = ['Twin0001', 'Twin0001', 'Twin0002'];
  const rows = await insertLinks(gw.core.db.kysely, alice.accountId, ['https://example.com/t1', 'https://example.com/t2'], () => pair.shift() ?? newCode());
  assert.deepEqual(
    rows.map((r) => [r.code, r.destination_url]),
    [
      ['Twin0001', 'https://example.com/t1'],
      ['Twin0002', 'https://example.com/t2'],
    ],
  );
  for (let i = 0; i < 1000; i++) assert.match(newCode(), /^[0-9A-Za-z]{8}$/);
});

test('destinations: only http(s) URLs with a host, at most 2048 characters; each refusal is one error', async () => {
  const countBefore = (await list(alice.key)).body.totalRecords;
  const bad: unknown[] = [
    'ftp://example.com/file',
    'javascript:alert(1)',
    'data:text/html,hi',
    'mailto:a@example.com',
    'example.com',
    'www.example.com',
    '/relative',
    'http://',
    'https://',
    'http:///path',
    'https:\\\\example.com',
    'https://\\example.com',
    'https://?q',
    'https://exa mple.com',
    'https://example.com/a b',
    'https://example.com/\u0007',
    '',
    '   ',
    `https://example.com/${'a'.repeat(2030)}`,
    'https://user:secret@example.com/',
    `${BASE}/abcdefgh`,
    'http://[::1',
    'https://example.com:99999/',
  ];
  for (const url of bad) assertFailure(await create(alice.key, url), 400, ['destinationUrl']);
  for (const url of [42, null, ['https://example.com'], { href: 'https://example.com' }, true])
    assertFailure(await create(alice.key, url), 400, ['destinationUrl']);
  assertFailure(await gw.call(alice.key, 'POST', '/short-links', {}), 400, ['destinationUrl']);
  assertFailure(await gw.call(alice.key, 'POST', '/short-links'), 400);
  for (const payload of ['{"destinationUrl": ', '[]', '"https://example.com"', '']) {
    const res = await gw.app.inject({ method: 'POST', url: '/short-links', headers: { 'x-api-key': alice.key, 'content-type': 'application/json' }, payload });
    assertFailure({ status: res.statusCode, body: res.json() }, 400);
  }
  assert.equal((await list(alice.key)).body.totalRecords, countBefore);
  // At the limit is fine; surrounding spaces are trimmed; IDN and IP hosts are URLs too.
  const long = `https://example.com/${'a'.repeat(2048 - 20)}`;
  assert.equal(long.length, 2048);
  assert.equal((await link(alice.key, long)).destinationUrl, long);
  assert.equal((await link(alice.key, '  https://example.com/trim  ')).destinationUrl, 'https://example.com/trim');
  await link(alice.key, 'https://açaí.com.br/cardápio');
  await link(alice.key, 'http://192.168.0.10:8080/x');
});

test('the redirect: 302 to the destination, no API key needed, counted as human or bot by the User-Agent', async () => {
  const l = await link(alice.key, 'https://example.com/landing?a=1');
  const human = await follow(l.code, BROWSER);
  assert.equal(human.statusCode, 302);
  assert.equal(human.headers.location, 'https://example.com/landing?a=1');
  assert.equal(human.headers['cache-control'], 'no-store');
  await follow(l.code, IPHONE);
  await follow(l.code, GOOGLEBOT);
  await follow(l.code, WHATSAPP);
  await follow(l.code); // no User-Agent: a bot
  await follow(l.code, ''); // empty User-Agent: a bot
  // A wrong key header changes nothing: the redirect is public.
  const withKey = await gw.app.inject({ method: 'GET', url: `/s/${l.code}`, headers: { 'x-api-key': 'wrong', 'user-agent': BROWSER } });
  assert.equal(withKey.statusCode, 302);
  const after = await listed(alice.key, l.id);
  assert.deepEqual([after.accessCount, after.humanAccessCount, after.botAccessCount], [7, 3, 4]);
  // HEAD answers the same without counting (link checkers, previews).
  const head = await follow(l.code, BROWSER, 'HEAD');
  assert.equal(head.statusCode, 302);
  assert.equal(head.headers.location, 'https://example.com/landing?a=1');
  assert.equal((await listed(alice.key, l.id)).accessCount, 7);
  // Non-ASCII destinations are sent in their ASCII (WHATWG) form.
  const idn = await link(alice.key, 'https://açaí.com.br/cardápio?q=pão');
  const location = String((await follow(idn.code, BROWSER)).headers.location);
  assert.match(location, /^https:\/\/xn--[a-z0-9-]+\.com\.br\/card%C3%A1pio\?q=p%C3%A3o$/);
  assert.equal(new URL(location).hostname, new URL('https://açaí.com.br').hostname);
});

test('unknown, malformed or deleted codes: a 404 HTML page, nothing counted', async () => {
  const l = await link(alice.key, 'https://example.com/gone');
  const swapped = [...l.code].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  for (const code of ['zzzzzzzz', ...(swapped === l.code ? [] : [swapped]), 'a', 'x'.repeat(40), "abc'--", 'abc%2Fdef', 'a/b/c', 'abc.def']) {
    assertNotFoundPage(await follow(code, BROWSER));
  }
  assert.equal((await follow('zzzzzzzz', BROWSER, 'HEAD')).statusCode, 404);
  const deleted = await gw.call(alice.key, 'DELETE', `/short-links/${l.id}`);
  assertOk(deleted);
  assertNotFoundPage(await follow(l.code, BROWSER));
  const row = await gw.core.db.kysely.withTables<ShortLinkTables>().selectFrom('short_links').selectAll().where('id', '=', l.id).executeTakeFirstOrThrow();
  assert.equal(Number(row.access_count), 0);
});

test('1000 concurrent clicks with mixed User-Agents are counted exactly', async () => {
  const l = await link(alice.key, 'https://example.com/flash-sale');
  const agents = [BROWSER, GOOGLEBOT, IPHONE, WHATSAPP, undefined];
  const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => follow(l.code, agents[i % agents.length])));
  assert.ok(results.every((r) => r.statusCode === 302 && r.headers.location === 'https://example.com/flash-sale'));
  const counted = await listed(alice.key, l.id);
  // 1000 / 5 agents: 200 each; BROWSER and IPHONE are human, the other three bots.
  assert.deepEqual([counted.accessCount, counted.humanAccessCount, counted.botAccessCount], [1000, 400, 600]);
});

test("list: newest first, skip/limit, totalRecords, filter by code or destination (case-insensitive); only the account's own live links", async () => {
  const carol = await gw.customer({ balance: 1 });
  const made = [];
  for (const url of [
    'https://shop.example.com/Black-Friday',
    'https://shop.example.com/natal',
    'https://blog.example.com/post_1',
    'https://blog.example.com/post%1',
  ]) {
    made.push(await link(carol.key, url));
  }
  await link(bob.key, 'https://shop.example.com/bob-only');
  const all = await list(carol.key);
  assertOk(all);
  assert.equal(all.body.totalRecords, 4);
  assert.deepEqual(
    all.body.object.map((l: { id: number }) => l.id),
    made.map((l) => l.id).reverse(),
  );
  const page = await list(carol.key, '?skip=1&limit=2');
  assert.equal(page.body.totalRecords, 4);
  assert.deepEqual(
    page.body.object.map((l: { id: number }) => l.id),
    [made[2]?.id, made[1]?.id],
  );
  const shop = await list(carol.key, '?filter=SHOP.example');
  assert.equal(shop.body.totalRecords, 2);
  assert.ok(shop.body.object.every((l: { destinationUrl: string }) => l.destinationUrl.startsWith('https://shop.')));
  assert.equal((await list(carol.key, '?filter=black-friday')).body.totalRecords, 1);
  // LIKE wildcards in the filter are literal.
  assert.deepEqual(
    (await list(carol.key, '?filter=post_')).body.object.map((l: { id: number }) => l.id),
    [made[2]?.id],
  );
  assert.deepEqual(
    (await list(carol.key, '?filter=%25')).body.object.map((l: { id: number }) => l.id),
    [made[3]?.id],
  );
  const byCode = await list(carol.key, `?filter=${made[1]?.code}`);
  assert.deepEqual(
    byCode.body.object.map((l: { id: number }) => l.id),
    [made[1]?.id],
  );
  assert.equal((await list(carol.key, '?filter=bob-only')).body.totalRecords, 0);
  assertOk(await gw.call(carol.key, 'DELETE', `/short-links/${made[0]?.id}`));
  assert.equal((await list(carol.key)).body.totalRecords, 3);
  assertFailure(await list(carol.key, '?limit=0'), 400, ['limit']);
  assertFailure(await list(carol.key, '?limit=1001'), 400, ['limit']);
  assertFailure(await list(carol.key, '?skip=-1&limit=x'), 400, ['skip', 'limit']);
});

test('update: a new destination, same code and counters; bad input 400 and nothing changes', async () => {
  const l = await link(alice.key, 'https://example.com/old');
  await follow(l.code, BROWSER);
  await new Promise((r) => setTimeout(r, 5));
  const res = await gw.call(alice.key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 'https://example.com/new' });
  assertOk(res);
  const u = res.body.object;
  assert.equal(u.id, l.id);
  assert.equal(u.code, l.code);
  assert.equal(u.shortUrl, l.shortUrl);
  assert.equal(u.destinationUrl, 'https://example.com/new');
  assert.equal(u.createdAt, l.createdAt);
  assert.ok(Date.parse(u.updatedAt) > Date.parse(l.updatedAt));
  assert.deepEqual([u.accessCount, u.humanAccessCount, u.botAccessCount], [1, 1, 0]);
  assert.equal((await follow(l.code, BROWSER)).headers.location, 'https://example.com/new');

  const before = await listed(alice.key, l.id);
  assertFailure(await gw.call(alice.key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 'ftp://example.com' }), 400, ['destinationUrl']);
  assertFailure(await gw.call(alice.key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 7 }), 400, ['destinationUrl']);
  assertFailure(await gw.call(alice.key, 'PUT', `/short-links/${l.id}`, {}), 400, ['destinationUrl']);
  assertFailure(await gw.call(alice.key, 'PUT', `/short-links/${l.id}`), 400);
  assertFailure(await gw.call(alice.key, 'PUT', '/short-links/abc', { destinationUrl: 'https://example.com/x' }), 400);
  assertFailure(await gw.call(alice.key, 'PUT', '/short-links/0', { destinationUrl: 'https://example.com/x' }), 400);
  assert.deepEqual(await listed(alice.key, l.id), before);
});

test('delete: answers the deleted link; then 404 on every operation; the code is never reused', async () => {
  const l = await link(alice.key, 'https://example.com/delete-me');
  const res = await gw.call(alice.key, 'DELETE', `/short-links/${l.id}`);
  assertOk(res);
  assert.equal(res.body.object.id, l.id);
  assert.equal(res.body.object.code, l.code);
  assert.equal(res.body.object.destinationUrl, 'https://example.com/delete-me');
  assertFailure(await gw.call(alice.key, 'DELETE', `/short-links/${l.id}`), 404);
  assertFailure(await gw.call(alice.key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 'https://example.com/revive' }), 404);
  assert.equal(await listed(alice.key, l.id), undefined);
  // The code stays taken: a new link can never get it.
  await assert.rejects(
    insertLinks(gw.core.db.kysely, bob.accountId, ['https://evil.example.com'], () => l.code),
    /free short link code/,
  );
  assertFailure(await gw.call(alice.key, 'DELETE', '/short-links/abc'), 400);
  assertFailure(await gw.call(alice.key, 'DELETE', '/short-links/999999'), 404);
});

test("another account's link ids: 404 on update and delete, the link unchanged and still redirecting", async () => {
  const l = await link(alice.key, 'https://example.com/alice-only');
  const before = await listed(alice.key, l.id);
  const put = await gw.call(bob.key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 'https://evil.example.com' });
  assertFailure(put, 404);
  assertFailure(await gw.call(bob.key, 'DELETE', `/short-links/${l.id}`), 404);
  assert.ok(!JSON.stringify(put.body).includes('alice-only'));
  assert.deepEqual(await listed(alice.key, l.id), before);
  assert.equal((await follow(l.code, BROWSER)).headers.location, 'https://example.com/alice-only');
  assert.ok(!JSON.stringify((await list(bob.key, '?limit=1000')).body).includes(l.code));
});

test('missing or wrong API key: 401 on every operation', async () => {
  const l = await link(alice.key, 'https://example.com/auth');
  for (const key of [null, 'not-a-key']) {
    assertFailure(await create(key, 'https://example.com'), 401);
    assertFailure(await gw.call(key, 'GET', '/short-links'), 401);
    assertFailure(await gw.call(key, 'PUT', `/short-links/${l.id}`, { destinationUrl: 'https://example.com/x' }), 401);
    assertFailure(await gw.call(key, 'DELETE', `/short-links/${l.id}`), 401);
  }
  assert.deepEqual(await listed(alice.key, l.id), l);
});

test('URLs in texts: sentence punctuation and unopened brackets are not part of them; no scheme, no URL', () => {
  assert.deepEqual(findUrls('Veja https://x.com/a. E (https://y.com/b), ou https://en.wikipedia.org/wiki/Foo_(bar)! www.z.com'), [
    'https://x.com/a',
    'https://y.com/b',
    'https://en.wikipedia.org/wiki/Foo_(bar)',
  ]);
  assert.deepEqual(findUrls('HTTPS://EXAMPLE.COM/A?b=1&c=2, "http://q.com/x"'), ['HTTPS://EXAMPLE.COM/A?b=1&c=2', 'http://q.com/x']);
  assert.deepEqual(findUrls('sem links aqui'), []);
  assert.ok('error' in checkDestination(`${BASE}/abc`, BASE));
  assert.ok('url' in checkDestination('https://go.example.com.br/other/abc', BASE));
});

test("SHORT_LINK_BASE: defaults to this server's /s, must be an http(s) URL", () => {
  assert.equal(shortLinkBase(loadConfig({})), 'http://localhost:3000/s');
  assert.equal(shortLinkBase(loadConfig({ PORT: '8080' })), 'http://localhost:8080/s');
  assert.equal(shortLinkBase(loadConfig({ SHORT_LINK_BASE: 'https://sho.rt/' })), 'https://sho.rt');
  assert.throws(() => loadConfig({ SHORT_LINK_BASE: 'ftp://sho.rt' }), ConfigError);
  assert.throws(() => loadConfig({ SHORT_LINK_BASE: 'https://sho.rt/s?x=1' }), ConfigError);
});

/** A destination long enough that the text costs 2 credits unless it is shortened. */
const LONG_URL = `https://loja.example.com.br/ofertas/black-friday/smartphones?utm_source=sms&utm_medium=gateway&utm_campaign=${'x'.repeat(80)}`;
const sentContents = async (key: string, requestId: string): Promise<string[]> =>
  (await gw.call(key, 'GET', `/reports/messages/sent?requestId=${requestId}&limit=1000`)).body.object.map((m: { content: string }) => m.content);
const linksTo = async (key: string, destination: string) =>
  (await list(key, '?limit=1000')).body.object.filter((l: { destinationUrl: string }) => l.destinationUrl === destination) as {
    code: string;
    shortUrl: string;
  }[];

test('shortenLinks on a send: each URL becomes a short link before charging; the shorter text is charged and sent', async () => {
  const dave = await gw.customer({ balance: 10, farePrice: '0.10' });
  const text = `Oferta so hoje: ${LONG_URL} - responda SAIR para sair.`;
  assert.ok([...text].length > 160);

  const plain = await gw.call(dave.key, 'POST', '/messages/sms/send', { receivers: ['5511988880007'], message: text });
  assertOk(plain);
  assert.equal(await balance(dave.key), 9.8); // 2 credits
  assert.deepEqual(await sentContents(dave.key, String(plain.headers['x-request-id'])), [text]);
  assert.equal((await linksTo(dave.key, LONG_URL)).length, 0);

  const short = await gw.call(dave.key, 'POST', '/messages/sms/send', { receivers: ['5511988887777', '5511988886666'], message: text, shortenLinks: true });
  assertOk(short);
  const [made, ...more] = await linksTo(dave.key, LONG_URL);
  assert.ok(made);
  assert.equal(more.length, 0);
  const expected = `Oferta so hoje: ${BASE}/${made.code} - responda SAIR para sair.`;
  assert.ok([...expected].length <= 160);
  assert.equal(await balance(dave.key), 9.6); // 2 receivers x 1 credit
  assert.deepEqual(await sentContents(dave.key, String(short.headers['x-request-id'])), [expected, expected]);
  assert.equal((await follow(made.code, BROWSER)).headers.location, LONG_URL);

  // shortenLinks: false, or a text without URLs, changes nothing.
  assertOk(await gw.call(dave.key, 'POST', '/messages/sms/send', { receivers: ['5511988887777'], message: text, shortenLinks: false }));
  assertOk(await gw.call(dave.key, 'POST', '/messages/sms/send', { receivers: ['5511988887777'], message: 'sem link', shortenLinks: true }));
  assert.equal((await linksTo(dave.key, LONG_URL)).length, 1);
});

test('shortenLinks: one link per distinct URL of a request; invalid URLs and our own short links are left alone', async () => {
  const erin = await gw.customer({ balance: 10, farePrice: '0.10' });
  const own = `${BASE}/Abcd1234`;
  const text = `A ${LONG_URL} B ${LONG_URL}. C (https://b.example.com/x) D https://user:pw@c.example.com E ${own}`;
  const res = await gw.call(erin.key, 'POST', '/messages/sms/send', { receivers: ['5511977777777'], message: text, shortenLinks: true });
  assertOk(res);
  const links = (await list(erin.key, '?limit=100')).body.object as { code: string; destinationUrl: string }[];
  assert.deepEqual(links.map((l) => l.destinationUrl).sort(), ['https://b.example.com/x', LONG_URL]);
  const code = (url: string) => links.find((l) => l.destinationUrl === url)?.code;
  const [content] = await sentContents(erin.key, String(res.headers['x-request-id']));
  assert.equal(
    content,
    `A ${BASE}/${code(LONG_URL)} B ${BASE}/${code(LONG_URL)}. C (${BASE}/${code('https://b.example.com/x')}) D https://user:pw@c.example.com E ${own}`,
  );
});

test('shortenLinks on a batch send: per-message texts shortened, credits counted on the shortened texts', async () => {
  const fred = await gw.customer({ balance: 10, farePrice: '0.10' });
  const res = await gw.call(fred.key, 'POST', '/messages/sms/batch/send', {
    shortenLinks: true,
    messages: [
      { receiver: '5511966667777', message: `Ola Ana, veja ${LONG_URL}` },
      { receiver: '5511966668888', message: `Ola Bia, veja ${LONG_URL}` },
      { receiver: '5511966669999', message: 'Ola Cid, veja https://example.com/cid' },
    ],
  });
  assertOk(res);
  assert.equal(res.body.object.credits, 3);
  assert.equal(await balance(fred.key), 9.7);
  const [made] = await linksTo(fred.key, LONG_URL);
  assert.ok(made);
  assert.equal((await list(fred.key)).body.totalRecords, 2);
  const contents = (await sentContents(fred.key, res.body.object.requestId)).sort();
  assert.deepEqual(contents.slice(0, 2), [`Ola Ana, veja ${BASE}/${made.code}`, `Ola Bia, veja ${BASE}/${made.code}`]);
  assert.match(contents[2] ?? '', new RegExp(`^Ola Cid, veja ${BASE.replace(/\./g, '\\.')}/[0-9A-Za-z]{8}$`));
});

test('shortenLinks on a refused send (balance, bad field): 400 and no link is left behind', async () => {
  const gil = await gw.customer({ balance: '0.05', farePrice: '0.10' });
  const refused = await gw.call(gil.key, 'POST', '/messages/sms/send', { receivers: ['5511955557777'], message: `Veja ${LONG_URL}`, shortenLinks: true });
  assertFailure(refused, 400);
  const batchRefused = await gw.call(gil.key, 'POST', '/messages/sms/batch/send', {
    shortenLinks: true,
    messages: [{ receiver: '5511955557777', message: `Veja ${LONG_URL}` }],
  });
  assertFailure(batchRefused, 400);
  assertFailure(await gw.call(gil.key, 'POST', '/messages/sms/send', { receivers: ['12'], message: `Veja ${LONG_URL}`, shortenLinks: true }), 400, [
    'receivers[0]',
  ]);
  assertFailure(await gw.call(gil.key, 'POST', '/messages/sms/send', { receivers: ['5511955557777'], message: `Veja ${LONG_URL}`, shortenLinks: 'yes' }), 400, [
    'shortenLinks',
  ]);
  assertFailure(await gw.call(gil.key, 'POST', '/messages/sms/batch/send', { shortenLinks: 1, messages: [{ receiver: '5511955557777', message: 'x' }] }), 400, [
    'shortenLinks',
  ]);
  assert.equal((await list(gil.key)).body.totalRecords, 0);
  assert.equal(await balance(gil.key), 0.05);
});

test('the operations, the redirect and shortenLinks are in the OpenAPI document', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  assert.ok(doc.paths['/short-links'].post && doc.paths['/short-links'].get);
  assert.ok(doc.paths['/short-links/{id}'].put && doc.paths['/short-links/{id}'].delete);
  assert.deepEqual(doc.paths['/s/{code}'].get.security, []);
  for (const path of ['/messages/sms/send', '/messages/sms/batch/send']) {
    assert.equal(doc.paths[path].post.requestBody.content['application/json'].schema.properties.shortenLinks.type, 'boolean', path);
  }
});

test('nothing a client sends produces a 500', async () => {
  const l = await link(alice.key, 'https://example.com/fuzz');
  const values: unknown[] = [
    null,
    true,
    0,
    -1,
    1e308,
    '',
    ' ',
    'x'.repeat(5000),
    'https://a\u0000b.com',
    'https://\u{1F600}.com',
    'https://[::1]/',
    'http://%zz',
    'https://a..b',
    [],
    {},
  ];
  const bodies: unknown[] = [...values, ...values.map((destinationUrl) => ({ destinationUrl }))];
  const ids = ['-1', '0', '1.5', '1e3', '99999999999999999999', '%00', String(l.id)];
  for (const body of bodies) {
    const res = await gw.call(bob.key, 'POST', '/short-links', body);
    assert.ok(res.status < 500, `POST ${JSON.stringify(body).slice(0, 100)} -> ${res.status} ${JSON.stringify(res.body)}`);
    for (const id of ids) {
      const put = await gw.call(bob.key, 'PUT', `/short-links/${id}`, body);
      assert.ok(put.status < 500, `PUT ${id} ${JSON.stringify(body).slice(0, 100)} -> ${put.status} ${JSON.stringify(put.body)}`);
    }
  }
  for (const id of ids) assert.ok((await gw.call(bob.key, 'DELETE', `/short-links/${id}`)).status < 500, id);
  for (const query of ['?skip=1e400', '?limit=%00', '?filter=%00', `?filter=${'%25'.repeat(3000)}`, '?filter=a&filter=b', '?skip[]=1']) {
    const res = await list(bob.key, query);
    assert.ok(res.status < 500, `${query.slice(0, 50)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  }
  for (const code of ['%00', '%ff', '..', '%2e%2e%2f', 'x'.repeat(5000)]) assert.ok((await follow(code, BROWSER)).statusCode < 500, code);
  assert.deepEqual(await listed(alice.key, l.id), l);
});
