import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 1000, farePrice: '0.10' });
});
after(() => gw.close());

type Res = Awaited<ReturnType<TestGateway['call']>>;

/** A distinct, valid receiver per call site; ends in 7777 so the simulator delivers it. */
const phone = (n: number) => `55119${String(n).padStart(4, '0')}7777`;
const micros = (n: number) => Math.round(n * 1_000_000);

const send = (key: string, body: unknown) => gw.call(key, 'POST', '/messages/sms/send', body);
const batch = (key: string, body: unknown) => gw.call(key, 'POST', '/messages/sms/batch/send', body);
const sent = async (key: string, query = '') => (await gw.call(key, 'GET', `/reports/messages/sent${query}`)).body;
const requests = async (key: string, query = '') => (await gw.call(key, 'GET', `/api/reports/messages/requests${query}`)).body;
const balance = async (key: string): Promise<number> => {
  const res = await gw.call(key, 'GET', '/balance');
  assert.equal(res.status, 200);
  return res.body.object.balance as number;
};
const requestIdOf = (res: Res) => {
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string');
  assert.match(id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  return id as string;
};
const raw = (key: string | null, url: string, payload: string, contentType = 'application/json') =>
  gw.app.inject({ method: 'POST', url, headers: { ...(key ? { 'x-api-key': key } : {}), 'content-type': contentType }, payload });

function assertOk(res: Res) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.hasError, false);
  assert.deepEqual(res.body.errors, []);
  assert.equal(res.body.totalRecords, 0);
  assert.equal(typeof res.body.message, 'string');
}

/** A failure in the gateway envelope (`hasError: true`); with `fields`, exactly one `errors` entry per listed field, each naming it. */
function assertFailure(res: { status: number; body: any }, status: number, fields?: string[]) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.equal(res.body.totalRecords, 0);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, JSON.stringify(res.body));
  for (const e of res.body.errors) assert.equal(typeof e, 'string');
  if (fields) {
    assert.equal(res.body.errors.length, fields.length, `expected one error per problem (${fields.join(', ')}): ${JSON.stringify(res.body.errors)}`);
    for (const f of fields)
      assert.ok(
        res.body.errors.some((e: string) => e.startsWith(`${f}:`)),
        `no error for ${f}: ${JSON.stringify(res.body.errors)}`,
      );
  }
}

/** Runs `fn` and checks it changed neither the balance nor the number of requests or messages. */
async function assertNothingWritten(key: string, fn: () => Promise<void>) {
  const before = { balance: await balance(key), requests: (await requests(key)).totalRecords, messages: (await sent(key)).totalRecords };
  await fn();
  await gw.core.settle();
  const after = { balance: await balance(key), requests: (await requests(key)).totalRecords, messages: (await sent(key)).totalRecords };
  assert.deepEqual(after, before);
}

/** A customer whose account uses another time zone. */
async function customerIn(timezone: string): Promise<string> {
  const account = await gw.admin('POST', '/admin/accounts', { name: `TZ ${timezone}`, balance: 10, timezone });
  assert.equal(account.status, 201);
  await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: alice.routeId });
  return (await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {})).body.key;
}

test('a send is accepted, charged, dispatched and delivered', async () => {
  const res = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [5511999998888, '5511999997777'], message: 'Hello', route: alice.routeId });
  assertOk(res);
  assert.equal(res.body.object, null);
  const requestId = requestIdOf(res);
  const before = await balance(alice.key);
  const report = await gw.eventually(
    () => sent(alice.key, `?requestId=${requestId}`),
    (b) => b.object.length === 2 && b.object.every((m: any) => m.status === 'DELIVERED'),
    'delivery',
  );
  assert.equal(report.totalRecords, 2);
  for (const m of report.object) {
    assert.equal(m.requestId, requestId);
    assert.equal(m.content, 'Hello');
    assert.equal(m.route, 'SMS Simulator');
    assert.equal(m.product, 'SMS');
    assert.ok(m.sentAt && Date.parse(m.sentAt) >= Date.parse(m.createdAt));
  }
  assert.equal(await balance(alice.key), before, 'delivery does not charge again');
});

