import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { ADMIN_TOKEN, startGateway, type Customer, type TestGateway } from './helpers.ts';
import { seededRandom } from './seeded-random.ts';
import { panelUser, PASSWORD, signIn } from './panel-api-helpers.ts';
import { interfaceOf, operations as documentOperations, type Op } from './openapi-operations.ts';

/*
 * A fuzzer driven by the OpenAPI document (GET /openapi.json): every
 * operation it describes is called with its credential and, one field at a
 * time, with each value a careless or hostile client sends (wrong types,
 * null, huge or odd strings, numbers out of any range, arrays and objects
 * where scalars go), in its path, its query and its JSON body; then with
 * bodies that are not the JSON it takes at all; then with seeded random
 * mixes of those. Every answer must be a 4xx or 2xx (never a 5xx) with a
 * JSON body in the envelope of its interface; a refused send must leave the
 * balance as it was.
 */

let gw: TestGateway;
let alice: Customer;
let reseller: Customer;
let panelCookie: string;
let doc: any;

before(async () => {
  gw = await startGateway({ BODY_LIMIT_BYTES: '65536' });
  alice = await gw.customer({ balance: 100_000 });
  reseller = await gw.customer({ balance: 1000, role: 'RESELLER' });
  for (const c of [alice, reseller]) await gw.admin('PUT', `/admin/accounts/${c.accountId}/rate-limit`, { perSecond: 'off' });
  const browser = await signIn(gw, (await panelUser(gw, alice.accountId)).email, PASSWORD);
  panelCookie = browser.cookie;
  csrf = browser.csrf;
  doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
after(() => gw.close());

/** Not fuzzed: health probes (their 503 is an answer), the session's own sign-out and the document itself. */
const SKIP = new Set(['GET /healthz', 'GET /readyz', 'GET /openapi.json', 'DELETE /panel/api/session', 'POST /panel/api/password']);
const FUZZED = ['get', 'put', 'post', 'delete', 'patch'];
const operations = () => documentOperations(doc).filter((o) => FUZZED.includes(o.method) && !SKIP.has(o.name));

function credentials(path: string, method: string): Record<string, string> {
  switch (interfaceOf(path)) {
    case 'operator':
      return { authorization: `Bearer ${ADMIN_TOKEN}` };
    case 'legacy':
      return { 'auth-key': alice.key };
    case 'panel':
      return { cookie: panelCookie, ...(method === 'get' ? {} : { 'x-csrf-token': csrf }) };
    case 'public':
      return {};
    default:
      return { 'x-api-key': path.startsWith('/child-users') ? reseller.key : alice.key };
  }
}
let csrf = '';

function resolve(schema: any): any {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++)
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((o: any, k: string) => o?.[k], doc);
  return s ?? {};
}

/** A value the schema takes, where it can tell: enough to get past the first check to the ones behind it. */
function sample(schema: any, name = '', depth = 0): unknown {
  const s = resolve(schema);
  if (s.example !== undefined) return s.example;
  if (s.enum) return s.enum[0];
  const first = s.anyOf ?? s.oneOf;
  if (first) return sample(first.find((x: any) => resolve(x).type !== 'null') ?? first[0], name, depth);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x: any) => sample(x, name, depth)));
  switch (s.type) {
    case 'object': {
      if (depth > 4) return {};
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = sample(v, k, depth + 1);
      return out;
    }
    case 'array':
      return depth > 4 ? [] : [sample(s.items ?? {}, name, depth + 1)];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string':
      if (s.format === 'date-time') return '2026-11-29T12:00:00Z';
      if (s.format === 'date') return '2026-11-29';
      if (/receiver|phone|number|to$|msisdn/i.test(name)) return '5511999990000';
      if (/url|uri|link/i.test(name)) return 'https://example.com/x';
      if (/email/i.test(name)) return 'fuzz@acme.example';
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    default:
      return 'x';
  }
}

/** What careless and hostile clients put where a value goes. */
const BAD_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  ' ',
  'abc',
  '1e309',
  '-0',
  '0x1F',
  '99999999999999999999999',
  '2026-02-30T25:61:00Z',
  '\u0000',
  '\ud800 lone surrogate \udfff',
  '\u202e\u200b\ufeff',
  '💥'.repeat(50),
  '%00../../etc/passwd',
  "' OR 1=1 --",
  'x'.repeat(20_000),
  [],
  [null],
  ['a', 1, null, {}],
  {},
  { $ne: null },
  { __proto__: { admin: true } },
];

