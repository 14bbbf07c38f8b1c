import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import sharp from 'sharp';
import { startGateway, type TestGateway } from './helpers.ts';
import { rcsCustomer, startMediaServer, type MediaServer } from './rcs-fixtures.ts';

let gw: TestGateway;
let media: MediaServer;
let rcs: Awaited<ReturnType<typeof rcsCustomer>>;

const MAX_MEDIA = 100_000;

before(async () => {
  media = await startMediaServer(MAX_MEDIA + 1);
  gw = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1', RCS_MEDIA_MAX_BYTES: String(MAX_MEDIA), GATEWAY_PUBLIC_URL: 'https://gw.example.com' });
  rcs = await rcsCustomer(gw, { balance: 100, farePrice: '0.25' });
});
after(async () => {
  await gw.close();
  await media.close();
});

type Res = Awaited<ReturnType<TestGateway['call']>>;
const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const post = (kind: string, body: unknown, key = rcs.key) => gw.call(key, 'POST', `/messages/rcs/${kind}/send`, body);
const sent = async (query: string) => (await gw.call(rcs.key, 'GET', `/reports/messages/sent${query}`)).body;
const balance = async () => (await gw.call(rcs.key, 'GET', '/balance')).body.object.balance as number;
const requestIdOf = (res: Res) => {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.hasError, false);
  assert.equal(res.body.object, null);
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string');
  return id as string;
};
const payloadsOf = async (requestId: string) =>
  (await gw.core.db.kysely.selectFrom('messages').select(['payload', 'content', 'segments', 'channel']).where('request_id', '=', requestId).execute()).map(
    (r) => ({
      ...r,
      payload: JSON.parse(r.payload ?? 'null'),
    }),
  );

function assertFailure(res: Res, fields: string[]) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.equal(res.body.errors.length, fields.length, JSON.stringify(res.body.errors));
  for (const f of fields)
    assert.ok(
      res.body.errors.some((e: string) => e.startsWith(`${f}:`)),
      `no error for ${f}: ${JSON.stringify(res.body.errors)}`,
    );
}

/** Nothing queued, nothing charged. */
async function assertNothingWritten(fn: () => Promise<void>) {
  const count = async () => (await sent('')).totalRecords as number;
  const before = { balance: await balance(), messages: await count() };
  await fn();
  await gw.core.settle();
  assert.deepEqual({ balance: await balance(), messages: await count() }, before);
}

const delivered = (requestId: string, n: number) =>
  gw.eventually(
    () => sent(`?requestId=${requestId}`),
    (b) => b.object.length === n && b.object.every((m: { status: string }) => m.status === 'DELIVERED'),
    'RCS delivery',
  );

test('basic: accepted, one send x farePrice per receiver, delivered through the simulator', async () => {
  const before = await balance();
  const res = await post('basic', { receivers: [phone(1), Number(phone(2))], message: 'Olá RCS', route: rcs.routeId, tag: 't', custom: 'c' });
  const requestId = requestIdOf(res);
  assert.match(res.body.message, /2 message\(s\), 2 credit\(s\)/);
  assert.equal(await balance(), before - 0.5);
  const report = await delivered(requestId, 2);
  for (const m of report.object) {
    assert.equal(m.content, 'Olá RCS');
    assert.equal(m.product, 'RCS');
    assert.equal(m.tag, 't');
    assert.equal(m.custom, 'c');
  }
  for (const p of await payloadsOf(requestId)) {
    assert.deepEqual(p.payload, { kind: 'basic', text: 'Olá RCS' });
    assert.equal(p.segments, 1);
    assert.equal(p.channel, 'RCS');
  }
});

test("basic: a long text is still one send; without route the account's RCS route is used", async () => {
  const before = await balance();
  const res = await post('basic', { receivers: [phone(3)], message: 'x'.repeat(1000) });
  requestIdOf(res);
  assert.equal(await balance(), before - 0.25);
});

test('basic: every problem in one answer, nothing queued or charged', async () => {
  await assertNothingWritten(async () => {
    assertFailure(await post('basic', { receivers: ['12ab'], message: 'x'.repeat(1001) }), ['receivers[0]', 'message']);
    assertFailure(await post('basic', { receivers: [phone(4)] }), ['message']);
    assertFailure(await post('basic', { receivers: [phone(4)], message: '   ' }), ['message']);
    assertFailure(await post('basic', { receivers: ['abc'], message: ' ' }), ['receivers[0]', 'message']);
  });
});