test('receivers as integers, digit strings and +digits; route as a string', async () => {
  const res = await send(alice.key, { receivers: [Number(phone(1)), phone(2), `+${phone(3)}`], message: 'forms', route: String(alice.routeId) });
  assertOk(res);
  const report = await sent(alice.key, `?requestId=${requestIdOf(res)}`);
  assert.deepEqual(report.object.map((m: any) => m.receiver).sort(), [phone(1), phone(2), phone(3)].sort());
});

test("without a route the account's SMS route is used", async () => {
  const res = await send(alice.key, { receivers: [phone(4)], message: 'default route' });
  assertOk(res);
  const [request] = (await requests(alice.key, `?requestId=${requestIdOf(res)}`)).object;
  assert.equal(request.routeId, alice.routeId);
});

test('contact groups by id and by {id}, merged with receivers and de-duplicated', async () => {
  const group = await gw.admin('POST', `/admin/accounts/${alice.accountId}/contact-groups`, {
    name: 'Clients',
    numbers: [phone(10), phone(11), `+${phone(12)}`],
  });
  assert.equal(group.status, 201);
  const gid = group.body.id as number;

  const byId = await send(alice.key, { contactGroups: [gid], message: 'group by id' });
  assertOk(byId);
  assert.deepEqual((await sent(alice.key, `?requestId=${requestIdOf(byId)}`)).object.map((m: any) => m.receiver).sort(), [phone(10), phone(11), phone(12)]);

  const byObject = await send(alice.key, { contactGroups: [{ id: gid }], receivers: [phone(11), phone(13)], message: 'group by object' });
  assertOk(byObject);
  const report = await sent(alice.key, `?requestId=${requestIdOf(byObject)}`);
  assert.equal(report.totalRecords, 4, 'phone(11) is both a receiver and in the group: one message');
  assert.deepEqual(report.object.map((m: any) => m.receiver).sort(), [phone(10), phone(11), phone(12), phone(13)]);

  const twice = await send(alice.key, { contactGroups: [gid, { id: gid }], message: 'group twice' });
  assertOk(twice);
  assert.equal((await sent(alice.key, `?requestId=${requestIdOf(twice)}`)).totalRecords, 3);
});

test('a contact group without contacts and no receivers is a 400', async () => {
  const empty = await gw.admin('POST', `/admin/accounts/${alice.accountId}/contact-groups`, { name: 'Empty', numbers: [] });
  await assertNothingWritten(alice.key, async () => {
    assertFailure(await send(alice.key, { contactGroups: [empty.body.id], message: 'nobody' }), 400, ['receivers']);
  });
});

test('one message per receiver: duplicates in every form are sent and charged once', async () => {
  const n = phone(20);
  const before = await balance(alice.key);
  const res = await send(alice.key, { receivers: [Number(n), n, `+${n}`, n, phone(21)], message: 'dedup' });
  assertOk(res);
  const id = requestIdOf(res);
  assert.equal((await sent(alice.key, `?requestId=${id}`)).totalRecords, 2);
  assert.equal((await requests(alice.key, `?requestId=${id}`)).object[0].requestCount, 2);
  assert.equal(micros(before) - micros(await balance(alice.key)), 2 * 100_000);
});

test('charging: 160 code points is 1 credit, then one per 153 (emoji count as one)', async () => {
  const cases: [string, number][] = [
    ['a'.repeat(1), 1],
    ['a'.repeat(160), 1],
    ['a'.repeat(161), 2],
    ['a'.repeat(306), 2],
    ['a'.repeat(307), 3],
    ['😀'.repeat(160), 1],
    ['😀'.repeat(161), 2],
    ['😀'.repeat(306), 2],
    ['😀'.repeat(307), 3],
    ['é'.repeat(160), 1],
    ['😀'.repeat(2000), 14],
  ];
  for (const [text, credits] of cases) {
    const before = await balance(alice.key);
    const res = await send(alice.key, { receivers: [phone(30), phone(31)], message: text });
    assertOk(res);
    assert.match(res.body.message, new RegExp(`\\b${credits * 2} credit`), `${[...text].length} code points`);
    assert.equal(micros(before) - micros(await balance(alice.key)), credits * 2 * 100_000, `${[...text].length} code points cost ${credits} credit(s) each`);
  }
});

