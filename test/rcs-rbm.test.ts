import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startGateway, type TestGateway } from './helpers.ts';
import { rcsCustomer, startMediaServer, type MediaServer } from './rcs-fixtures.ts';
import { RbmSim } from '../tools/rbm-sim/server.ts';
import { RbmCarrier } from '../src/carriers/rbm/connector.ts';
import { SIGNATURE_HEADER, signBody } from '../src/carriers/rbm/wire.ts';
import type { SubmitResult } from '../src/carriers/carrier.ts';

const TOKEN = 'rbm-test-token';
const SECRET = 'rbm-test-secret';

let gw: TestGateway;
let sim: RbmSim;
let media: MediaServer;
let dir: string;
let rcs: Awaited<ReturnType<typeof rcsCustomer>>;

before(async () => {
  media = await startMediaServer(10);
  sim = await new RbmSim({ token: TOKEN, secret: SECRET, deliveryMs: 20 }).start();
  dir = mkdtempSync(join(tmpdir(), 'rbm-'));
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({ rbm: [{ name: 'rbm1', baseUrl: sim.url, agentId: 'test-agent', tokenEnv: 'RBM_TEST_TOKEN', webhookSecretEnv: 'RBM_TEST_SECRET' }] }),
  );
  process.env.RBM_TEST_TOKEN = TOKEN;
  process.env.RBM_TEST_SECRET = SECRET;
  gw = await startGateway({ GATEWAY_CARRIERS_FILE: file, GATEWAY_FETCH_ALLOW: '127.0.0.1', GATEWAY_PUBLIC_URL: 'https://gw.example.com' });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  sim.webhookUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/rbm/events/rbm1`;
  rcs = await rcsCustomer(gw, { balance: 10, farePrice: '0.5', connector: 'rbm1' });
});
after(async () => {
  await gw.close();
  await sim.stop();
  await media.close();
  rmSync(dir, { recursive: true, force: true });
});

const phone = (n: number) => `55219${String(n).padStart(4, '0')}7777`;
const post = (kind: string, body: unknown) => gw.call(rcs.key, 'POST', `/messages/rcs/${kind}/send`, body);
const sent = async (query: string) => (await gw.call(rcs.key, 'GET', `/reports/messages/sent${query}`)).body;
const balance = async () => (await gw.call(rcs.key, 'GET', '/balance')).body.object.balance as number;
const idsOf = async (requestId: string) =>
  await gw.core.db.kysely.selectFrom('messages').select(['id', 'receiver']).where('request_id', '=', requestId).execute();
const requestIdOf = (res: Awaited<ReturnType<typeof post>>) => {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
};
const statusOf = (requestId: string, status: string) =>
  gw.eventually(
    () => sent(`?requestId=${requestId}`),
    (b) => b.object.length > 0 && b.object.every((m: { status: string }) => m.status === status),
    status,
  );

test('basic text goes out as an RBM agent message with our message id, DELIVERED comes back signed', async () => {
  const requestId = requestIdOf(await post('basic', { receivers: [phone(1)], message: 'Olá pelo RBM' }));
  const report = await statusOf(requestId, 'DELIVERED');
  assert.match(report.object[0].statusDetails, /^rbm:(DELIVERED|READ)$/);
  const [row] = await idsOf(requestId);
  const received = sim.received.find((m) => m.messageId === row?.id);
  assert.ok(received, 'the simulator has the message under our id');
  assert.equal(received.phone, `+${phone(1)}`);
  assert.equal(received.agentId, 'test-agent');
  assert.deepEqual(received.body, { contentMessage: { text: 'Olá pelo RBM' } });
});

test('card and carousel: rich cards with our media URL and open-URL suggestions', async () => {
  const card = {
    cardImage: `${media.base}/photo.jpg`,
    cardTitle: 'Oferta',
    cardMessage: 'Só hoje',
    buttons: [{ text: 'Comprar', url: 'https://shop.example.com/x' }, { text: 'Não' }],
  };
  const single = requestIdOf(await post('card', { receivers: [phone(2)], ...card }));
  const carousel = requestIdOf(await post('carousel', { receivers: [phone(3)], cards: [card, { cardTitle: 'Dois' }] }));
  await statusOf(single, 'DELIVERED');
  await statusOf(carousel, 'DELIVERED');
  const [one] = await idsOf(single);
  const standalone = sim.received.find((m) => m.messageId === one?.id)?.body.contentMessage.richCard?.standaloneCard?.cardContent;
  assert.ok(standalone);
  assert.equal(standalone.title, 'Oferta');
  assert.equal(standalone.description, 'Só hoje');
  assert.match(standalone.media?.contentInfo.fileUrl ?? '', /^https:\/\/gw\.example\.com\/media\/[0-9a-f]{64}\.jpg$/);
  assert.deepEqual(standalone.suggestions, [
    { action: { text: 'Comprar', postbackData: 'button-0', openUrlAction: { url: 'https://shop.example.com/x' } } },
    { reply: { text: 'Não', postbackData: 'button-1' } },
  ]);
  const [two] = await idsOf(carousel);
  const cards = sim.received.find((m) => m.messageId === two?.id)?.body.contentMessage.richCard?.carouselCard?.cardContents;
  assert.equal(cards?.length, 2);
  assert.deepEqual(cards?.[1], { title: 'Dois' });
});

test('a phone without RCS capability: FAILED and refunded', async () => {
  const before = await balance();
  const requestId = requestIdOf(await post('basic', { receivers: [`5521999990009`], message: 'no rcs here' }));
  const report = await statusOf(requestId, 'FAILED');
  assert.match(report.object[0].statusDetails, /no RCS capability/);
  await gw.eventually(balance, (b) => b === before, 'the refund');
});

test('a user reply posted by the platform becomes a received message', async () => {
  const requestId = requestIdOf(await post('basic', { receivers: [phone(4)], message: 'responda' }));
  await statusOf(requestId, 'DELIVERED');
  assert.equal(await sim.userMessage(phone(4), 'SIM, quero'), 200);
  const replies = await gw.eventually(
    () => gw.call(rcs.key, 'GET', '/reports/messages/received'),
    (res) => res.body.object.some((r: { content?: string; message?: string }) => JSON.stringify(r).includes('SIM, quero')),
    'the reply',
  );
  assert.equal(replies.status, 200);
});

test('the event endpoint: a bad or missing signature is 401, an unknown connection 404, nothing applied', async () => {
  const base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  const body = JSON.stringify({ senderPhoneNumber: `+${phone(5)}`, eventType: 'DELIVERED', messageId: 'x', eventId: 'e' });
  const call = (path: string, signature?: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { [SIGNATURE_HEADER]: signature } : {}) }, body });
  assert.equal((await call('/rbm/events/rbm1')).status, 401);
  assert.equal((await call('/rbm/events/rbm1', signBody('wrong', body))).status, 401);
  assert.equal((await call('/rbm/events/simulator', signBody(SECRET, body))).status, 404);
  assert.equal((await call('/rbm/events/nope', signBody(SECRET, body))).status, 404);
  const good = await call('/rbm/events/rbm1', signBody(SECRET, body));
  assert.equal(good.status, 200);
  assert.deepEqual(await good.json(), { handled: 'receipt' });
});

test('a retried submit after a lost answer is idempotent: the platform answers 409 and it counts as sent', async () => {
  const carrier = new RbmCarrier({ name: 'direct', baseUrl: sim.url, agentId: 'a', token: TOKEN, webhookSecret: SECRET, logger: pino({ level: 'silent' }) });
  await carrier.start({ receipt: async () => undefined, inbound: async () => undefined, unfinished: async () => [] });
  const message = {
    id: `retry-${Date.now()}`,
    receiver: phone(6),
    content: 'x',
    channel: 'RCS' as const,
    payload: { kind: 'basic', text: 'once' },
    sender: null,
  };
  const results: SubmitResult[] = [];
  await carrier.submit([message], (_id, r) => results.push(r));
  await carrier.submit([message], (_id, r) => results.push(r));
  assert.deepEqual(results, [
    { ok: true, carrierIds: [message.id] },
    { ok: true, carrierIds: [message.id] },
  ]);
  assert.equal(sim.received.filter((m) => m.messageId === message.id).length, 1);
  const bad = new RbmCarrier({ name: 'bad', baseUrl: sim.url, agentId: 'a', token: 'wrong', webhookSecret: SECRET, logger: pino({ level: 'silent' }) });
  await bad.start({ receipt: async () => undefined, inbound: async () => undefined, unfinished: async () => [] });
  const refused: SubmitResult[] = [];
  await bad.submit([{ ...message, id: 'other' }], (_id, r) => refused.push(r));
  assert.equal(refused[0]?.ok, false);
  await carrier.stop();
  await bad.stop();
});
