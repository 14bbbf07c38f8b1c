import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, ADMIN_TOKEN, type TestGateway, type Customer } from './helpers.ts';
import { schemaErrorFormatter } from '../src/http/validation.ts';

/**
 * Refusing a bad body costs time linear in its size, and the answer stays
 * short: a body of many bad items is answered as fast, per byte, as one of
 * a few, with a bounded number of lines, and the process keeps answering.
 *
 * No absolute time limit: for each route the time of a body with 20 bad
 * items is measured, then the time of the largest body the route accepts
 * full of bad items, and the ratio of the times is compared with the ratio
 * of the sizes. Linear work plus a fixed cost per request gives a time ratio
 * below the size ratio; quadratic work (every error compared with every
 * other) gives one of thousands of times the size ratio.
 */

/** Room for noise (GC, a busy machine) over the size ratio. */
const SLACK = 4;
/** A small limit keeps the largest bodies quick to build; the routes accept 1 or 10 times it. */
const BODY_LIMIT = 256 * 1024;
/** Reported problems are capped: 20 lines and a "... and N more" line. */
const MAX_LINES = 21;

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  alice = await gw.customer();
});
after(async () => {
  await gw.close();
});

/** A JSON body `prefix [item, item, ...] suffix` of `count` items, or as many as fit in `bytes`. */
function body(prefix: string, item: string, suffix: string, size: { count: number } | { bytes: number }): string {
  const count = 'count' in size ? size.count : Math.floor((size.bytes - prefix.length - suffix.length - 2) / (item.length + 1));
  const text = `${prefix}[${Array(count).fill(item).join(',')}]${suffix}`;
  if ('bytes' in size) assert.ok(text.length <= size.bytes && text.length > size.bytes - item.length - 2, `${text.length} for ${size.bytes}`);
  return text;
}

interface Answer {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

async function send(url: string, payload: string, headers: Record<string, string>): Promise<Answer> {
  const res = await gw.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } });
  return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers as Record<string, unknown> };
}

/** Fastest of `runs` timings (the least disturbed by other work on the machine). */
async function timed(runs: number, run: () => Promise<Answer>): Promise<{ ms: number; answer: Answer }> {
  let best = Infinity;
  let answer: Answer | undefined;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    answer = await run();
    best = Math.min(best, performance.now() - start);
  }
  return { ms: best, answer: answer as Answer };
}

/**
 * Times the small body (after a warm-up) and the large one, checks the time
 * ratio against the size ratio, checks both answers, and that the process
 * still answers /healthz.
 */
async function linear(t: TestContext, name: string, url: string, headers: Record<string, string>, small: string, large: string, check: (a: Answer) => void) {
  for (let i = 0; i < 3; i++) check(await send(url, small, headers));
  const s = await timed(5, () => send(url, small, headers));
  const l = await timed(2, () => send(url, large, headers));
  check(s.answer);
  check(l.answer);
  const sizeRatio = large.length / small.length;
  const timeRatio = l.ms / s.ms;
  t.diagnostic(
    `${name}: ${small.length} B in ${s.ms.toFixed(2)} ms, ${large.length} B in ${l.ms.toFixed(2)} ms; time ratio ${timeRatio.toFixed(1)}, size ratio ${sizeRatio.toFixed(1)}`,
  );
  assert.ok(
    timeRatio < sizeRatio * SLACK,
    `${name}: ${large.length} bytes took ${l.ms.toFixed(1)} ms, ${small.length} bytes ${s.ms.toFixed(1)} ms: time ratio ${timeRatio.toFixed(0)} > ${SLACK} x size ratio ${sizeRatio.toFixed(0)}`,
  );
  const health = await gw.app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200);
}

/** Gateway envelope: 400, the problems as lines, at most MAX_LINES of them. */
function gatewayRefusal(field: RegExp) {
  return (a: Answer) => {
    assert.equal(a.status, 400, JSON.stringify(a.body).slice(0, 300));
    assert.equal(a.body.hasError, true);
    assert.equal(a.body.object, null);
    assert.equal(typeof a.body.message, 'string');
    assert.ok(Array.isArray(a.body.errors) && a.body.errors.length >= 1, 'no lines');
    assert.ok(a.body.errors.length <= MAX_LINES, `${a.body.errors.length} lines`);
    assert.match(a.body.errors[0], field);
  };
}