test('message longer than 2000 code points is a 400 and nothing is charged', async () => {
  await assertNothingWritten(alice.key, async () => {
    assertFailure(await send(alice.key, { receivers: [phone(32)], message: 'a'.repeat(2001) }), 400, ['message']);
  });
});

test('simulator outcomes by suffix: 0001 UNDELIVERED, 0002 EXPIRED, 0003 FAILED and refunded, others DELIVERED', async () => {
  const before = await balance(alice.key);
  const res = await send(alice.key, { receivers: ['5511987650001', '5511987650002', '5511987650003', '5511987654444'], message: 'outcomes' });
  assertOk(res);
  const id = requestIdOf(res);
  // The debit as the accept wrote it (the balance itself may already have the FAILED message's refund: the simulator answers at once).
  const debits = await gw.core.db.kysely.selectFrom('ledger').select('amount').where('request_id', '=', id).where('reason', '=', 'send').execute();
  assert.deepEqual(
    debits.map((d) => Number(d.amount)),
    [-4 * 100_000],
    'the whole request is debited at accept time',
  );
  const report = await gw.eventually(
    () => sent(alice.key, `?requestId=${id}`),
    (b) => b.object.length === 4 && b.object.every((m: any) => ['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED'].includes(m.status)),
    'final statuses',
  );
  const status = Object.fromEntries(report.object.map((m: any) => [m.receiver, m.status]));
  assert.deepEqual(status, { '5511987650001': 'UNDELIVERED', '5511987650002': 'EXPIRED', '5511987650003': 'FAILED', '5511987654444': 'DELIVERED' });
  for (const m of report.object) {
    if (m.status !== 'DELIVERED') assert.ok(typeof m.statusDetails === 'string' && m.statusDetails.length > 0, `statusDetails of ${m.status}`);
  }
  const failed = report.object.find((m: any) => m.status === 'FAILED');
  assert.equal(failed.sentAt, null, 'a message rejected at submit was never sent');
  assert.equal(micros(before) - micros(await balance(alice.key)), 3 * 100_000, 'only the FAILED message is refunded');
});

test('scheduled in account local time (YYYY-MM-DD HH:mm:ss, America/Sao_Paulo): SCHEDULED, then dispatched at that time', async () => {
  const at = DateTime.now().setZone('America/Sao_Paulo').plus({ seconds: 4 }).startOf('second');
  const res = await send(alice.key, { receivers: [phone(40)], message: 'later', scheduleDate: at.toFormat('yyyy-MM-dd HH:mm:ss') });
  assertOk(res);
  assert.match(res.body.message, /^Scheduled/);
  const id = requestIdOf(res);
  const expected = new Date(at.toMillis()).toISOString();
  const [scheduled] = (await sent(alice.key, `?requestId=${id}`)).object;
  assert.equal(scheduled.status, 'SCHEDULED');
  assert.equal(scheduled.schedule, expected, 'the text is Sao Paulo local time, not UTC');
  assert.equal(scheduled.sentAt, null);
  const [request] = (await requests(alice.key, `?requestId=${id}`)).object;
  assert.equal(request.schedule, expected);

  const [done] = (
    await gw.eventually(
      () => sent(alice.key, `?requestId=${id}`),
      (b) => b.object[0]?.status === 'DELIVERED',
      'scheduled delivery',
    )
  ).object;
  assert.ok(Date.parse(done.sentAt) >= Date.parse(expected), `sent at ${done.sentAt}, not before ${expected}`);
});

test("scheduleDate without offset is the account's own time zone", async () => {
  const key = await customerIn('Asia/Tokyo');
  const at = DateTime.now().setZone('Asia/Tokyo').plus({ days: 1 }).startOf('second');
  const res = await send(key, { receivers: [phone(41)], message: 'tokyo', scheduleDate: at.toFormat('yyyy-MM-dd HH:mm:ss') });
  assertOk(res);
  const [m] = (await sent(key, `?requestId=${requestIdOf(res)}`)).object;
  assert.equal(m.schedule, new Date(at.toMillis()).toISOString());
});

