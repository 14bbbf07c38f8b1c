import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DIALECT, freshDatabase, openTestStore, startGateway, untilOneWaitsOn, type TestGateway, type Customer } from './helpers.ts';
import { retryDelay } from '../src/events/deliverer.ts';
import { eventsDb, type DeliveryStatus } from '../src/events/tables.ts';

/**
 * Webhooks end to end against a real HTTP receiver on loopback (allowed by
 * GATEWAY_FETCH_ALLOW), with the retry schedule shrunk to milliseconds.
 */

interface Hit {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** HTTP status answered, or 0 when the connection was dropped. */
  answered: number;
}

let gw: TestGateway;
let alice: Customer;
let bob: Customer;
let server: Server;
let base: string;
const hits: Hit[] = [];
/** Per path: what to answer to the n-th request (1-based) on it; default 204. */
const plans = new Map<string, (n: number) => number>();

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;

function flat(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const n = hits.filter((h) => h.path === path).length + 1;
      const status = (plans.get(path) ?? (() => 204))(n);
      hits.push({ path, headers: flat(req), body: Buffer.concat(chunks).toString('utf8'), answered: status });
      if (status === 0) req.socket.destroy();
      else res.writeHead(status).end(status >= 400 ? 'receiver says no' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1', WEBHOOK_RETRY_BASE_MS: '1', WEBHOOK_POLL_MS: '20' });
  alice = await gw.customer({ balance: 100 });
  bob = await gw.customer({ balance: 100 });
});
after(async () => {
  await gw.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const register = (key: string, body: unknown) => gw.call(key, 'POST', '/webhooks', body);
const send = async (key: string, receivers: string[], message: string) => {
  const res = await gw.call(key, 'POST', '/messages/sms/send', { receivers, message });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
};
const delivered = (path: string) => hits.filter((h) => h.path === path && h.answered >= 200 && h.answered < 300);
const events = (path: string) => delivered(path).map((h) => JSON.parse(h.body) as { type: string; timestamp: string; data: any });

/** A delivery row written straight to the store, as the fan-out writes one. */
function deliveryRow(d: { id: string; accountId: number; webhookId: number; status: DeliveryStatus; createdAt: number; dueAt: number }) {
  return {
    id: d.id,
    account_id: d.accountId,
    format: 'standard' as const,
    webhook_id: d.webhookId,
    url: `${base}/rows`,
    event_type: 'message.status' as const,
    event_ref: `test:${d.id}`,
    body: '{}',
    status: d.status,
    attempts: 1,
    due_at: d.dueAt,
    lease_owner: null,
    last_http_status: null,
    last_error: null,
    created_at: d.createdAt,
    last_attempt_at: null,
    delivered_at: null,
  };
}

function assertFailure(res: { status: number; body: any }, status: number, field?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0);
  if (field)
    assert.ok(
      res.body.errors.some((e: string) => e.startsWith(`${field}:`)),
      JSON.stringify(res.body.errors),
    );
}

test('every status change and reply arrives, signed, once, through failed first answers', async () => {
  // The receiver answers 500 first, then drops the connection, then 2xx.
  plans.set('/alice', (n) => (n === 1 ? 500 : n === 2 ? 0 : 200));
  const created = await register(alice.key, { url: `${base}/alice`, topics: ['message.status', 'message.reply'] });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const hook = created.body.object;
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  // Bob's webhook must see none of Alice's events.
  const bobHook = (await register(bob.key, { url: `${base}/bob`, topics: ['message.status', 'message.reply'] })).body.object;

  const receivers = [phone(1), phone(2), phone(3)];
  const requestId = await send(alice.key, receivers, 'Hello from Alice');
  const statusesOf = (to: string) =>
    events('/alice')
      .filter((e) => e.type === 'message.status' && e.data.receiver === to)
      .map((e) => e.data.status)
      .sort();
  await gw.eventually(
    async () => receivers.map(statusesOf),
    (all) => all.every((s) => s.join() === 'DELIVERED,SENT'),
    'SENT and DELIVERED of each message',
  );

  await gw.admin('POST', '/admin/simulator/inbound', { from: `+${phone(2)}`, text: 'Thanks!' });
  const reply = await gw.eventually(
    async () => events('/alice').find((e) => e.type === 'message.reply'),
    (e) => e !== undefined,
    'the reply',
  );
  assert.equal(reply?.data.sender, phone(2));
  assert.equal(reply?.data.content, 'Thanks!');
  assert.equal(typeof reply?.data.receivedAt, 'string');
  assert.equal(reply?.data.message.requestId, requestId);
  assert.equal(reply?.data.message.content, 'Hello from Alice');
  assert.equal(reply?.data.messageId, reply?.data.message.id);

  const status = events('/alice').find((e) => e.type === 'message.status' && e.data.status === 'DELIVERED');
  assert.deepEqual(Object.keys(status?.data ?? {}).sort(), ['custom', 'messageId', 'receiver', 'requestId', 'status', 'statusDetails', 'tag', 'time']);
  assert.equal(status?.data.requestId, requestId);

  // The failures happened, and were retried.
  assert.deepEqual(
    hits
      .filter((h) => h.path === '/alice')
      .slice(0, 2)
      .map((h) => h.answered),
    [500, 0],
  );
  // Every attempt is signed after Standard Webhooks; the library verifies it.
  const wh = new Webhook(hook.secret);
  for (const h of hits.filter((x) => x.path === '/alice')) {
    assert.doesNotThrow(() => wh.verify(h.body, h.headers), `signature of ${h.headers['webhook-id']}`);
    assert.equal(h.headers['content-type'], 'application/json');
  }
  const firstAlice = hits.find((h) => h.path === '/alice');
  assert.throws(() => new Webhook(bobHook.secret).verify(firstAlice?.body ?? '', firstAlice?.headers ?? {}), 'another secret must not verify');
  // Nothing answered 2xx was delivered again; retries kept their webhook-id.
  const ids = delivered('/alice').map((h) => h.headers['webhook-id']);
  assert.equal(new Set(ids).size, ids.length, 'a delivery answered 2xx came again');
  assert.equal(ids.length, 7);
  const failedIds = hits.filter((h) => h.path === '/alice' && h.answered !== 200).map((h) => h.headers['webhook-id']);
  for (const id of failedIds) assert.ok(ids.includes(id), `failed delivery ${id} was not retried to success`);

  // The delivery log shows them all delivered (once the last results are written), the retried ones with their attempts.
  const log = await gw.eventually(
    () => gw.call(alice.key, 'GET', `/webhooks/${hook.id}/deliveries`),
    (r) => r.body.object.every((d: any) => d.status === 'DELIVERED'),
    'the log to show every delivery DELIVERED',
  );
  assert.equal(log.status, 200);
  assert.equal(log.body.totalRecords, 7);
  assert.ok(log.body.object.every((d: any) => d.status === 'DELIVERED' && d.lastHttpStatus === 200 && d.deliveredAt !== null && d.nextAttemptAt === null));
  assert.deepEqual(
    log.body.object.map((d: any) => d.eventType).filter((t: string) => t === 'message.reply'),
    ['message.reply'],
  );
  const retried = log.body.object.filter((d: any) => failedIds.includes(d.id));
  assert.ok(retried.length >= 1 && retried.every((d: any) => d.attempts >= 2));
  const page = await gw.call(alice.key, 'GET', `/webhooks/${hook.id}/deliveries?skip=1&limit=2`);
  assert.equal(page.body.totalRecords, 7);
  assert.deepEqual(
    page.body.object.map((d: any) => d.id),
    log.body.object.slice(1, 3).map((d: any) => d.id),
  );

  assert.equal(hits.filter((h) => h.path === '/bob').length, 0);
  assert.equal((await gw.call(bob.key, 'GET', `/webhooks/${bobHook.id}/deliveries`)).body.totalRecords, 0);
});

test('topics filter: a status-only webhook gets no replies', async () => {
  const carol = await gw.customer({ balance: 10 });
  const hook = (await register(carol.key, { url: `${base}/carol`, topics: ['message.status'] })).body.object;
  assert.deepEqual(hook.topics, ['message.status']);
  await send(carol.key, [phone(20)], 'status only');
  await gw.eventually(
    async () =>
      events('/carol')
        .map((e) => e.data.status)
        .sort()
        .join(),
    (s) => s === 'DELIVERED,SENT',
    'the statuses',
  );
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone(20), text: 'a reply' });
  await gw.eventually(
    () => gw.call(carol.key, 'GET', '/reports/messages/received'),
    (r) => r.body.totalRecords === 1,
    'the reply stored',
  );
  // Once the reply row was fanned out, Carol's webhook would have had a delivery for it.
  await gw.eventually(
    () => eventsDb(gw.core.db.kysely).selectFrom('replies').select('fanned_out').where('sender', '=', phone(20)).executeTakeFirstOrThrow(),
    (r) => r.fanned_out === 1,
    'the reply fanned out',
  );
  const log = await gw.call(carol.key, 'GET', `/webhooks/${hook.id}/deliveries`);
  assert.deepEqual(
    log.body.object.map((d: any) => d.eventType),
    ['message.status', 'message.status'],
  );
});

