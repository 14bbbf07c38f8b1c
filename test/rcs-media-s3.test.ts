import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from '@20minutes/s3rver';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startGateway, type TestGateway } from './helpers.ts';
import { rcsCustomer, startMediaServer, type MediaServer } from './rcs-fixtures.ts';
import { RbmSim } from '../tools/rbm-sim/server.ts';

/**
 * RCS media in an S3-compatible bucket: a real S3 server on loopback
 * (s3rver: the S3 REST protocol with SigV4 checked, objects on disk), the
 * RBM simulator as the carrier that receives the media URL.
 */

const BUCKET = 'gateway-media';
const PREFIX = 'rcs/';
const TOKEN = 'rbm-media-token';
const SECRET = 'rbm-media-secret';

let s3: S3rver;
let s3Url: string;
let s3Dir: string;
let client: S3Client;
/** Keys written to the bucket, once per PUT. */
const puts: string[] = [];
let media: MediaServer;
let sim: RbmSim;
let dir: string;
/** Bucket, gateway serves /media. */
let gw: TestGateway;
/** Bucket with a public URL: carriers fetch from the bucket. */
let gwPublic: TestGateway;
/** The data directory, for comparison. */
let gwDir: TestGateway;
/** A bucket endpoint with nothing listening. */
let gwDown: TestGateway;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

before(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: BUCKET }] });
  const { port } = await s3.run();
  s3Url = `http://127.0.0.1:${port}`;
  s3.on('event', (e) => {
    for (const r of e.Records) if (r.eventName.startsWith('ObjectCreated')) puts.push(r.s3.object.key);
  });
  client = new S3Client({ endpoint: s3Url, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  media = await startMediaServer(10);
  sim = await new RbmSim({ token: TOKEN, secret: SECRET, deliveryMs: 20 }).start();
  dir = mkdtempSync(join(tmpdir(), 'rcs-s3-'));
  const carriers = join(dir, 'carriers.json');
  writeFileSync(
    carriers,
    JSON.stringify({ rbm: [{ name: 'rbm1', baseUrl: sim.url, agentId: 'a', tokenEnv: 'RBM_MEDIA_TOKEN', webhookSecretEnv: 'RBM_MEDIA_SECRET' }] }),
  );
  process.env.RBM_MEDIA_TOKEN = TOKEN;
  process.env.RBM_MEDIA_SECRET = SECRET;
  const common = { GATEWAY_CARRIERS_FILE: carriers, GATEWAY_FETCH_ALLOW: '127.0.0.1', GATEWAY_PUBLIC_URL: 'https://gw.example.com' };
  const bucket = {
    MEDIA_S3_BUCKET: BUCKET,
    MEDIA_S3_ENDPOINT: s3Url,
    MEDIA_S3_PREFIX: PREFIX,
    MEDIA_S3_ACCESS_KEY_ID: 'S3RVER',
    MEDIA_S3_SECRET_ACCESS_KEY: 'S3RVER',
  };
  gw = await startGateway({ ...common, ...bucket });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  sim.webhookUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/rbm/events/rbm1`;
  // The bucket served by the S3 server itself (path-style), as a public bucket or a CDN in front of it would be.
  gwPublic = await startGateway({ ...common, ...bucket, MEDIA_S3_PUBLIC_URL: `${s3Url}/${BUCKET}` });
  gwDir = await startGateway(common);
  gwDown = await startGateway({ ...common, ...bucket, MEDIA_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}` });
});
after(async () => {
  for (const g of [gw, gwPublic, gwDir, gwDown]) await g?.close();
  client.destroy();
  await s3.close();
  await sim.stop();
  await media.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(s3Dir, { recursive: true, force: true });
});

const phone = (n: number) => `55219${String(n).padStart(4, '0')}5555`;
const card = (image: string) => ({ cardImage: `${media.base}/${image}`, cardTitle: 'Oferta', cardMessage: 'Só hoje' });
const requestIdOf = (res: { status: number; body: unknown; headers: Record<string, unknown> }) => {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
};
const messagesOf = (g: TestGateway, requestId: string) =>
  g.core.db.kysely.selectFrom('messages').select(['id', 'status', 'payload']).where('request_id', '=', requestId).execute();
