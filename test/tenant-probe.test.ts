import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { startGateway, type Customer, type TestGateway } from './helpers.ts';
import { interfaceOf, operations } from './openapi-operations.ts';
import { childBody, panelUser, PASSWORD, signIn } from './panel-api-helpers.ts';

/*
 * A tenant probe driven by the OpenAPI document: account A (a reseller)
 * makes one of everything it can own, each carrying a marker; account B
 * then calls every operation of the Gateway, Legacy v2 and panel
 * interfaces with each of A's ids in every path parameter, in every `id`
 * query value and in every id-like body field. B may get a 4xx or its own
 * data, never anything of A's (no answer carries the marker), and
 * afterwards everything of A's is as it was.
 */

const MARK = 'ALICE-SECRET';
let gw: TestGateway;
let alice: Customer;
let bob: Customer;
let doc: any;
const bobPanel: Record<string, string> = {};
/** A's ids, as text: every one is tried wherever B can put an id. */
const ids = new Set<string>();

/** Everything of A's the probe checks afterwards, as A sees it. */
async function aliceState() {
  const get = async (url: string, headers: Record<string, string>) => (await gw.app.inject({ method: 'GET', url, headers })).body;
  const key = { 'x-api-key': alice.key };
  const legacyKey = { 'auth-key': alice.key };
  return {
    balance: await get('/balance', key),
    webhooks: await get('/webhooks', key),
    links: await get('/short-links', key),
    children: await get('/child-users', key),
    requests: await get('/reports/messages/requests?startDate=2020-01-01', key),
    sent: await get('/reports/messages/sent?startDate=2020-01-01', key),
    groups: await get('/api/v2/contactgroup', legacyKey),
    blocked: await get('/api/v2/blacklist', legacyKey),
    rules: await get('/api/v2/sendingcontextrules', legacyKey),
  };
}

let before_: Awaited<ReturnType<typeof aliceState>>;

before(async () => {
  gw = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1' }, { dispatch: false });
  alice = await gw.customer({ balance: 1000, role: 'RESELLER' });
  bob = await gw.customer({ balance: 1000, role: 'RESELLER' });
  for (const c of [alice, bob]) await gw.admin('PUT', `/admin/accounts/${c.accountId}/rate-limit`, { perSecond: 'off' });
  const browser = await signIn(gw, (await panelUser(gw, bob.accountId)).email, PASSWORD);
  bobPanel.cookie = browser.cookie;
  bobPanel['x-csrf-token'] = browser.csrf;
  doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();

  const a = (method: InjectOptions['method'], url: string, payload?: unknown) => gw.call(alice.key, method, url, payload);
  const l = async (method: InjectOptions['method'], url: string, payload?: unknown) =>
    (await gw.app.inject({ method, url: `/api/v2${url}`, headers: { 'auth-key': alice.key }, payload: payload as object })).json();
  const hook = await a('POST', '/webhooks', { url: `http://127.0.0.1:9/${MARK}`, topics: ['message.status'] });
  ids.add(String(hook.body.object.id));
  const link = await a('POST', '/short-links', { destinationUrl: `https://example.com/${MARK}` });
  ids.add(String(link.body.object.id)).add(link.body.object.code);
  const child = await a('POST', '/child-users', { ...childBody('child@alice.example'), fullName: `${MARK} child` });
  assert.equal(child.status, 200, JSON.stringify(child.body));
  if (child.body.object?.id) ids.add(String(child.body.object.id));
  const scheduled = await a('POST', '/messages/sms/send', {
    receivers: ['5511999990001'],
    message: `${MARK} text`,
    scheduleDate: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  });
  assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
  const group = await l('POST', '/contactgroup', { Name: 'alice-group', Description: MARK });
  if (group.Object?.Id) ids.add(String(group.Object.Id));
  ids.add('alice-group');
  await l('POST', '/blacklist', { PhoneNumber: '11987652003' });
  ids.add('11987652003').add('5511987652003');
  const rule = await l('POST', '/sendingcontextrules', { Name: 'alice-rule', Message: MARK, PositiveContext: 'sim', PositiveResponse: MARK });
  if (rule.Object?.Id) ids.add(String(rule.Object.Id));
  ids.add('alice-rule');
  ids.add(String(alice.keyId)).add(String(alice.accountId)).add(String(alice.routeId));
  const reqs = await gw.core.db.kysely.selectFrom('requests').select('id').where('account_id', '=', alice.accountId).execute();
  const msgs = await gw.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', alice.accountId).execute();
  for (const r of [...reqs, ...msgs]) ids.add(r.id);
  before_ = await aliceState();
});
after(() => gw.close());