test('status changes are recorded as events only for accounts with a destination, from the time it is added', async () => {
  const dave = await gw.customer({ balance: 10 });
  const statusLog = async (requestId: string) =>
    (
      await gw.core.db.kysely
        .selectFrom('status_log')
        .innerJoin('messages', 'messages.id', 'status_log.message_id')
        .select('status_log.status')
        .where('messages.request_id', '=', requestId)
        .execute()
    )
      .map((r) => r.status)
      .sort();
  const deliveredOf = (requestId: string) =>
    gw.eventually(
      () => gw.call(dave.key, 'GET', `/reports/messages/sent?requestId=${requestId}`),
      (r) => r.body.object?.[0]?.status === 'DELIVERED',
      'DELIVERED',
    );
  const before = await send(dave.key, [phone(30)], 'nobody listens');
  await deliveredOf(before);
  assert.deepEqual(await statusLog(before), []);

  const hook = (await register(dave.key, { url: `${base}/dave`, topics: ['message.status'] })).body.object;
  const afterwards = await send(dave.key, [phone(31)], 'now somebody does');
  await deliveredOf(afterwards);
  assert.deepEqual(await statusLog(afterwards), ['DELIVERED', 'SENT']);
  await gw.eventually(
    async () =>
      events('/dave')
        .map((e) => `${e.data.receiver} ${e.data.status}`)
        .sort()
        .join(),
    (s) => s === `${phone(31)} DELIVERED,${phone(31)} SENT`,
    'the events after the webhook',
  );
  assert.equal((await gw.call(dave.key, 'DELETE', `/webhooks/${hook.id}`)).status, 200);
});