/** Path values for ids: unknown, odd and out of range. */
const BAD_PATH = ['0', '-1', '1.5', 'abc', '99999999999999999999', '1e309', '%00', '%F0%9F%92%A5', 'x'.repeat(3000), 'null', '%2e%2e'];

/** Query values, as a client writes them in a URL. */
const BAD_QUERY = ['', 'abc', '-1', '1.5', '1e309', '99999999999999999999', '%00', '%FF%FE', 'x'.repeat(5000), '2026-13-45', '[object Object]'];

interface Answer {
  status: number;
  body: any;
  raw: string;
  contentType: string;
}

async function call(o: Op, opts: { path?: Record<string, string>; query?: string; body?: unknown; raw?: string; contentType?: string }): Promise<Answer> {
  let url = o.path.replace(/\{(\w+)\}/g, (_, k: string) => opts.path?.[k] ?? pathDefault(k));
  if (opts.query) url += `?${opts.query}`;
  const headers: Record<string, string> = credentials(o.path, o.method);
  const req: InjectOptions = { method: o.method.toUpperCase() as InjectOptions['method'], url, headers };
  if (opts.raw !== undefined) {
    req.payload = opts.raw;
    headers['content-type'] = opts.contentType ?? 'application/json';
  } else if (opts.body !== undefined) {
    req.payload = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await gw.app.inject(req);
  let body: any = null;
  try {
    body = res.body ? JSON.parse(res.body) : null;
  } catch {
    /* checked below */
  }
  return { status: res.statusCode, body, raw: res.body.slice(0, 300), contentType: String(res.headers['content-type'] ?? '') };
}

function pathDefault(name: string): string {
  if (name === 'systemId') return 'fuzzsys';
  if (name === 'connector') return 'simulator';
  if (name === 'code' || name === 'name') return 'nothing';
  return '1';
}

function judge(o: Op, what: string, a: Answer) {
  const where = `${o.name} ${what}: ${a.status} ${a.raw}`;
  assert.ok(a.status < 500, where);
  if (a.status < 400) return;
  const kind = interfaceOf(o.path);
  if (kind === 'public' && a.status === 404) return;
  assert.match(a.contentType, /application\/json/, where);
  assert.ok(a.body && typeof a.body === 'object', where);
  if (kind === 'legacy') {
    assert.equal(a.body.Success, false, where);
    assert.ok(typeof a.body.Message === 'string' && a.body.Message.length > 0, where);
  } else if (kind === 'operator') {
    assert.ok(typeof a.body.error === 'string' && a.body.error.length > 0, where);
  } else if (kind !== 'public') {
    assert.equal(a.body.hasError, true, where);
    assert.ok(typeof a.body.message === 'string' && a.body.message.length > 0, where);
  }
}

/** Every failure of a test, so one run shows them all. */
let failures: string[] = [];
function check(o: Op, what: string, a: Answer) {
  try {
    judge(o, what, a);
  } catch (err) {
    failures.push((err as Error).message.split('\n')[0] as string);
  }
}
function noFailures() {
  const found = failures;
  failures = [];
  assert.deepEqual(found.slice(0, 40), [], `${found.length} failures`);
}

/** Each leaf of a sample value, by its path of keys. */
function leaves(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (value && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
    const inner = entries.flatMap(([k, v]) => leaves(v, [...at, k]));
    return at.length ? [at, ...inner] : inner;
  }
  return at.length ? [at] : [];
}

function withValue(base: unknown, at: (string | number)[], value: unknown, remove = false): unknown {
  const copy = structuredClone(base) as any;
  let o = copy;
  for (const k of at.slice(0, -1)) {
    o = o?.[k];
    if (o === null || typeof o !== 'object') return copy;
  }
  const last = at[at.length - 1] as string | number;
  if (remove) {
    if (Array.isArray(o)) o.splice(Number(last), 1);
    else delete o[last];
  } else o[last] = value;
  return copy;
}

function jsonBody(o: Op): any {
  return o.op.requestBody?.content?.['application/json']?.schema;
}

/** The operation's documented example body, else one made from its schema. */
function baseBody(o: Op): unknown {
  const content = o.op.requestBody?.content?.['application/json'];
  if (!content) return undefined;
  if (content.example !== undefined) return content.example;
  const first = Object.values(content.examples ?? {})[0] as any;
  return first?.value ?? sample(content.schema);
}

const isSend = (o: Op) => o.method === 'post' && /send|schedule|credits/.test(o.path) && !o.path.startsWith('/admin/');

async function balance(): Promise<number> {
  const res = await gw.call(alice.key, 'GET', '/balance');
  const value = res.body.object.balance;
  assert.equal(typeof value, 'number', JSON.stringify(res.body));
  return value;
}

test('every operation, one field at a time: 2xx or a 4xx in its envelope, never a 5xx; refused sends charge nothing', async () => {
  let calls = 0;
  for (const o of operations()) {
    const params: any[] = (o.op.parameters ?? []).filter((p: any) => p.in === 'path' || p.in === 'query');
    const base = baseBody(o);
    for (const p of params.filter((x) => x.in === 'path')) {
      for (const v of BAD_PATH) {
        check(o, `path ${p.name}=${v.slice(0, 20)}`, await call(o, { path: { [p.name]: v }, body: base }));
        calls++;
      }
    }
    for (const p of params.filter((x) => x.in === 'query')) {
      for (const v of BAD_QUERY) {
        check(o, `query ${p.name}=${v.slice(0, 20)}`, await call(o, { query: `${encodeURIComponent(p.name)}=${v}`, body: base }));
        check(o, `query ${p.name} twice`, await call(o, { query: `${p.name}=1&${p.name}=${v}`, body: base }));
        calls += 2;
      }
    }
    if (base === undefined) continue;
    const send = isSend(o);
    for (const at of leaves(base)) {
      for (const v of [...BAD_VALUES, undefined]) {
        const body = v === undefined ? withValue(base, at, null, true) : withValue(base, at, v);
        const before = send ? await balance() : 0;
        const a = await call(o, { body });
        calls++;
        check(o, `${at.join('.')}=${JSON.stringify(v)?.slice(0, 30)}`, a);
        if (send && a.status >= 400) assert.equal(await balance(), before, `${o.name} ${at.join('.')}: refused yet charged`);
      }
    }
  }
  noFailures();
  assert.ok(calls > 3000, `only ${calls} calls`);
});

test('every operation with a body: bodies that are not its JSON get a 4xx in its envelope', async () => {
  const raws: { raw: string; type?: string }[] = [
    { raw: '' },
    { raw: '{' },
    { raw: '{"a":' },
    { raw: 'null' },
    { raw: '[]' },
    { raw: '"text"' },
    { raw: '42' },
    { raw: '{"__proto__":{"x":1}}' },
    { raw: '{"constructor":{"prototype":{"x":1}}}' },
    { raw: `${'['.repeat(5000)}${']'.repeat(5000)}` },
    { raw: `{"a":"${'x'.repeat(70_000)}"}` },
    { raw: '\u0000\u0001\u0002' },
    { raw: 'a=1&b=2', type: 'application/x-www-form-urlencoded' },
    { raw: '<xml/>', type: 'text/xml' },
    { raw: '{}', type: 'application/json; charset=latin1' },
  ];
  for (const o of operations().filter((x) => jsonBody(x))) {
    for (const { raw, type } of raws) check(o, `raw ${JSON.stringify(raw.slice(0, 20))} ${type ?? ''}`, await call(o, { raw, contentType: type }));
  }
  noFailures();
});

test('seeded random mixes: several fields wrong at once', async () => {
  const random = seededRandom(20261129);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  for (const o of operations().filter((x) => jsonBody(x))) {
    const base = baseBody(o);
    const paths = leaves(base);
    for (let round = 0; round < 20; round++) {
      let body = base;
      for (let k = 0; k < 3 && paths.length; k++) body = withValue(body, pick(paths), pick(BAD_VALUES));
      check(o, `random ${round}: ${JSON.stringify(body).slice(0, 200)}`, await call(o, { body }));
    }
  }
  noFailures();
});