test('an SMS route cannot carry RCS', async () => {
  const sms = await gw.admin('POST', '/admin/routes', {
    displayName: 'SMS',
    productName: 'SMS',
    productId: 1,
    farePrice: '0.1',
    replyFarePrice: '0',
    channel: 'SMS',
    connector: 'simulator',
  });
  await gw.admin('POST', `/admin/accounts/${rcs.accountId}/routes`, { routeId: sms.body.id });
  await assertNothingWritten(async () => {
    assertFailure(await post('basic', { receivers: [phone(5)], message: 'hi', route: sms.body.id }), ['route']);
  });
});

test('file: fetched, stored by sha256, served from our URL, delivered', async () => {
  const res = await post('file', { receivers: [phone(6)], file: `${media.base}/doc.pdf`, fileName: 'boleto.pdf' });
  const requestId = requestIdOf(res);
  const report = await delivered(requestId, 1);
  assert.equal(report.object[0].content, 'boleto.pdf');
  const [stored] = await payloadsOf(requestId);
  assert.equal(stored?.payload.kind, 'file');
  assert.equal(stored?.payload.fileName, 'boleto.pdf');
  assert.equal(stored?.payload.media.contentType, 'application/pdf');
  assert.equal(stored?.payload.media.sourceUrl, `${media.base}/doc.pdf`);
  assert.match(stored?.payload.media.url, /^https:\/\/gw\.example\.com\/media\/[0-9a-f]{64}\.pdf$/);
  const path = new URL(stored?.payload.media.url).pathname;
  const served = await gw.app.inject({ method: 'GET', url: path });
  assert.equal(served.statusCode, 200);
  assert.equal(served.headers['content-type'], 'application/pdf');
  assert.match(served.body, /^%PDF-1\.4/);
  assert.equal((await gw.app.inject({ method: 'GET', url: `/media/${'0'.repeat(64)}.pdf` })).statusCode, 404);
  assert.equal((await gw.app.inject({ method: 'GET', url: '/media/..%2F..%2Fetc%2Fpasswd' })).statusCode, 404);
});

test('file: wrong type, missing, too large, not http(s): 400, nothing charged', async () => {
  await assertNothingWritten(async () => {
    assertFailure(await post('file', { receivers: [phone(7)], file: `${media.base}/page.html`, fileName: 'a' }), ['file']);
    assertFailure(await post('file', { receivers: [phone(7)], file: `${media.base}/missing`, fileName: 'a' }), ['file']);
    assertFailure(await post('file', { receivers: [phone(7)], file: `${media.base}/big.pdf`, fileName: 'a' }), ['file']);
    assertFailure(await post('file', { receivers: [phone(7)], file: 'ftp://example.com/a.pdf', fileName: '' }), ['file', 'fileName']);
  });
});

test('card: image shrunk to the card limit and re-encoded, buttons as suggestions, delivered', async () => {
  const buttons = [{ text: 'Site', url: 'https://example.com/a' }, { text: 'Ok' }];
  const res = await post('card', { receivers: [phone(8)], cardImage: `${media.base}/wide.png`, cardTitle: 'Promo', cardMessage: 'Desconto', buttons });
  const requestId = requestIdOf(res);
  const report = await delivered(requestId, 1);
  assert.equal(report.object[0].content, 'Promo');
  const [stored] = await payloadsOf(requestId);
  const card = stored?.payload.card;
  assert.equal(stored?.payload.kind, 'card');
  assert.equal(card.title, 'Promo');
  assert.equal(card.description, 'Desconto');
  assert.deepEqual(card.suggestions, [
    { text: 'Site', url: 'https://example.com/a' },
    { text: 'Ok', url: null },
  ]);
  assert.equal(card.media.contentType, 'image/png');
  assert.equal(card.media.width, 1440);
  assert.equal(card.media.height, 720);
  const served = await gw.app.inject({ method: 'GET', url: new URL(card.media.url).pathname });
  assert.equal(served.statusCode, 200);
  const meta = await sharp(served.rawPayload).metadata();
  assert.equal(meta.format, 'png');
  assert.equal(meta.width, 1440);
});

test('card: text only is a card; no image and no text, too many buttons, bad button url, long title: one error each', async () => {
  requestIdOf(await post('card', { receivers: [phone(9)], cardMessage: 'just text' }));
  await assertNothingWritten(async () => {
    assertFailure(await post('card', { receivers: [phone(9)], cardTitle: ' ' }), ['cardImage']);
    const five = Array.from({ length: 5 }, (_, i) => ({ text: `b${i}`, url: 'https://example.com' }));
    assertFailure(await post('card', { receivers: [phone(9)], cardTitle: 't'.repeat(201), cardMessage: 'm'.repeat(2001), buttons: five }), [
      'cardTitle',
      'cardMessage',
      'buttons',
    ]);
    assertFailure(
      await post('card', { receivers: [phone(9)], cardTitle: 'x', buttons: [{ text: 'js', url: 'javascript:alert(1)' }, { url: 'https://example.com' }] }),
      ['buttons[0].url', 'buttons[1].text'],
    );
    assertFailure(await post('card', { receivers: [phone(9)], cardImage: `${media.base}/broken.png`, cardTitle: 'x' }), ['cardImage']);
    assertFailure(await post('card', { receivers: [phone(9)], cardImage: `${media.base}/doc.pdf`, cardTitle: 'x' }), ['cardImage']);
  });
});