test('deleting a webhook while attempt results are written does not deadlock with them', {
  skip: DIALECT !== 'postgres' && 'row locks are PostgreSQL only',
}, async () => {
  // A round of attempt results locks its deliveries in id order before writing them. Deleting a webhook must take
  // them in that order too, whatever order it finds them in: here the higher id comes first (older and stored first).
  const erin = await gw.customer({ balance: 10 });
  const hook = (await register(erin.key, { url: `${base}/erin`, topics: ['message.status'] })).body.object;
  const edb = eventsDb(gw.core.db.kysely);
  const row = (id: string, createdAt: number) =>
    deliveryRow({ id, accountId: erin.accountId, webhookId: hook.id, status: 'FAILED', createdAt, dueAt: createdAt });
  const [low, high] = ['deadlock-test-a', 'deadlock-test-b'];
  await edb
    .insertInto('webhook_deliveries')
    .values(row(high, Date.now() - 2000))
    .execute();
  await edb
    .insertInto('webhook_deliveries')
    .values(row(low, Date.now() - 1000))
    .execute();

  let deleted: Promise<{ status: number; body: any }> | undefined;
  await edb.transaction().execute(async (writer) => {
    await writer.selectFrom('webhook_deliveries').select('id').where('id', '=', low).forUpdate().execute();
    deleted = gw.call(erin.key, 'DELETE', `/webhooks/${hook.id}`);
    await untilOneWaitsOn(gw.core.db.kysely, writer);
    await writer.selectFrom('webhook_deliveries').select('id').where('id', '=', high).forUpdate().execute();
  });
  const res = await deleted;
  assert.equal(res?.status, 200, JSON.stringify(res?.body));
  assert.deepEqual(await edb.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute(), []);
});