const delivered = (g: TestGateway, requestId: string) =>
  g.eventually(
    () => messagesOf(g, requestId),
    (rows) => rows.length > 0 && rows.every((m) => m.status === 'DELIVERED'),
    `request ${requestId} DELIVERED`,
  );
/** The image URL the carrier received for a message. */
const fileUrlAtCarrier = (messageId: string | undefined) =>
  sim.received.find((m) => m.messageId === messageId)?.body.contentMessage.richCard?.standaloneCard?.cardContent.media?.contentInfo.fileUrl;
const bucketObject = async (key: string) => {
  const res = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return { bytes: Buffer.from(await (res.Body?.transformToByteArray() ?? new Uint8Array())), contentType: res.ContentType, cacheControl: res.CacheControl };
};
const SERVED_HEADERS = ['content-type', 'content-length', 'cache-control', 'x-content-type-options'];
const served = async (g: TestGateway, name: string) => {
  const res = await g.app.inject({ method: 'GET', url: `/media/${name}` });
  return { status: res.statusCode, bytes: res.rawPayload, headers: Object.fromEntries(SERVED_HEADERS.map((h) => [h, res.headers[h]])) };
};

let photoName = '';

test('a card send stores the processed image in the bucket; the carrier gets our URL, which serves the same bytes', async () => {
  const rcs = await rcsCustomer(gw, { connector: 'rbm1' });
  const requestId = requestIdOf(await gw.call(rcs.key, 'POST', '/messages/rcs/card/send', { receivers: [phone(1)], ...card('photo.jpg') }));
  const [message] = await delivered(gw, requestId);
  const url = fileUrlAtCarrier(message?.id) ?? '';
  const match = /^https:\/\/gw\.example\.com\/media\/([0-9a-f]{64}\.jpg)$/.exec(url);
  assert.ok(match, `the carrier got ${url}`);
  photoName = match[1] ?? '';

  const stored = await bucketObject(`${PREFIX}${photoName}`);
  assert.equal(createHash('sha256').update(stored.bytes).digest('hex'), photoName.slice(0, 64), 'content-addressed');
  assert.equal(stored.contentType, 'image/jpeg');
  assert.equal(stored.cacheControl, 'public, max-age=31536000, immutable');
  const res = await served(gw, photoName);
  assert.equal(res.status, 200);
  assert.ok(res.bytes.equals(stored.bytes), 'GET /media serves the bucket object');
  assert.deepEqual(res.headers, {
    'content-type': 'image/jpeg',
    'content-length': String(stored.bytes.length),
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
  });
  assert.deepEqual(puts, [`${PREFIX}${photoName}`], 'one upload');
  assert.equal(existsSync(join(gw.config.GATEWAY_DATA_DIR, 'media')), false, 'nothing in the data directory');
});

test('the same image again is not uploaded again (another request, a carousel)', async () => {
  const rcs = await rcsCustomer(gw, { connector: 'rbm1' });
  const again = requestIdOf(await gw.call(rcs.key, 'POST', '/messages/rcs/card/send', { receivers: [phone(2)], ...card('photo.jpg') }));
  requestIdOf(await gw.call(rcs.key, 'POST', '/messages/rcs/carousel/send', { receivers: [phone(3)], cards: [card('photo.jpg'), { cardTitle: 'Dois' }] }));
  const [message] = await delivered(gw, again);
  assert.equal(fileUrlAtCarrier(message?.id), `https://gw.example.com/media/${photoName}`);
  assert.deepEqual(puts, [`${PREFIX}${photoName}`], 'still one upload');
});

test('GET /media answers the same from the bucket as from the data directory', async () => {
  const rcs = await rcsCustomer(gwDir);
  const requestId = requestIdOf(await gwDir.call(rcs.key, 'POST', '/messages/rcs/card/send', { receivers: [phone(4)], ...card('photo.jpg') }));
  const [row] = await messagesOf(gwDir, requestId);
  assert.equal(JSON.parse(row?.payload ?? '{}').card.media.url, `https://gw.example.com/media/${photoName}`, 'the same name: re-encoding is deterministic');
  assert.deepEqual(await served(gw, photoName), await served(gwDir, photoName));
  for (const name of [`${'0'.repeat(64)}.jpg`, `${'0'.repeat(64)}.pdf`, 'not-a-name.jpg', '..%2F..%2Fetc%2Fpasswd']) {
    const [fromBucket, fromDir] = [
      await gw.app.inject({ method: 'GET', url: `/media/${name}` }),
      await gwDir.app.inject({ method: 'GET', url: `/media/${name}` }),
    ];
    assert.equal(fromBucket.statusCode, 404, name);
    assert.equal(fromBucket.statusCode, fromDir.statusCode, name);
    assert.equal(fromBucket.body, fromDir.body, name);
  }
});