/** B's credential for the path's interface; null where B has none (operator, public, the sign-in itself). */
function bobHeaders(path: string): Record<string, string> | null {
  switch (interfaceOf(path)) {
    case 'panel':
      return path === '/panel/api/session' || path === '/panel/api/password' ? null : { ...bobPanel };
    case 'legacy':
      return { 'auth-key': bob.key };
    case 'gateway':
      return { 'x-api-key': bob.key };
    default:
      return null;
  }
}

const ID_FIELD = /(^id$|Id$|^requestId$|^RequestUniqueId$|^GroupName$|^Name$|^PhoneNumber$|^contactGroups$|^route$)/;

/** The documented example body with each id-like field set to `value` (a list field gets [value]). */
function bodiesWith(example: unknown, value: string): unknown[] {
  if (!example || typeof example !== 'object' || Array.isArray(example)) return [];
  const out: unknown[] = [];
  for (const [k, v] of Object.entries(example)) {
    if (!ID_FIELD.test(k)) continue;
    const asNumber = /^\d+$/.test(value) ? Number(value) : value;
    out.push({ ...example, [k]: Array.isArray(v) ? [asNumber] : typeof v === 'number' ? asNumber : value });
  }
  return out;
}

test("B, with each of A's ids wherever an id goes: never A's data, and A's things unchanged", async () => {
  assert.ok(ids.size >= 8, `A's ids: ${[...ids].join(', ')}`);
  const leaks: string[] = [];
  let calls = 0;
  for (const { path, method, op } of operations(doc)) {
    const headers = bobHeaders(path);
    if (!headers) continue;
    const params: any[] = op.parameters ?? [];
    const pathParams = params.filter((p) => p.in === 'path').map((p) => p.name as string);
    const takesId = params.some((p) => p.in === 'query' && /^id$/i.test(p.name));
    const example = op.requestBody?.content?.['application/json']?.example;
    for (const id of ids) {
      const url = path.replace(/\{(\w+)\}/g, () => encodeURIComponent(id));
      const tries: { url: string; body?: unknown }[] = [];
      if (pathParams.length) tries.push({ url, body: example });
      if (takesId) tries.push({ url: `${url}?id=${encodeURIComponent(id)}`, body: example });
      for (const body of bodiesWith(example, id)) tries.push({ url, body });
      for (const t of tries) {
        const res = await gw.app.inject({
          method: method.toUpperCase() as InjectOptions['method'],
          url: t.url,
          headers,
          ...(t.body === undefined ? {} : { payload: t.body as object }),
        });
        calls++;
        if (res.statusCode >= 500 || res.body.includes(MARK))
          leaks.push(`${method.toUpperCase()} ${t.url} ${JSON.stringify(t.body)?.slice(0, 80)}: ${res.statusCode} ${res.body.slice(0, 160)}`);
      }
    }
  }
  assert.deepEqual(leaks.slice(0, 30), [], `${leaks.length} answers gave B something of A's (or a 5xx)`);
  assert.ok(calls > 500, `only ${calls} calls`);
  assert.deepEqual(await aliceState(), before_, "A's things changed");
});