test('delivered and failed deliveries older than the log keeps are pruned; a row another transaction holds is left, not waited for', async () => {
  const store = await freshDatabase();
  const first = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1' }, {}, store);
  const frank = await first.customer({ balance: 10 });
  const hook = (await first.call(frank.key, 'POST', '/webhooks', { url: `${base}/frank`, topics: ['message.status'] })).body.object;
  await first.close();
  const day = 86_400_000;
  const row = (id: string, status: DeliveryStatus, age: number) =>
    deliveryRow({ id, accountId: frank.accountId, webhookId: hook.id, status, createdAt: Date.now() - age, dueAt: Date.now() + day });
  const side = await openTestStore(store);
  const edb = eventsDb(side.kysely);
  const ids = async () => (await edb.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).orderBy('id').execute()).map((r) => r.id);
  await edb
    .insertInto('webhook_deliveries')
    .values([
      row('old-delivered', 'DELIVERED', 31 * day),
      row('old-failed', 'FAILED', 31 * day),
      row('old-held', 'DELIVERED', 31 * day),
      row('old-pending', 'PENDING', 31 * day),
      row('young-delivered', 'DELIVERED', 29 * day),
    ])
    .execute();
  let second: TestGateway | undefined;
  const prunedAtStart = async () => {
    // The deliverer prunes as it starts: with the log kept 30 days, the old delivered and failed rows go.
    second = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1', WEBHOOK_LOG_DAYS: '30' }, {}, store);
    await second.eventually(ids, (list) => !list.includes('old-delivered') && !list.includes('old-failed'), 'the prune');
  };
  try {
    if (DIALECT === 'postgres') {
      // A transaction holding one of them (a webhook being deleted) does not hold the prune up; that row waits for the next one.
      await edb.transaction().execute(async (tx) => {
        await tx.selectFrom('webhook_deliveries').select('id').where('id', '=', 'old-held').forUpdate().execute();
        await prunedAtStart();
      });
      assert.deepEqual(await ids(), ['old-held', 'old-pending', 'young-delivered']);
    } else {
      await prunedAtStart();
      assert.deepEqual(await ids(), ['old-pending', 'young-delivered']);
    }
  } finally {
    await second?.close();
    await side.close();
    await store.drop();
  }
});

test('a delivery is retried until the retry window has passed, then FAILED', async () => {
  plans.set('/down', () => 503);
  const dave = await gw.customer({ balance: 10 });
  const hook = (await register(dave.key, { url: `${base}/down`, topics: ['message.status'] })).body.object;
  await send(dave.key, [phone(30)], 'nobody listens');
  const log = () => gw.call(dave.key, 'GET', `/webhooks/${hook.id}/deliveries`);
  const first = await gw.eventually(
    log,
    (r) => r.body.object.length === 2 && r.body.object.every((d: any) => d.attempts >= 2 && d.lastHttpStatus === 503),
    'retries of SENT and DELIVERED',
  );
  for (const d of first.body.object) {
    assert.ok(d.status === 'PENDING' || d.status === 'DELIVERING', d.status);
    assert.match(d.lastError, /^HTTP 503: receiver says no/);
  }
  // Age the waiting deliveries past the window (86,400 units of WEBHOOK_RETRY_BASE_MS = 1 ms here) and make them
  // due; one in flight is aged on a later round, once its result is written.
  const age = () =>
    eventsDb(gw.core.db.kysely)
      .updateTable('webhook_deliveries')
      .set({ created_at: Date.now() - 100_000, due_at: Date.now() })
      .where('webhook_id', '=', hook.id)
      .where('status', '=', 'PENDING')
      .execute();
  const done = await gw.eventually(
    async () => {
      await age();
      return log();
    },
    (r) => r.body.object.every((x: any) => x.status === 'FAILED'),
    'FAILED',
  );
  assert.equal(done.body.object.length, 2);
  assert.ok(done.body.object.every((x: any) => x.nextAttemptAt === null && x.deliveredAt === null && x.lastHttpStatus === 503));
});