test('carousel: 2..10 cards, JPEG re-encoded, content "carousel of N cards"', async () => {
  const card = (i: number) => ({
    cardImage: `${media.base}/photo.jpg`,
    cardTitle: `Card ${i}`,
    cardMessage: 'text',
    buttons: [{ text: 'Ver', url: `https://example.com/${i}` }],
  });
  const before = await balance();
  const res = await post('carousel', { receivers: [phone(10), phone(11)], cards: [card(1), card(2), card(3)] });
  const requestId = requestIdOf(res);
  assert.equal(await balance(), before - 0.5);
  const report = await delivered(requestId, 2);
  assert.equal(report.object[0].content, 'carousel of 3 cards');
  const [stored] = await payloadsOf(requestId);
  assert.equal(stored?.payload.kind, 'carousel');
  assert.equal(stored?.payload.cards.length, 3);
  assert.equal(stored?.payload.cards[0].media.contentType, 'image/jpeg');
  assert.equal(stored?.payload.cards[0].media.width, 800);
  assert.equal(media.hits.filter((h) => h === '/photo.jpg').length, 1, 'the same URL is fetched once per request');
});

test('carousel: too few, too many, an empty card, a bad image: 400, nothing charged', async () => {
  const ok = { cardTitle: 'ok' };
  await assertNothingWritten(async () => {
    assertFailure(await post('carousel', { receivers: [phone(12)], cards: [ok] }), ['cards']);
    assertFailure(await post('carousel', { receivers: [phone(12)], cards: Array.from({ length: 11 }, () => ok) }), ['cards']);
    assertFailure(await post('carousel', { receivers: [phone(12)], cards: [ok, {}, ok, { cardMessage: '' }] }), ['cards[1].cardImage', 'cards[3].cardImage']);
    assertFailure(await post('carousel', { receivers: [phone(12)], cards: [ok, { cardImage: `${media.base}/missing` }] }), ['cards[1].cardImage']);
  });
});

test('SSRF: loopback not on the allow-list, private addresses and redirects to them are refused with 400', async () => {
  await assertNothingWritten(async () => {
    assertFailure(await post('card', { receivers: [phone(13)], cardImage: `http://[::1]:${media.port}/wide.png`, cardTitle: 'x' }), ['cardImage']);
    assertFailure(await post('file', { receivers: [phone(13)], file: 'http://10.0.0.1/a.pdf', fileName: 'a' }), ['file']);
    assertFailure(await post('file', { receivers: [phone(13)], file: 'http://169.254.169.254/latest/meta-data', fileName: 'a' }), ['file']);
    assertFailure(await post('card', { receivers: [phone(13)], cardImage: `${media.base}/to-private`, cardTitle: 'x' }), ['cardImage']);
  });
});

test('scheduled RCS is SCHEDULED and cancellable with a refund; insufficient balance refuses the whole request', async () => {
  const before = await balance();
  const at = DateTime.now().setZone('America/Sao_Paulo').plus({ hours: 2 });
  const res = await post('basic', { receivers: [phone(14), phone(15)], message: 'later', scheduleDate: at.toFormat('yyyy-MM-dd HH:mm:ss') });
  const requestId = requestIdOf(res);
  assert.match(res.body.message, /^Scheduled/);
  assert.ok((await sent(`?requestId=${requestId}`)).object.every((m: { status: string }) => m.status === 'SCHEDULED'));
  assert.equal((await gw.call(rcs.key, 'POST', '/messages/request/cancel', { requestId })).status, 200);
  assert.ok((await sent(`?requestId=${requestId}`)).object.every((m: { status: string }) => m.status === 'CANCELLED'));
  assert.equal(await balance(), before);

  const poor = await rcsCustomer(gw, { balance: 0.3, farePrice: '0.25' });
  const refused = await post('basic', { receivers: [phone(16), phone(17)], message: 'hi' }, poor.key);
  assert.equal(refused.status, 400);
  assert.equal((await gw.call(poor.key, 'GET', '/balance')).body.object.balance, 0.3);
});

test('the four RCS operations are in the OpenAPI document', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { post?: unknown }> };
  for (const kind of ['basic', 'file', 'card', 'carousel']) assert.ok(doc.paths[`/messages/rcs/${kind}/send`]?.post, kind);
});
