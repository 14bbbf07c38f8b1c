import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;
let bob: Customer;

const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const micros = (n: number) => Math.round(n * 1_000_000);
const FINAL = ['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED'];
const REQUESTS_PATHS = ['/api/reports/messages/requests', '/reports/messages/requests'] as const;
const CANCEL_PATHS = ['/api/messages/request/cancel', '/messages/request/cancel'] as const;

const get = (key: string | null, url: string) => gw.call(key, 'GET', url);
const sent = async (key: string, query = '') => {
  const res = await get(key, `/reports/messages/sent${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
};
const received = async (key: string, query = '') => {
  const res = await get(key, `/reports/messages/received${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
};
const requests = async (key: string, query = '', path: string = REQUESTS_PATHS[0]) => {
  const res = await get(key, `${path}${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
};
const balance = async (key: string): Promise<number> => (await get(key, '/balance')).body.object.balance;
const cancel = (key: string | null, requestId: unknown, path: string = CANCEL_PATHS[0]) => gw.call(key, 'POST', path, { requestId });

async function send(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await gw.call(key, 'POST', '/messages/sms/send', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
}
const inDays = (days: number) => DateTime.now().plus({ days }).startOf('second').toUTC().toISO() as string;

async function settled(key: string, requestId: string) {
  return (
    await gw.eventually(
      () => sent(key, `?requestId=${requestId}`),
      (b) => b.object.length > 0 && b.object.every((m: any) => FINAL.includes(m.status)),
      `final statuses of ${requestId}`,
    )
  ).object;
}

function assertFailure(res: { status: number; body: any }, status: number, field?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.equal(res.body.totalRecords, 0);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0);
  if (field) {
    assert.equal(res.body.errors.length, 1, JSON.stringify(res.body.errors));
    assert.ok(res.body.errors[0].startsWith(`${field}:`), JSON.stringify(res.body.errors));
  }
}

const SENT_FIELDS = [
  'content',
  'createdAt',
  'custom',
  'id',
  'product',
  'receiver',
  'requestId',
  'route',
  'schedule',
  'sentAt',
  'status',
  'statusDetails',
  'tag',
];
const RECEIVED_FIELDS = ['content', 'messageId', 'receivedAt', 'sender'];
const REQUEST_FIELDS = [
  'content',
  'createdAt',
  'custom',
  'product',
  'productId',
  'requestCount',
  'requestId',
  'route',
  'routeId',
  'schedule',
  'sentAt',
  'tag',
  'userId',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// Alice's fixed data set for the sent report.
const r: Record<string, string> = {};

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 1000, farePrice: '0.10', replyFarePrice: '0.02' });
  bob = await gw.customer({ balance: 1000, farePrice: '0.10', replyFarePrice: '0.02' });
  r.hello = await send(alice.key, { receivers: [phone(1), phone(2)], message: 'Hello World', tag: 'promo', custom: 'c1' });
  r.percent = await send(alice.key, { receivers: [phone(3)], message: 'Other text 100%', tag: 'alert', custom: 'c2' });
  r.outcomes = await send(alice.key, { receivers: ['5511987650003', '5511987650001'], message: '1000 reasons a_b', tag: 'promo', custom: 'c2' });
  r.scheduled = await send(alice.key, { receivers: [phone(4)], message: 'axb later', tag: 'sched', scheduleDate: inDays(2) });
  for (const id of [r.hello, r.percent, r.outcomes]) await settled(alice.key, id as string);
});
after(() => gw.close());

// ---------------------------------------------------------------- sent report

test('sent report: every message of the account, newest first, with the fields in SENT_FIELDS', async () => {
  const report = await sent(alice.key);
  assert.equal(report.hasError, false);
  assert.deepEqual(report.errors, []);
  assert.equal(report.totalRecords, 6);
  assert.equal(report.object.length, 6);
  for (const m of report.object) assert.deepEqual(Object.keys(m).sort(), SENT_FIELDS);
  const created = report.object.map((m: any) => Date.parse(m.createdAt));
  assert.deepEqual(
    created,
    [...created].sort((a, b) => b - a),
    'newest first',
  );
  assert.equal(report.object[0].requestId, r.scheduled);
  assert.deepEqual(
    report.object.slice(4).map((m: any) => m.requestId),
    [r.hello, r.hello],
  );

  const hello = report.object.find((m: any) => m.receiver === phone(1));
  assert.match(hello.id, /^[0-9a-f-]{36}$/);
  assert.equal(hello.content, 'Hello World');
  assert.equal(hello.requestId, r.hello);
  assert.equal(hello.status, 'DELIVERED');
  assert.equal(hello.tag, 'promo');
  assert.equal(hello.custom, 'c1');
  assert.equal(hello.product, 'SMS');
  assert.equal(hello.route, 'SMS Simulator');
  for (const f of ['createdAt', 'sentAt', 'schedule']) assert.match(hello[f], ISO, f);
  const later = report.object[0];
  assert.equal(later.status, 'SCHEDULED');
  assert.equal(later.sentAt, null);
  assert.equal(later.tag, 'sched');
  assert.equal(later.custom, null);
});

test('sent report filters: receiver, content, custom, tag, requestId', async () => {
  const ids = async (query: string) => (await sent(alice.key, query)).object.map((m: any) => m.receiver).sort();
  assert.deepEqual(await ids(`?receiver=${phone(3)}`), [phone(3)]);
  assert.deepEqual(await ids(`?receiver=%2B${phone(3)}`), [phone(3)]);
  assert.deepEqual(await ids('?receiver=5511999999999'), []);
  assert.deepEqual(await ids('?content=hello'), [phone(1), phone(2)], 'content is a case-insensitive substring');
  assert.deepEqual(await ids('?content=WORLD'), [phone(1), phone(2)]);
  assert.deepEqual(await ids('?content=100%25'), [phone(3)], '% is a literal, not a wildcard');
  assert.deepEqual(await ids('?content=a_b'), ['5511987650001', '5511987650003'], '_ is a literal, not a wildcard');
  assert.deepEqual(await ids('?custom=c2'), [phone(3), '5511987650001', '5511987650003']);
  assert.deepEqual(await ids('?custom=c'), [], 'custom is an exact match');
  assert.deepEqual(await ids('?tag=promo'), [phone(1), phone(2), '5511987650001', '5511987650003']);
  assert.deepEqual(await ids('?tag=nope'), []);
  assert.deepEqual(await ids(`?requestId=${r.percent}`), [phone(3)]);
  assert.deepEqual(await ids(`?requestId=${(r.percent as string).toUpperCase()}`), [phone(3)], 'a UUID is case-insensitive');
  assert.deepEqual(await ids(`?requestId=${crypto.randomUUID()}`), []);
  assert.deepEqual(await ids('?requestId=not-a-uuid'), []);
  assert.deepEqual(await ids('?tag=promo&custom=c2'), ['5511987650001', '5511987650003']);
  const filtered = await sent(alice.key, '?tag=promo&limit=1');
  assert.equal(filtered.totalRecords, 4, 'totalRecords counts the filtered records, not the page');
  assert.equal(filtered.object.length, 1);
});

test('sent report filter statuses: names, comma-separated or repeated, any case; empty means all', async () => {
  const statuses = async (query: string) => (await sent(alice.key, query)).object.map((m: any) => m.status).sort();
  assert.deepEqual(await statuses('?statuses=FAILED'), ['FAILED']);
  assert.deepEqual(await statuses('?statuses=FAILED,UNDELIVERED'), ['FAILED', 'UNDELIVERED']);
  assert.deepEqual(await statuses('?statuses=FAILED&statuses=SCHEDULED'), ['FAILED', 'SCHEDULED']);
  assert.deepEqual(await statuses('?statuses=delivered'), ['DELIVERED', 'DELIVERED', 'DELIVERED']);
  assert.deepEqual(await statuses('?statuses=CANCELLED'), []);
  assert.deepEqual(await statuses('?statuses=DELIVERED&tag=promo'), ['DELIVERED', 'DELIVERED']);
  assert.equal((await sent(alice.key, '?statuses=')).totalRecords, 6);
  assert.equal((await sent(alice.key, '?statuses=,')).totalRecords, 6);
});

test('sent report dates: startDate/endDate as UTC days or ISO timestamps', async () => {
  const all = (await sent(alice.key)).object;
  const oldest = DateTime.fromISO(all[all.length - 1].createdAt, { zone: 'utc' });
  const newest = DateTime.fromISO(all[0].createdAt, { zone: 'utc' });
  const day = (d: DateTime) => d.toFormat('yyyy-MM-dd');
  const count = async (query: string) => (await sent(alice.key, query)).totalRecords;
  assert.equal(await count(`?startDate=${day(oldest)}`), 6);
  assert.equal(await count(`?endDate=${day(newest)}`), 6, 'endDate covers its whole day');
  assert.equal(await count(`?startDate=${day(oldest)}&endDate=${day(newest)}`), 6);
  assert.equal(await count(`?startDate=${day(newest.plus({ days: 1 }))}`), 0);
  assert.equal(await count(`?endDate=${day(oldest.minus({ days: 1 }))}`), 0);
  assert.equal(await count(`?startDate=${encodeURIComponent(oldest.minus({ hours: 1 }).toISO() as string)}`), 6);
  assert.equal(await count(`?startDate=${encodeURIComponent(newest.plus({ milliseconds: 1 }).toISO() as string)}`), 0);
  assert.equal(await count(`?endDate=${encodeURIComponent(newest.toISO() as string)}`), 6);
});

test('sent report paging: skip and limit, totalRecords is the total', async () => {
  const all = (await sent(alice.key)).object.map((m: any) => m.id);
  const pages: string[] = [];
  for (const skip of [0, 2, 4]) {
    const page = await sent(alice.key, `?skip=${skip}&limit=2`);
    assert.equal(page.totalRecords, 6);
    assert.equal(page.object.length, 2);
    pages.push(...page.object.map((m: any) => m.id));
  }
  assert.deepEqual(pages, all);
  const beyond = await sent(alice.key, '?skip=6');
  assert.deepEqual([beyond.totalRecords, beyond.object.length], [6, 0]);
  assert.equal((await sent(alice.key, '?limit=1000')).object.length, 6);
  assert.equal((await sent(alice.key, `?skip=${Number.MAX_SAFE_INTEGER}`)).object.length, 0);
});

test('sent report: bad parameters are 400 naming the parameter', async () => {
  const cases: [string, string][] = [
    ['startDate=2024-13-01', 'startDate'],
    ['startDate=yesterday', 'startDate'],
    ['startDate=01/02/2024', 'startDate'],
    ['endDate=abc', 'endDate'],
    ['startDate=2030-01-02&endDate=2030-01-01', 'endDate'],
    ['statuses=FOO', 'statuses'],
    ['statuses=SENT,NOPE', 'statuses'],
    ['limit=1001', 'limit'],
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['skip=-1', 'skip'],
    ['skip=1.5', 'skip'],
    ['skip=1e20', 'skip'],
    ['skip=99999999999999999999', 'skip'],
    ['tag=a&tag=b', 'tag'],
    ['receiver=%00', 'receiver'],
    ['content=a%00', 'content'],
  ];
  for (const [query, field] of cases) assertFailure(await get(alice.key, `/reports/messages/sent?${query}`), 400, field);
  const many = await get(alice.key, '/reports/messages/sent?limit=5000&skip=-1');
  assertFailure(many, 400);
  assert.equal(many.body.errors.length, 2);
});

test('reports need an API key: 401', async () => {
  for (const url of ['/reports/messages/sent', '/reports/messages/received', ...REQUESTS_PATHS]) {
    assertFailure(await get(null, url), 401);
    assertFailure(await get(crypto.randomUUID(), url), 401);
  }
});

// ------------------------------------------------------------ received report

test('a reply is matched to the latest message sent to that number and charged replyFarePrice', async () => {
  const n = phone(20);
  await settled(alice.key, await send(alice.key, { receivers: [n], message: 'first' }));
  const second = await settled(alice.key, await send(alice.key, { receivers: [n], message: 'second' }));
  const before = await balance(alice.key);
  const count = (await received(alice.key)).totalRecords;

  const res = await gw.admin('POST', '/admin/simulator/inbound', { from: n, text: 'Yes please' });
  assert.equal(res.status, 202);
  const report = await gw.eventually(
    () => received(alice.key),
    (b) => b.totalRecords === count + 1,
    'the reply',
  );
  const reply = report.object[0];
  assert.deepEqual(Object.keys(reply).sort(), RECEIVED_FIELDS);
  assert.equal(reply.sender, n);
  assert.equal(reply.content, 'Yes please');
  assert.equal(reply.messageId, second[0].id);
  assert.match(reply.receivedAt, ISO);
  assert.equal(micros(before) - micros(await balance(alice.key)), 20_000, 'replyFarePrice 0.02');
});

test('a reply with a leading + is stored by digits; a scheduled message does not attract replies', async () => {
  const n = phone(21);
  const [delivered] = await settled(alice.key, await send(alice.key, { receivers: [n], message: 'now' }));
  await send(alice.key, { receivers: [n], message: 'tomorrow', scheduleDate: inDays(1) });
  const count = (await received(alice.key)).totalRecords;
  await gw.admin('POST', '/admin/simulator/inbound', { from: `+${n}`, text: 'plus' });
  const report = await gw.eventually(
    () => received(alice.key),
    (b) => b.totalRecords === count + 1,
    'the reply',
  );
  assert.equal(report.object[0].sender, n);
  assert.equal(report.object[0].messageId, delivered.id);
});

test('a reply goes to the account that sent to the number last, and only to it', async () => {
  const n = phone(22);
  await settled(alice.key, await send(alice.key, { receivers: [n], message: 'alice first' }));
  const [bobs] = await settled(bob.key, await send(bob.key, { receivers: [n], message: 'bob later' }));
  const aliceBefore = { balance: await balance(alice.key), replies: (await received(alice.key)).totalRecords };
  const bobBalance = await balance(bob.key);

  await gw.admin('POST', '/admin/simulator/inbound', { from: n, text: 'for bob' });
  const report = await gw.eventually(
    () => received(bob.key, `?sender=${n}`),
    (b) => b.totalRecords === 1,
    "bob's reply",
  );
  assert.equal(report.object[0].messageId, bobs.id);
  assert.equal(micros(bobBalance) - micros(await balance(bob.key)), 20_000);
  assert.deepEqual({ balance: await balance(alice.key), replies: (await received(alice.key)).totalRecords }, aliceBefore);
  assert.equal((await received(alice.key, '?content=for%20bob')).totalRecords, 0);
});

test('a text from a number nobody sent to is kept unmatched: no report shows it, nobody pays', async () => {
  const n = phone(29);
  const before = {
    alice: await balance(alice.key),
    bob: await balance(bob.key),
    ar: (await received(alice.key)).totalRecords,
    br: (await received(bob.key)).totalRecords,
  };
  await gw.admin('POST', '/admin/simulator/inbound', { from: n, text: 'who is this' });
  await gw.eventually(
    () => gw.core.db.kysely.selectFrom('replies').select(['account_id']).where('sender', '=', n).execute(),
    (rows) => rows.length === 1,
    'the unmatched text to be stored',
  );
  const after = {
    alice: await balance(alice.key),
    bob: await balance(bob.key),
    ar: (await received(alice.key)).totalRecords,
    br: (await received(bob.key)).totalRecords,
  };
  assert.deepEqual(after, before);
});

test('received report filters, paging and bad parameters', async () => {
  const n = phone(23);
  await settled(alice.key, await send(alice.key, { receivers: [n], message: 'ask' }));
  const count = (await received(alice.key)).totalRecords;
  for (const text of ['Alpha one', 'beta two', 'ALPHA three']) {
    await gw.admin('POST', '/admin/simulator/inbound', { from: n, text });
    await gw.eventually(
      () => received(alice.key),
      (b) => b.object.some((x: any) => x.content === text),
      `reply ${text}`,
    );
  }
  const mine = await received(alice.key, `?sender=${n}`);
  assert.equal(mine.totalRecords, 3);
  assert.deepEqual(
    mine.object.map((x: any) => x.content),
    ['ALPHA three', 'beta two', 'Alpha one'],
    'newest first',
  );
  assert.deepEqual((await received(alice.key, `?sender=%2B${n}`)).totalRecords, 3);
  assert.deepEqual(
    (await received(alice.key, '?content=alpha')).object.map((x: any) => x.content),
    ['ALPHA three', 'Alpha one'],
  );
  const page = await received(alice.key, `?sender=${n}&skip=1&limit=1`);
  assert.deepEqual([page.totalRecords, page.object.map((x: any) => x.content)], [3, ['beta two']]);
  assert.equal((await received(alice.key)).totalRecords, count + 3);
  const today = DateTime.fromISO(mine.object[0].receivedAt, { zone: 'utc' });
  assert.equal((await received(alice.key, `?sender=${n}&startDate=${today.toFormat('yyyy-MM-dd')}`)).totalRecords, 3);
  assert.equal((await received(alice.key, `?sender=${n}&startDate=${today.plus({ days: 1 }).toFormat('yyyy-MM-dd')}`)).totalRecords, 0);
  assert.equal((await received(alice.key, `?sender=${n}&endDate=${today.minus({ days: 1 }).toFormat('yyyy-MM-dd')}`)).totalRecords, 0);
  for (const [query, field] of [
    ['startDate=nope', 'startDate'],
    ['endDate=2024-02-30', 'endDate'],
    ['limit=1001', 'limit'],
    ['skip=-3', 'skip'],
    ['sender=%00', 'sender'],
  ]) {
    assertFailure(await get(alice.key, `/reports/messages/received?${query}`), 400, field);
  }
});

// ------------------------------------------------------------ requests report

test('requests report: one row per request, schedule then createdAt descending, same on both paths', async () => {
  const carol = await gw.customer({ balance: 100 });
  const id: Record<string, string> = {};
  id.i1 = await send(carol.key, { receivers: [phone(40), phone(41)], message: 'first immediate', tag: 't1', custom: 'x1' });
  id.i2 = await send(carol.key, { receivers: [phone(42)], message: 'second immediate', tag: 't2' });
  const far = inDays(2);
  id.s1 = await send(carol.key, { receivers: [phone(43)], message: 'sched far', scheduleDate: far });
  id.s2 = await send(carol.key, { receivers: [phone(44)], message: 'sched near', scheduleDate: inDays(1) });
  const same = inDays(3);
  id.s3 = await send(carol.key, { receivers: [phone(45)], message: 'same time a', scheduleDate: same });
  id.s4 = await send(carol.key, { receivers: [phone(46)], message: 'same time b', scheduleDate: same });
  for (const k of ['i1', 'i2']) await settled(carol.key, id[k] as string);

  const report = await requests(carol.key);
  assert.equal(report.hasError, false);
  assert.equal(report.totalRecords, 6);
  assert.deepEqual(
    report.object.map((x: any) => x.requestId),
    [id.s4, id.s3, id.s1, id.s2, id.i2, id.i1],
  );
  assert.deepEqual(await requests(carol.key, '', REQUESTS_PATHS[1]), report, 'the path without /api answers the same');

  for (const x of report.object) assert.deepEqual(Object.keys(x).sort(), REQUEST_FIELDS);
  const i1 = report.object.find((x: any) => x.requestId === id.i1);
  assert.deepEqual(
    { ...i1, createdAt: undefined, sentAt: undefined, schedule: undefined },
    {
      userId: carol.accountId,
      content: 'first immediate',
      createdAt: undefined,
      sentAt: undefined,
      requestCount: 2,
      requestId: id.i1,
      schedule: undefined,
      custom: 'x1',
      tag: 't1',
      productId: 1,
      product: 'SMS',
      routeId: carol.routeId,
      route: 'SMS Simulator',
    },
  );
  assert.match(i1.createdAt, ISO);
  assert.match(i1.sentAt, ISO);
  assert.ok(Date.parse(i1.sentAt) >= Date.parse(i1.createdAt));
  const s1 = report.object.find((x: any) => x.requestId === id.s1);
  assert.equal(s1.sentAt, null);
  assert.equal(s1.schedule, new Date(Date.parse(far)).toISOString());
  assert.equal(report.object[0].schedule, new Date(Date.parse(same)).toISOString());

  for (const path of REQUESTS_PATHS) {
    const page = await requests(carol.key, '?skip=2&limit=2', path);
    assert.equal(page.totalRecords, 6, 'totalRecords is the total, not the page');
    assert.deepEqual(
      page.object.map((x: any) => x.requestId),
      [id.s1, id.s2],
    );
    const q = async (query: string) => (await requests(carol.key, query, path)).object.map((x: any) => x.requestId);
    assert.deepEqual(await q('?content=IMMEDIATE'), [id.i2, id.i1]);
    assert.deepEqual(await q('?tag=t1'), [id.i1]);
    assert.deepEqual(await q('?custom=x1'), [id.i1]);
    assert.deepEqual(await q(`?requestId=${id.s1}`), [id.s1]);
    assert.deepEqual(await q(`?requestId=${(id.s1 as string).toUpperCase()}`), [id.s1]);
    assert.deepEqual(await q(`?requestId=${crypto.randomUUID()}`), []);
    assert.deepEqual(await q('?content=same&limit=1'), [id.s4]);
    assert.equal((await requests(carol.key, '?content=same&limit=1', path)).totalRecords, 2);
  }
});

test('requests report defaults: the last 2 days, 100 per page', async () => {
  const dan = await gw.customer({ balance: 100 });
  const ids: string[] = [];
  for (let i = 0; i < 101; i++) {
    const res = await gw.call(dan.key, 'POST', '/messages/sms/batch/send', { messages: [{ receiver: phone(100 + i), message: `bulk ${i}` }] });
    assert.equal(res.status, 200);
    ids.push(res.body.object.requestId);
  }
  for (const path of REQUESTS_PATHS) {
    const page = await requests(dan.key, '', path);
    assert.equal(page.totalRecords, 101);
    assert.equal(page.object.length, 100, 'default limit 100');
  }
  // A request created three days ago is outside the default window.
  const old = ids[0] as string;
  const threeDaysAgo = Date.now() - 3 * 24 * 3600 * 1000;
  await gw.core.db.kysely.updateTable('requests').set({ created_at: threeDaysAgo, schedule_at: threeDaysAgo }).where('id', '=', old).execute();
  for (const path of REQUESTS_PATHS) {
    const recent = await requests(dan.key, '?limit=1000', path);
    assert.equal(recent.totalRecords, 100);
    assert.ok(!recent.object.some((x: any) => x.requestId === old));
    const since = DateTime.fromMillis(threeDaysAgo, { zone: 'utc' }).minus({ days: 1 }).toFormat('yyyy-MM-dd');
    const wide = await requests(dan.key, `?startDate=${since}&limit=1000`, path);
    assert.equal(wide.totalRecords, 101);
    assert.equal(wide.object[100].requestId, old, 'oldest schedule last');
  }
});

test('requests report: bad parameters are 400 on both paths', async () => {
  for (const path of REQUESTS_PATHS) {
    for (const [query, field] of [
      ['limit=1001', 'limit'],
      ['limit=0', 'limit'],
      ['skip=-1', 'skip'],
      ['startDate=2024-99-01', 'startDate'],
      ['endDate=x', 'endDate'],
      ['startDate=2030-01-02&endDate=2030-01-01', 'endDate'],
      ['content=%00', 'content'],
    ]) {
      assertFailure(await get(alice.key, `${path}?${query}`), 400, field);
    }
  }
});

// ----------------------------------------------------------------------- cancel

test('cancel: scheduled messages become CANCELLED and are refunded exactly, on both paths', async () => {
  const erin = await gw.customer({ balance: 10, farePrice: '0.065' });
  for (const path of CANCEL_PATHS) {
    const before = await balance(erin.key);
    const id = await send(erin.key, { receivers: [phone(60), phone(61), phone(62)], message: 'x'.repeat(161), scheduleDate: inDays(1) });
    assert.equal(micros(before) - micros(await balance(erin.key)), 3 * 2 * 65_000, '3 messages x 2 credits x 0.065');
    const res = await cancel(erin.key, id, path);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual({ ...res.body, message: undefined }, { hasError: false, message: undefined, totalRecords: 0, errors: [], object: null });
    const report = await sent(erin.key, `?requestId=${id}`);
    assert.deepEqual(
      report.object.map((m: any) => m.status),
      ['CANCELLED', 'CANCELLED', 'CANCELLED'],
    );
    assert.equal(await balance(erin.key), before, 'refunded to the micro-unit');

    assertFailure(await cancel(erin.key, id, path), 400);
    assert.equal(await balance(erin.key), before, 'a second cancel refunds nothing');
  }
});

test('cancel accepts the request id in upper case', async () => {
  const before = await balance(alice.key);
  const id = await send(alice.key, { receivers: [phone(63)], message: 'upper', scheduleDate: inDays(1) });
  const res = await cancel(alice.key, id.toUpperCase());
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal((await sent(alice.key, `?requestId=${id}`)).object[0].status, 'CANCELLED');
  assert.equal(await balance(alice.key), before);
});

test('cancelled messages are not sent when their time comes', async () => {
  const at = DateTime.now().setZone('America/Sao_Paulo').plus({ seconds: 3 }).toFormat('yyyy-MM-dd HH:mm:ss');
  const cancelled = await send(alice.key, { receivers: [phone(64), phone(65)], message: 'never', scheduleDate: at });
  const control = await send(alice.key, { receivers: [phone(66)], message: 'control', scheduleDate: at });
  assert.equal((await cancel(alice.key, cancelled)).status, 200);
  await settled(alice.key, control);
  const report = await sent(alice.key, `?requestId=${cancelled}`);
  for (const m of report.object) {
    assert.equal(m.status, 'CANCELLED');
    assert.equal(m.sentAt, null);
  }
});

test('cancel of messages already sent is a 400 and changes nothing', async () => {
  const id = await send(alice.key, { receivers: [phone(67), '5511987650003'], message: 'gone' });
  const before = await settled(alice.key, id);
  const bal = await balance(alice.key);
  for (const path of CANCEL_PATHS) assertFailure(await cancel(alice.key, id, path), 400);
  assert.deepEqual(await sent(alice.key, `?requestId=${id}`), { hasError: false, message: null, totalRecords: 2, errors: [], object: before });
  assert.equal(await balance(alice.key), bal);
});

test('cancel: unknown id 404, bad id 400, missing body 400, no key 401', async () => {
  for (const path of CANCEL_PATHS) {
    assertFailure(await cancel(alice.key, crypto.randomUUID(), path), 404);
    for (const bad of ['abc', '', 123, null, true, {}, [r.scheduled], `${r.scheduled}x`, `{${r.scheduled}}`]) {
      assertFailure(await cancel(alice.key, bad, path), 400, 'requestId');
    }
    assertFailure(await gw.call(alice.key, 'POST', path, {}), 400, 'requestId');
    assertFailure(await gw.call(alice.key, 'POST', path), 400);
    const malformed = await gw.app.inject({
      method: 'POST',
      url: path,
      headers: { 'x-api-key': alice.key, 'content-type': 'application/json' },
      payload: '{"requestId":',
    });
    assertFailure({ status: malformed.statusCode, body: malformed.json() }, 400);
    assertFailure(await cancel(null, r.scheduled, path), 401);
    assertFailure(await cancel(crypto.randomUUID(), r.scheduled, path), 401);
  }
  assert.equal((await sent(alice.key, `?requestId=${r.scheduled}`)).object[0].status, 'SCHEDULED');
});

test("cancel of another account's request is a 404 and leaves it unchanged", async () => {
  const id = await send(alice.key, { receivers: [phone(68)], message: 'mine', scheduleDate: inDays(1) });
  const before = { balance: await balance(alice.key), report: await sent(alice.key, `?requestId=${id}`), bob: await balance(bob.key) };
  for (const path of CANCEL_PATHS) {
    const res = await cancel(bob.key, id, path);
    assertFailure(res, 404);
    assert.ok(!JSON.stringify(res.body).includes('mine'));
  }
  assert.deepEqual({ balance: await balance(alice.key), report: await sent(alice.key, `?requestId=${id}`), bob: await balance(bob.key) }, before);
  assert.equal((await cancel(alice.key, id)).status, 200, 'the owner still can');
});