test('a FAILED delivery sent again: only by its account, only when FAILED, with a fresh schedule, then DELIVERED', async () => {
  let up = false;
  plans.set('/resend', () => (up ? 204 : 503));
  const gus = await gw.customer({ balance: 10 });
  const other = await gw.customer({ balance: 10 });
  const hook = (await register(gus.key, { url: `${base}/resend`, topics: ['message.status'] })).body.object;
  const otherHook = (await register(other.key, { url: 'https://hooks.example.com/other', topics: ['message.status'] })).body.object;
  await send(gus.key, [phone(40)], 'send me again');
  const log = () => gw.call(gus.key, 'GET', `/webhooks/${hook.id}/deliveries`);
  const retry = (key: string | null, hookId: number, deliveryId: string) => gw.call(key, 'POST', `/webhooks/${hookId}/deliveries/${deliveryId}/retry`);
  await gw.eventually(log, (r) => r.body.object.length === 2 && r.body.object.every((d: any) => d.attempts >= 2), 'retried deliveries');
  const failed = await gw.eventually(
    async () => {
      await eventsDb(gw.core.db.kysely)
        .updateTable('webhook_deliveries')
        .set({ created_at: Date.now() - 100_000, due_at: Date.now() })
        .where('webhook_id', '=', hook.id)
        .where('status', '=', 'PENDING')
        .execute();
      return log();
    },
    (r) => r.body.object.every((x: any) => x.status === 'FAILED'),
    'FAILED deliveries',
  );
  const [a, b] = failed.body.object as any[];
  const before = JSON.stringify(failed.body.object);

  // Not the account's webhook or delivery: 404, nothing changed.
  assertFailure(await retry(other.key, hook.id, a.id), 404);
  assertFailure(await retry(other.key, otherHook.id, a.id), 404);
  assertFailure(await retry(gus.key, hook.id, 'no-such-delivery'), 404);
  assertFailure(await retry(gus.key, 999999999, a.id), 404);
  assertFailure(await retry(gus.key, 0, a.id), 400);
  assertFailure(await retry(null, hook.id, a.id), 401);
  assert.equal(JSON.stringify((await log()).body.object), before);

  // Sent again while the receiver still fails: the schedule starts over (retried, not FAILED at once), attempts keep counting.
  const again = await retry(gus.key, hook.id, a.id);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.hasError, false);
  assert.equal(again.body.message, 'The delivery will be sent again.');
  assert.equal(again.body.object.id, a.id);
  assert.equal(again.body.object.status, 'PENDING');
  assert.equal(again.body.object.attempts, a.attempts);
  assert.ok(again.body.object.nextAttemptAt);
  const retried = await gw.eventually(log, (r) => r.body.object.find((d: any) => d.id === a.id).attempts >= a.attempts + 2, 'attempts after the resend');
  assert.notEqual(retried.body.object.find((d: any) => d.id === a.id).status, 'FAILED');
  // A delivery that is not FAILED: 409 naming its status, nothing changed.
  const pending = await retry(gus.key, hook.id, a.id);
  assertFailure(pending, 409);
  assert.match(pending.body.message, /is (PENDING|DELIVERING): only a FAILED delivery can be sent again/);

  // The receiver is back: both are delivered; the untouched one only once it is sent again.
  up = true;
  await gw.eventually(log, (r) => r.body.object.find((d: any) => d.id === a.id).status === 'DELIVERED', 'the first delivered');
  assert.equal((await log()).body.object.find((d: any) => d.id === b.id).status, 'FAILED');
  assert.equal((await retry(gus.key, hook.id, b.id)).status, 200);
  const done = await gw.eventually(log, (r) => r.body.object.find((d: any) => d.id === b.id).status === 'DELIVERED', 'the second delivered');
  const second = done.body.object.find((d: any) => d.id === b.id);
  assert.equal(second.attempts, b.attempts + 1);
  assert.equal(second.lastHttpStatus, 204);
  assert.ok(second.deliveredAt);
  assert.equal(delivered('/resend').length, 2);
  const twice = await retry(gus.key, hook.id, b.id);
  assertFailure(twice, 409);
  assert.equal(twice.body.message, `Delivery ${b.id} is DELIVERED: only a FAILED delivery can be sent again.`);
});

test('the retry schedule: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 12].map((n) => retryDelay(n, 1000) / 1000),
    [5, 30, 120, 600, 1800, 3600, 7200, 7200],
  );
});