test('receivers full of non-phones: linear, 400, bounded lines', async (t) => {
  const key = { 'x-api-key': alice.key };
  const small = body('{"message":"x","receivers":', 'true', '}', { count: 20 });
  const large = body('{"message":"x","receivers":', 'true', '}', { bytes: BODY_LIMIT });
  await linear(t, 'receivers', '/messages/sms/send', key, small, large, gatewayRefusal(/^receivers/));
});

test('receivers up to twice their cap, all bad: every item examined, 20 lines shown and the rest counted', async (t) => {
  const key = { 'x-api-key': alice.key };
  const small = body('{"message":"x","receivers":', 'true', '}', { count: 20 });
  const phoneLine = (i: number) => `receivers[${i}]: must be a phone number in international form, as an integer or a digit string (e.g. 5511999998888)`;
  // At the cap (10,000), and at twice the cap: the largest array whose items are all examined.
  for (const [count, first, more] of [
    [10_000, 0, 9980],
    [20_000, 1, 19_981],
  ] as const) {
    const large = body('{"message":"x","receivers":', 'true', '}', { count });
    await linear(t, `${count} receivers`, '/messages/sms/send', key, small, large, gatewayRefusal(/^receivers/));
    const answer = await send('/messages/sms/send', large, key);
    assert.equal(answer.body.errors.length, MAX_LINES);
    if (first === 1) assert.equal(answer.body.errors[0], 'receivers: must NOT have more than 10000 items');
    assert.equal(answer.body.errors[first], phoneLine(0));
    assert.equal(answer.body.errors[19], phoneLine(19 - first));
    assert.equal(answer.body.errors[20], `... and ${more} more problems`);
  }
});

test('batch: messages full of non-objects in a body of 10 x the limit', async (t) => {
  const key = { 'x-api-key': alice.key };
  const small = body('{"messages":', 'true', '}', { count: 20 });
  const large = body('{"messages":', 'true', '}', { bytes: BODY_LIMIT * 10 });
  await linear(t, 'batch', '/messages/sms/batch/send', key, small, large, gatewayRefusal(/^messages/));
});

test('webhooks: a huge topics array', async (t) => {
  const key = { 'x-api-key': alice.key };
  const small = body('{"url":"https://hooks.example.com/in","topics":', 'true', '}', { count: 20 });
  const large = body('{"url":"https://hooks.example.com/in","topics":', 'true', '}', { bytes: BODY_LIMIT });
  await linear(t, 'topics', '/webhooks', key, small, large, gatewayRefusal(/^topics/));
});

test('Legacy v2: Receivers full of objects', async (t) => {
  const key = { 'auth-key': alice.key };
  const small = body('{"Content":"x","Receivers":', '{}', '}', { count: 20 });
  const large = body('{"Content":"x","Receivers":', '{}', '}', { bytes: BODY_LIMIT });
  await linear(t, 'legacy', '/api/v2/send', key, small, large, (a) => {
    assert.equal(a.status, 400, JSON.stringify(a.body).slice(0, 300));
    assert.equal(a.body.Success, false);
    assert.equal(a.body.Object, null);
    assert.match(a.body.Message, /Receivers/);
    assert.ok(a.body.Message.length < 2000, `${a.body.Message.length} characters`);
  });
});

test('operator API: contact group numbers full of non-strings', async (t) => {
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const url = `/admin/accounts/${alice.accountId}/contact-groups`;
  const small = body('{"name":"G","numbers":', 'true', '}', { count: 20 });
  const large = body('{"name":"G","numbers":', 'true', '}', { bytes: BODY_LIMIT * 10 });
  await linear(t, 'contact group', url, auth, small, large, (a) => {
    assert.equal(a.status, 400, JSON.stringify(a.body).slice(0, 300));
    assert.equal(typeof a.body.error, 'string');
    assert.match(a.body.error, /^numbers/);
    assert.ok(a.body.error.split('; ').length <= MAX_LINES, `${a.body.error.split('; ').length} lines`);
  });
});

test("a refusal's error is made without a stack (the interfaces write their own text from the problems)", async () => {
  const depth = Error.stackTraceLimit;
  const error = schemaErrorFormatter([], 'body');
  assert.equal(error.message, 'body does not match its schema');
  assert.equal(error.stack?.split('\n').length, 1, 'no frames captured');
  assert.equal(Error.stackTraceLimit, depth, 'the limit is given back');
  // And a refused request still names what to fix.
  const res = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [5511999998888], message: '', route: alice.routeId });
  assert.equal(res.status, 400);
  assert.match((res.body.errors as string[]).join(' '), /message/);
});