test('with MEDIA_S3_PUBLIC_URL the carrier is given the bucket URL and can fetch the object there', async () => {
  const rcs = await rcsCustomer(gwPublic);
  const requestId = requestIdOf(await gwPublic.call(rcs.key, 'POST', '/messages/rcs/card/send', { receivers: [phone(5)], ...card('wide.png') }));
  const [row] = await messagesOf(gwPublic, requestId);
  const url: string = JSON.parse(row?.payload ?? '{}').card.media.url;
  assert.match(url, new RegExp(`^${s3Url}/${BUCKET}/${PREFIX}[0-9a-f]{64}\\.png$`));
  const direct = await fetch(url);
  assert.equal(direct.status, 200);
  assert.equal(direct.headers.get('content-type'), 'image/png');
  assert.equal(direct.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const bytes = Buffer.from(await direct.arrayBuffer());
  const name = url.slice(url.lastIndexOf('/') + 1);
  assert.equal(createHash('sha256').update(bytes).digest('hex'), name.slice(0, 64));
  assert.ok((await served(gwPublic, name)).bytes.equals(bytes), '/media serves it too');
  assert.equal(puts.filter((k) => k === `${PREFIX}${name}`).length, 1);
  // The photo another gateway put in the bucket already: found there, not uploaded again.
  const photo = requestIdOf(await gwPublic.call(rcs.key, 'POST', '/messages/rcs/card/send', { receivers: [phone(5)], ...card('photo.jpg') }));
  const [photoRow] = await messagesOf(gwPublic, photo);
  assert.equal(JSON.parse(photoRow?.payload ?? '{}').card.media.url, `${s3Url}/${BUCKET}/${PREFIX}${photoName}`);
  assert.equal(puts.filter((k) => k === `${PREFIX}${photoName}`).length, 1);
});

test('a bucket that cannot be reached: 503 in the envelope, nothing queued or charged; texts still go', async () => {
  const rcs = await rcsCustomer(gwDown, { balance: 10, farePrice: '0.5' });
  const ledger = () => gwDown.core.db.kysely.selectFrom('ledger').select('id').where('account_id', '=', rcs.accountId).execute();
  const messages = () => gwDown.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', rcs.accountId).execute();
  const ledgerBefore = (await ledger()).length;
  for (const [kind, body] of [
    ['card', { receivers: [phone(6)], ...card('photo.jpg') }],
    ['file', { receivers: [phone(6)], file: `${media.base}/doc.pdf`, fileName: 'doc.pdf' }],
    ['carousel', { receivers: [phone(6)], cards: [card('wide.png'), card('photo.jpg')] }],
  ] as const) {
    const res = await gwDown.call(rcs.key, 'POST', `/messages/rcs/${kind}/send`, body);
    assert.equal(res.status, 503, `${kind}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.hasError, true);
    assert.equal(res.body.object, null);
    assert.match(res.body.message, /media storage is unavailable; nothing was sent or charged/);
    assert.deepEqual(res.body.errors, [res.body.message]);
  }
  assert.equal((await gwDown.call(rcs.key, 'GET', '/balance')).body.object.balance, 10);
  assert.equal((await ledger()).length, ledgerBefore, 'no ledger row');
  assert.equal((await messages()).length, 0, 'nothing queued');
  assert.equal((await gwDown.app.inject({ method: 'GET', url: `/media/${photoName}` })).statusCode, 503);
  // Only media needs the bucket.
  requestIdOf(await gwDown.call(rcs.key, 'POST', '/messages/rcs/basic/send', { receivers: [phone(6)], message: 'texto' }));
});