test('POST /webhooks: bad input is 400 and registers nothing', async () => {
  const cases: [unknown, string][] = [
    [{ topics: ['message.status'] }, 'url'],
    [{ url: `${base}/x` }, 'topics'],
    [{ url: `${base}/x`, topics: [] }, 'topics'],
    [{ url: `${base}/x`, topics: ['message.sent'] }, 'topics[0]'],
    [{ url: 5, topics: ['message.status'] }, 'url'],
    [{ url: 'not a url', topics: ['message.status'] }, 'url'],
    [{ url: 'ftp://example.com/hook', topics: ['message.status'] }, 'url'],
    [{ url: 'file:///etc/passwd', topics: ['message.status'] }, 'url'],
    [{ url: 'http://10.0.0.1/hook', topics: ['message.status'] }, 'url'],
    [{ url: 'http://169.254.169.254/latest/meta-data', topics: ['message.status'] }, 'url'],
    [{ url: 'http://[::1]/hook', topics: ['message.status'] }, 'url'],
    [{ url: 'http://localhost/hook', topics: ['message.status'] }, 'url'],
    [{ url: 'http://example.com:22/hook', topics: ['message.status'] }, 'url'],
    [{ url: 'https://user:pw@example.com/hook', topics: ['message.status'] }, 'url'],
  ];
  const eve = await gw.customer({ balance: 1 });
  for (const [body, field] of cases) assertFailure(await register(eve.key, body), 400, field);
  assert.equal((await gw.call(eve.key, 'GET', '/webhooks')).body.totalRecords, 0);
});

test("GET /webhooks lists the account's webhooks without secrets; DELETE removes one", async () => {
  const frank = await gw.customer({ balance: 1 });
  const a = (await register(frank.key, { url: 'https://hooks.example.com/a', topics: ['message.reply'] })).body.object;
  const b = (await register(frank.key, { url: 'https://hooks.example.com/b', topics: ['message.status', 'message.reply', 'message.status'] })).body.object;
  assert.deepEqual(b.topics, ['message.status', 'message.reply']);
  assert.notEqual(a.secret, b.secret);
  const list = await gw.call(frank.key, 'GET', '/webhooks');
  assert.equal(list.status, 200);
  assert.equal(list.body.totalRecords, 2);
  assert.deepEqual(list.body.object, [
    { id: a.id, url: 'https://hooks.example.com/a', topics: ['message.reply'], createdAt: a.createdAt },
    { id: b.id, url: 'https://hooks.example.com/b', topics: ['message.status', 'message.reply'], createdAt: b.createdAt },
  ]);
  const del = await gw.call(frank.key, 'DELETE', `/webhooks/${a.id}`);
  assert.equal(del.status, 200);
  assert.equal(del.body.hasError, false);
  assert.equal(del.body.object.id, a.id);
  assert.equal(del.body.object.secret, undefined);
  assert.deepEqual(
    (await gw.call(frank.key, 'GET', '/webhooks')).body.object.map((w: any) => w.id),
    [b.id],
  );
  assertFailure(await gw.call(frank.key, 'DELETE', `/webhooks/${a.id}`), 404);
});

test("another account's webhook ids, and unknown ones, are 404 and change nothing", async () => {
  const owner = await gw.customer({ balance: 1 });
  const other = await gw.customer({ balance: 1 });
  const hook = (await register(owner.key, { url: 'https://hooks.example.com/owner', topics: ['message.status'] })).body.object;
  assertFailure(await gw.call(other.key, 'DELETE', `/webhooks/${hook.id}`), 404);
  assertFailure(await gw.call(other.key, 'GET', `/webhooks/${hook.id}/deliveries`), 404);
  assertFailure(await gw.call(owner.key, 'DELETE', '/webhooks/999999999'), 404);
  assertFailure(await gw.call(owner.key, 'GET', '/webhooks/999999999/deliveries'), 404);
  assertFailure(await gw.call(owner.key, 'DELETE', '/webhooks/abc'), 400);
  assertFailure(await gw.call(owner.key, 'GET', `/webhooks/${hook.id}/deliveries?limit=0`), 400);
  assert.equal((await gw.call(other.key, 'GET', '/webhooks')).body.totalRecords, 0);
  assert.deepEqual(
    (await gw.call(owner.key, 'GET', '/webhooks')).body.object.map((w: any) => w.id),
    [hook.id],
  );
});