test('scheduleDate as ISO 8601 with an offset is taken as given; the messages wait', async () => {
  const at = DateTime.now().setZone('UTC+2').plus({ days: 2 }).startOf('second');
  const text = at.toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
  assert.match(text, /\+02:00$/);
  const before = await balance(alice.key);
  const res = await send(alice.key, { receivers: [phone(42), phone(43)], message: 'iso', scheduleDate: text });
  assertOk(res);
  const report = await sent(alice.key, `?requestId=${requestIdOf(res)}`);
  assert.equal(report.totalRecords, 2);
  for (const m of report.object) {
    assert.equal(m.status, 'SCHEDULED');
    assert.equal(m.schedule, new Date(at.toMillis()).toISOString());
  }
  assert.equal(micros(before) - micros(await balance(alice.key)), 2 * 100_000, 'a scheduled request is debited at accept time');
});

test('scheduleDate in the past or not a date is a 400 and nothing is written', async () => {
  const past = DateTime.now().setZone('America/Sao_Paulo').minus({ hours: 1 }).toFormat('yyyy-MM-dd HH:mm:ss');
  await assertNothingWritten(alice.key, async () => {
    for (const scheduleDate of [past, '2020-01-01T10:00:00Z', '2020-01-01T10:00:00-03:00', 'tomorrow', '31/12/2099 10:00', '2099-02-30 10:00:00']) {
      assertFailure(await send(alice.key, { receivers: [phone(44)], message: 'x', scheduleDate }), 400, ['scheduleDate']);
    }
  });
});

test('insufficient balance: 400, nothing queued, nothing charged; an exact balance is enough', async () => {
  const poor = await gw.customer({ balance: '0.25', farePrice: '0.10' });
  await assertNothingWritten(poor.key, async () => {
    assertFailure(await send(poor.key, { receivers: [phone(50), phone(51), phone(52)], message: 'three' }), 400);
    assertFailure(await send(poor.key, { receivers: [phone(50), phone(51)], message: 'a'.repeat(161) }), 400, undefined);
    assertFailure(await batch(poor.key, { messages: [50, 51, 52].map((n) => ({ receiver: phone(n), message: 'b' })) }), 400);
  });
  assert.equal((await sent(poor.key)).totalRecords, 0);

  assertOk(await send(poor.key, { receivers: [phone(50), phone(51)], message: 'two' }));
  assert.equal(await balance(poor.key), 0.05);
  assertFailure(await send(poor.key, { receivers: [phone(52)], message: 'one' }), 400);
  assert.equal(await balance(poor.key), 0.05);

  const exact = await gw.customer({ balance: '0.20', farePrice: '0.10' });
  assertOk(await send(exact.key, { receivers: [phone(53)], message: 'a'.repeat(161) }));
  assert.equal(await balance(exact.key), 0);
});

test('unknown route and a route not granted to the account: 404, nothing written', async () => {
  const other = await gw.admin('POST', '/admin/routes', {
    displayName: 'Premium',
    productName: 'SMS',
    productId: 2,
    farePrice: '0.01',
    replyFarePrice: '0',
    channel: 'SMS',
    connector: 'simulator',
  });
  assert.equal(other.status, 201);
  const owner = await gw.admin('POST', '/admin/accounts', { name: 'Premium owner', balance: 1 });
  assert.equal((await gw.admin('POST', `/admin/accounts/${owner.body.id}/routes`, { routeId: other.body.id })).status, 204, 'granted, but to someone else');
  await assertNothingWritten(alice.key, async () => {
    assertFailure(await send(alice.key, { receivers: [phone(60)], message: 'x', route: 999_999 }), 404);
    assertFailure(await send(alice.key, { receivers: [phone(60)], message: 'x', route: other.body.id }), 404);
    assertFailure(await send(alice.key, { receivers: [phone(60)], message: 'x', route: String(other.body.id) }), 404);
    assertFailure(await send(alice.key, { receivers: [phone(60)], message: 'x', route: '0' }), 404);
    assertFailure(await batch(alice.key, { messages: [{ receiver: phone(60), message: 'x' }], route: other.body.id }), 404);
  });
});

test('an RCS route given to an SMS send is a 400', async () => {
  const rcs = await gw.admin('POST', '/admin/routes', {
    displayName: 'RCS',
    productName: 'RCS',
    productId: 3,
    farePrice: '0.2',
    replyFarePrice: '0',
    channel: 'RCS',
    connector: 'simulator',
  });
  const account = await gw.admin('POST', '/admin/accounts', { name: 'RCS only', balance: 10 });
  await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: rcs.body.id });
  const key = (await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {})).body.key;
  await assertNothingWritten(key, async () => {
    assertFailure(await send(key, { receivers: [phone(61)], message: 'x', route: rcs.body.id }), 400, ['route']);
    assertFailure(await send(key, { receivers: [phone(61)], message: 'x' }), 404, undefined);
  });
});