test('every webhook operation needs an API key', async () => {
  for (const [method, url, body] of [
    ['POST', '/webhooks', { url: 'https://hooks.example.com/x', topics: ['message.status'] }],
    ['GET', '/webhooks', undefined],
    ['DELETE', '/webhooks/1', undefined],
    ['GET', '/webhooks/1/deliveries', undefined],
    ['POST', '/webhooks/1/deliveries/x/retry', undefined],
  ] as const) {
    assertFailure(await gw.call(null, method, url, body), 401);
    assertFailure(await gw.call('00000000-0000-0000-0000-000000000000', method, url, body), 401);
  }
});

test('the webhook operations are in the OpenAPI document', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  assert.ok(doc.paths['/webhooks']?.post && doc.paths['/webhooks']?.get);
  assert.ok(doc.paths['/webhooks/{id}']?.delete);
  assert.ok(doc.paths['/webhooks/{id}/deliveries']?.get);
  assert.ok(doc.paths['/webhooks/{id}/deliveries/{deliveryId}/retry']?.post);
});

test('legacy callbacks: reply and status payloads, set by the operator', async () => {
  const legacy = await gw.customer({ balance: 10 });
  const set = await gw.admin('PUT', `/admin/accounts/${legacy.accountId}/callbacks`, { replyUrl: `${base}/legacy/reply`, statusUrl: `${base}/legacy/status` });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body, { replyUrl: `${base}/legacy/reply`, statusUrl: `${base}/legacy/status` });
  assert.deepEqual((await gw.admin('GET', `/admin/accounts/${legacy.accountId}/callbacks`)).body, set.body);

  await send(legacy.key, [phone(40)], 'Legacy hello');
  const statuses = await gw.eventually(
    async () => events('/legacy/status') as unknown as Record<string, unknown>[],
    (e) => e.length === 2,
    'two status callbacks',
  );
  assert.deepEqual(statuses.map((s) => s.Status).sort(), ['DELIVERED', 'SENT']);
  for (const s of statuses) {
    assert.deepEqual(Object.keys(s).sort(), ['PhoneNumber', 'Sender', 'Status', 'StatusDate']);
    assert.equal(s.PhoneNumber, phone(40));
    assert.match(String(s.StatusDate), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }
  await gw.admin('POST', '/admin/simulator/inbound', { from: phone(40), text: 'Legacy answer' });
  const [reply] = await gw.eventually(
    async () => events('/legacy/reply') as unknown as Record<string, unknown>[],
    (e) => e.length === 1,
    'the reply callback',
  );
  assert.deepEqual(reply, {
    Sender: phone(40),
    SentContent: 'Legacy hello',
    ReceivedContent: 'Legacy answer',
    ReceiveDate: reply?.ReceiveDate,
    SenderName: null,
  });
  assert.match(String(reply?.ReceiveDate), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00$/);
  assert.ok(delivered('/legacy/reply').every((h) => h.headers['webhook-id'] && !h.headers['webhook-signature']));

  const log = await gw.eventually(
    () => gw.admin('GET', `/admin/accounts/${legacy.accountId}/callbacks/deliveries`),
    (r) => r.body.records.every((d: any) => d.status === 'DELIVERED'),
    'the callback log to show every delivery DELIVERED',
  );
  assert.equal(log.body.total, 3);
  assert.ok(log.body.records.every((d: any) => d.url.startsWith(`${base}/legacy/`)));

  // Turning one off; bad URLs and unknown accounts.
  assert.deepEqual((await gw.admin('PUT', `/admin/accounts/${legacy.accountId}/callbacks`, { replyUrl: null })).body, { replyUrl: null, statusUrl: null });
  assert.equal((await gw.admin('PUT', `/admin/accounts/${legacy.accountId}/callbacks`, { statusUrl: 'http://10.1.2.3/cb' })).status, 400);
  assert.equal((await gw.admin('PUT', `/admin/accounts/${legacy.accountId}/callbacks`, { statusUrl: 'gopher://example.com/' })).status, 400);
  assert.equal((await gw.admin('PUT', `/admin/accounts/${legacy.accountId}/callbacks`, { statusURL: 'https://example.com/' })).status, 400);
  assert.equal((await gw.admin('PUT', '/admin/accounts/999999/callbacks', { statusUrl: 'https://example.com/' })).status, 404);
  assert.equal((await gw.app.inject({ method: 'PUT', url: `/admin/accounts/${legacy.accountId}/callbacks`, payload: {} })).statusCode, 401);
});