test('every bad field is a 400 naming it, one errors entry per problem', async () => {
  const r = phone(70);
  const cases: [unknown, string[]][] = [
    [{}, ['message']],
    [{ receivers: [r] }, ['message']],
    [{ receivers: [r], message: '' }, ['message']],
    [{ receivers: [r], message: 5 }, ['message']],
    [{ receivers: [r], message: null }, ['message']],
    [{ receivers: [r], message: ['hi'] }, ['message']],
    [{ message: 'x' }, ['receivers']],
    [{ receivers: [], contactGroups: [], message: 'x' }, ['receivers']],
    [{ receivers: Number(r), message: 'x' }, ['receivers']],
    [{ receivers: r, message: 'x' }, ['receivers']],
    [{ receivers: ['abc'], message: 'x' }, ['receivers[0]']],
    [{ receivers: ['55 11 99999-8888'], message: 'x' }, ['receivers[0]']],
    [{ receivers: [5511999998888.5], message: 'x' }, ['receivers[0]']],
    [{ receivers: [-5511999998888], message: 'x' }, ['receivers[0]']],
    [{ receivers: [0], message: 'x' }, ['receivers[0]']],
    [{ receivers: [true], message: 'x' }, ['receivers[0]']],
    [{ receivers: [null], message: 'x' }, ['receivers[0]']],
    [{ receivers: [{ phone: r }], message: 'x' }, ['receivers[0]']],
    [{ receivers: [123], message: 'x' }, ['receivers[0]']],
    [{ receivers: ['1234567'], message: 'x' }, ['receivers[0]']],
    [{ receivers: [1e20], message: 'x' }, ['receivers[0]']],
    [{ receivers: [r], message: 'x', route: 'abc' }, ['route']],
    [{ receivers: [r], message: 'x', route: ' 1' }, ['route']],
    [{ receivers: [r], message: 'x', route: 1.5 }, ['route']],
    [{ receivers: [r], message: 'x', route: -1 }, ['route']],
    [{ receivers: [r], message: 'x', route: 0 }, ['route']],
    [{ receivers: [r], message: 'x', route: true }, ['route']],
    [{ receivers: [r], message: 'x', route: [1] }, ['route']],
    [{ receivers: [r], message: 'x', route: 1e20 }, ['route']],
    [{ receivers: [r], message: 'x', route: '100000000000000000000' }, ['route']],
    [{ receivers: [r], message: 'x', tag: 5 }, ['tag']],
    [{ receivers: [r], message: 'x', tag: 't'.repeat(101) }, ['tag']],
    [{ receivers: [r], message: 'x', custom: { a: 1 } }, ['custom']],
    [{ receivers: [r], message: 'x', custom: 'c'.repeat(1001) }, ['custom']],
    [{ receivers: [r], message: 'x', contactGroups: 1 }, ['contactGroups']],
    [{ receivers: [r], message: 'x', contactGroups: ['a'] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: ['1'] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: [0] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: [{}] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: [{ id: '1' }] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: [1e20] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', contactGroups: [{ id: 1e20 }] }, ['contactGroups[0]']],
    [{ receivers: [r], message: 'x', scheduleDate: 5 }, ['scheduleDate']],
    // scheduleDate: null is absent (test/client-errors.test.ts), not an error.
    [{ receivers: [r], message: 'a\u0000b' }, ['message']],
    [{ receivers: [r], message: 'x', tag: '\u0000' }, ['tag']],
    // Half of a surrogate pair alone is no character: no database keeps it as sent.
    [{ receivers: [r], message: 'a\ud800b' }, ['message']],
    [{ receivers: [r], message: 'x', tag: '\udfff' }, ['tag']],
    // Several problems: each is reported, once.
    [{ receivers: ['abc', 'def'], message: 5, route: 'x', tag: 7 }, ['receivers[0]', 'receivers[1]', 'message', 'route', 'tag']],
    [{ receivers: [123, r, 456], message: 'x', scheduleDate: 'soon' }, ['receivers[0]', 'receivers[2]', 'scheduleDate']],
    [{ receivers: [r], message: 'x', route: '99999999999999999999', scheduleDate: 'soon' }, ['route', 'scheduleDate']],
  ];
  await assertNothingWritten(alice.key, async () => {
    for (const [body, fields] of cases) {
      const res = await send(alice.key, body);
      assertFailure(res, 400, fields);
      if (fields.length > 1) assert.equal(res.body.message, 'The request has invalid fields.');
      else assert.equal(res.body.message, res.body.errors[0]);
    }
  });
});

test('a body that is not a JSON object is a 400', async () => {
  await assertNothingWritten(alice.key, async () => {
    for (const payload of ['[]', '"text"', '5', 'null', 'true']) {
      const res = await raw(alice.key, '/messages/sms/send', payload);
      assertFailure({ status: res.statusCode, body: res.json() }, 400);
    }
    assertFailure(await gw.call(alice.key, 'POST', '/messages/sms/send'), 400);
  });
});

test('malformed JSON and an empty JSON body are 400 in the envelope', async () => {
  await assertNothingWritten(alice.key, async () => {
    for (const payload of ['{"receivers": [5511999998888], "message": "x"', '{receivers: 1}', "{'a': 1}", '{"a":1}}', '\u0000', '']) {
      const res = await raw(alice.key, '/messages/sms/send', payload);
      assertFailure({ status: res.statusCode, body: res.json() }, 400);
      assert.equal(res.headers['content-type']?.toString().startsWith('application/json'), true);
    }
    const proto = await raw(alice.key, '/messages/sms/send', '{"receivers":[5511999998888],"message":"x","__proto__":{"route":1}}');
    assertFailure({ status: proto.statusCode, body: proto.json() }, 400);
  });
});

test('a body over the limit is a 413 in the envelope, nothing written', async () => {
  await assertNothingWritten(alice.key, async () => {
    const res = await send(alice.key, { receivers: [phone(71)], message: 'x', custom: 'c'.repeat(gw.config.BODY_LIMIT_BYTES) });
    assertFailure(res, 413);
    const big = await batch(alice.key, { messages: [{ receiver: phone(71), message: 'x' }], custom: 'c'.repeat(gw.config.BODY_LIMIT_BYTES * 10) });
    assertFailure(big, 413);
  });
});

test('missing, unknown or malformed API key: 401 in the envelope, before the body is read', async () => {
  const body = { receivers: [phone(72)], message: 'x' };
  await assertNothingWritten(alice.key, async () => {
    assertFailure(await send('', body), 401);
    assertFailure(await gw.call(null, 'POST', '/messages/sms/send', body), 401);
    assertFailure(await send(crypto.randomUUID(), body), 401);
    assertFailure(await send('not-a-key', body), 401);
    assertFailure(await send(`${alice.key}x`, body), 401);
    assertFailure(await gw.call(null, 'POST', '/messages/sms/send', body, { authorization: `Bearer ${alice.key}` }), 401);
    const bad = await raw(null, '/messages/sms/send', '{bad json');
    assertFailure({ status: bad.statusCode, body: bad.json() }, 401);
    assertFailure(await batch(crypto.randomUUID(), { messages: [{ receiver: phone(72), message: 'x' }] }), 401);
  });
  assertOk(await gw.call(null, 'POST', '/messages/sms/send', body, { 'X-API-Key': alice.key }));
});

test('batch: per-message text, custom and tag; one request id; answer {requestId, credits}', async () => {
  const before = await balance(alice.key);
  const res = await batch(alice.key, {
    route: alice.routeId,
    tag: 'top-tag',
    custom: 'top-custom',
    messages: [
      { receiver: Number(phone(80)), message: 'a'.repeat(160) },
      { receiver: phone(81), message: 'a'.repeat(161), tag: 'own-tag' },
      { receiver: `+${phone(82)}`, message: '😀'.repeat(307), custom: 'own-custom' },
    ],
  });
  assertOk(res);
  assert.deepEqual(Object.keys(res.body.object).sort(), ['credits', 'requestId']);
  assert.equal(res.body.object.credits, 1 + 2 + 3);
  assert.equal(res.body.object.requestId, requestIdOf(res));
  assert.equal(micros(before) - micros(await balance(alice.key)), 6 * 100_000, 'debit = credits x farePrice');

  const report = await sent(alice.key, `?requestId=${res.body.object.requestId}`);
  const byReceiver = Object.fromEntries(report.object.map((m: any) => [m.receiver, m]));
  assert.deepEqual(Object.keys(byReceiver).sort(), [phone(80), phone(81), phone(82)]);
  assert.equal(byReceiver[phone(80)].content, 'a'.repeat(160));
  assert.equal(byReceiver[phone(81)].content, 'a'.repeat(161));
  assert.equal(byReceiver[phone(82)].content, '😀'.repeat(307));
  assert.deepEqual([byReceiver[phone(80)].tag, byReceiver[phone(80)].custom], ['top-tag', 'top-custom']);
  assert.deepEqual([byReceiver[phone(81)].tag, byReceiver[phone(81)].custom], ['own-tag', 'top-custom']);
  assert.deepEqual([byReceiver[phone(82)].tag, byReceiver[phone(82)].custom], ['top-tag', 'own-custom']);
  const [request] = (await requests(alice.key, `?requestId=${res.body.object.requestId}`)).object;
  assert.equal(request.requestCount, 3);
});

test('batch: a receiver given twice is one message, charged once', async () => {
  const before = await balance(alice.key);
  const res = await batch(alice.key, {
    messages: [
      { receiver: phone(83), message: 'first' },
      { receiver: Number(phone(83)), message: 'second' },
      { receiver: `+${phone(83)}`, message: 'third' },
    ],
  });
  assertOk(res);
  assert.equal(res.body.object.credits, 1);
  assert.equal((await sent(alice.key, `?requestId=${res.body.object.requestId}`)).totalRecords, 1);
  assert.equal(micros(before) - micros(await balance(alice.key)), 100_000);
});

test('batch: scheduled', async () => {
  const at = DateTime.now().plus({ days: 1 }).startOf('second');
  const res = await batch(alice.key, { messages: [{ receiver: phone(84), message: 'later' }], scheduleDate: at.toUTC().toISO() });
  assertOk(res);
  const [m] = (await sent(alice.key, `?requestId=${res.body.object.requestId}`)).object;
  assert.equal(m.status, 'SCHEDULED');
  assert.equal(m.schedule, new Date(at.toMillis()).toISOString());
});

test('batch: bad input is a 400 naming each problem, nothing written', async () => {
  const ok = { receiver: phone(85), message: 'x' };
  const cases: [unknown, string[] | undefined][] = [
    [{}, ['messages']],
    [{ messages: [] }, ['messages']],
    [{ messages: {} }, ['messages']],
    [{ messages: [ok], route: 'x' }, ['route']],
    [{ messages: [{ message: 'x' }] }, ['messages[0].receiver']],
    [{ messages: [{ receiver: phone(85) }] }, ['messages[0].message']],
    [{ messages: [{ receiver: phone(85), message: '' }] }, ['messages[0].message']],
    [{ messages: [ok, { receiver: 'abc', message: 'x' }] }, ['messages[1].receiver']],
    [{ messages: [ok, { receiver: 123, message: 'x' }] }, ['messages[1].receiver']],
    [
      {
        messages: [
          { receiver: 'abc', message: 5 },
          { receiver: phone(86), message: 'x', tag: 5 },
        ],
      },
      ['messages[0].receiver', 'messages[0].message', 'messages[1].tag'],
    ],
    [
      {
        messages: [
          { receiver: 123, message: 'x' },
          { receiver: 456, message: 'y' },
        ],
      },
      ['messages[0].receiver', 'messages[1].receiver'],
    ],
    [{ messages: [ok], scheduleDate: '2001-01-01 00:00:00' }, ['scheduleDate']],
    [{ messages: [{ receiver: phone(85), message: 'a'.repeat(2001) }] }, ['messages[0].message']],
  ];
  await assertNothingWritten(alice.key, async () => {
    for (const [body, fields] of cases) assertFailure(await batch(alice.key, body), 400, fields);
    const res = await raw(alice.key, '/messages/sms/batch/send', '{"messages": [');
    assertFailure({ status: res.statusCode, body: res.json() }, 400);
  });
});
