import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { freshDatabase, startGateway, type Customer, type TestDatabase, type TestGateway } from './helpers.ts';
import { legacy, legacyApp, type LegacyAnswer } from './legacy/legacy-helpers.ts';
import { createAccount } from '../src/accounts/accounts.ts';
import { contextDb } from '../src/contextrules/rules.ts';
import { internationalProblem, normalizeBrazilian, normalizeInternational } from '../src/common/phone.ts';
import { checkChildUser } from '../src/childusers/validate.ts';

/**
 * What clients in the field send that used to be answered 500 or refused:
 * paging values beyond range, the same record created by concurrent
 * requests, empty JSON bodies, numbers without their country code, and null
 * in optional fields.
 */

let gw: TestGateway;
let alice: Customer;
let reseller: Customer;
let childId: number;
/** The legacy interface with room for many calls, and a clock the tests move past the reports' 30-second window. */
let roomy: FastifyInstance;
let now = Date.now();

before(async () => {
  gw = await startGateway();
  alice = await gw.customer({ balance: 1000, farePrice: '0.10' });
  reseller = await gw.customer({ balance: 100, role: 'RESELLER' });
  const child = await createAccount(gw.core.db.kysely, {
    name: 'Filial',
    role: 'CUSTOMER',
    timezone: 'America/Sao_Paulo',
    balance: 0,
    parentId: reseller.accountId,
  });
  childId = Number(child.id);
  roomy = await legacyApp(gw.core, { rateLimit: { capacity: 100_000, perSecond: 100_000 }, clock: () => now });
});
after(async () => {
  await roomy.close();
  await gw.close();
});

const MAX = Number.MAX_SAFE_INTEGER;
const BAD_SKIP = ['1e309', '99999999999999999999', String(MAX + 1), '-1', '1.5', 'abc', '-1e309'];
const BAD_LIMIT = ['0', '10001', '1e309', '-1', '1.5', 'abc'];

function assertLegacyFailure(res: LegacyAnswer, status: number, message: RegExp) {
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.Success, false, res.raw);
  assert.equal(res.body.Object, null, res.raw);
  assert.match(res.body.Message, message);
}

test('legacy Skip/Limit out of range, fractional or not a number: 400 naming the field and its range, never 500', async () => {
  const reports = ['/detailedreporting', '/replyreporting', '/contextreporting'];
  const history = ['/balancehistory', `/balancehistory/${alice.accountId}`];
  for (const path of [...reports, ...history]) {
    for (const v of BAD_SKIP) {
      assertLegacyFailure(
        await legacy(roomy, alice.key, 'GET', `${path}?Skip=${encodeURIComponent(v)}`),
        400,
        /O campo Skip deve ser um número inteiro de 0 a 9007199254740991\./,
      );
    }
    for (const v of BAD_LIMIT) {
      assertLegacyFailure(
        await legacy(roomy, alice.key, 'GET', `${path}?Limit=${encodeURIComponent(v)}`),
        400,
        /O campo Limit deve ser um número inteiro de 1 a 10000\./,
      );
    }
  }
  // The reports take the same fields in a POST body; JSON numbers too.
  for (const path of reports) {
    for (const Skip of [1e300, '1e309', -1, 2.5, MAX + 1]) {
      assertLegacyFailure(await legacy(roomy, alice.key, 'POST', path, { Skip }), 400, /Skip deve ser um número inteiro de 0 a 9007199254740991/);
    }
    assertLegacyFailure(await legacy(roomy, alice.key, 'POST', path, '{"Skip": 1e309}'), 400, /Skip/);
  }
  // The largest Skip is answered: an empty page, every record counted.
  for (const path of [...reports, ...history]) {
    now += 31_000;
    const res = await legacy(roomy, alice.key, 'GET', `${path}?Skip=${MAX}&Limit=10000`);
    assert.equal(res.status, 200, `${path}: ${res.raw}`);
    assert.deepEqual(res.body.Object, []);
  }
});

test('gateway skip/limit out of range: 400 naming the parameter and its range', async () => {
  const lists: [string, number][] = [
    ['/reports/messages/sent', 1000],
    ['/reports/messages/received', 1000],
    ['/api/reports/messages/requests', 1000],
    ['/reports/messages/requests', 1000],
    ['/short-links', 1000],
  ];
  for (const [path, max] of lists) {
    for (const v of BAD_SKIP) {
      const res = await gw.call(alice.key, 'GET', `${path}?skip=${encodeURIComponent(v)}`);
      assert.equal(res.status, 400, `${path} ${v}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.errors, [`skip: must be a whole number from 0 to ${MAX}`]);
    }
    for (const v of ['0', String(max + 1), 'abc', '2.5']) {
      const res = await gw.call(alice.key, 'GET', `${path}?limit=${encodeURIComponent(v)}`);
      assert.equal(res.status, 400, `${path} ${v}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.errors, [`limit: must be a whole number from 1 to ${max}`]);
    }
    const ok = await gw.call(alice.key, 'GET', `${path}?skip=${MAX}&limit=${max}`);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.object, []);
  }
  // The defaults still apply when the parameters are absent.
  const plain = await gw.call(alice.key, 'GET', '/reports/messages/sent');
  assert.equal(plain.status, 200);
});

test('legacy: the NUL character (or a lone surrogate) in a body field, a query value or a path id is a 400 naming the field, on every database, and nothing is sent', async () => {
  const before = await legacy(roomy, alice.key, 'GET', '/credits');
  const cases: [string, string, unknown, RegExp][] = [
    ['POST', '/send', { Sender: 'ACME', Receivers: '11999998888', Content: 'a\u0000b' }, /O campo Content não pode conter o caractere NUL/],
    ['POST', '/send', { Sender: 'AC\u0000ME', Receivers: '11999998888', Content: 'ok' }, /O campo Sender não pode conter o caractere NUL/],
    ['POST', '/contactgroup', { Name: '\u0000' }, /O campo Name não pode conter o caractere NUL/],
    ['POST', '/sendingcontextrules', { Name: 'n', Message: 'm\u0000', PositiveContext: 'sim', PositiveResponse: 'ok' }, /O campo Message/],
    ['GET', '/contactgroup?id=%00', undefined, /O campo id não pode conter o caractere NUL/],
    ['GET', '/blacklist/%00', undefined, /O campo id não pode conter o caractere NUL/],
    ['POST', '/send', { Sender: 'ACME', Receivers: '11999998888', Content: 'meio par \ud83d' }, /O campo Content contém metade de um par substituto/],
  ];
  for (const [method, path, body, message] of cases) {
    now += 31_000;
    assertLegacyFailure(await legacy(roomy, alice.key, method as InjectOptions['method'], path, body), 400, message);
  }
  assert.deepEqual((await legacy(roomy, alice.key, 'GET', '/credits')).body.Object, before.body.Object, 'nothing charged');
});

/** Twelve identical requests at once. */
const twelve = <T>(call: () => Promise<T>) => Promise.all(Array.from({ length: 12 }, call));

test('the same context rule saved by 12 requests at once: one creates it, the others replace it as a later save does; no 500', async () => {
  const body = { Name: 'Confirmação', Message: 'Confirma?', PositiveContext: 'sim', PositiveResponse: 'Ok!' };
  const answers = await twelve(() => legacy(gw, alice.key, 'POST', '/sendingcontextrules', body));
  const sequential = await legacy(gw, alice.key, 'POST', '/sendingcontextrules', body);
  assert.equal(sequential.status, 200, sequential.raw);
  assert.match(sequential.body.Message, /atualizada/);
  const shape = (r: LegacyAnswer) => ({ status: r.status, Success: r.body.Success, Message: r.body.Message, Id: r.body.Object?.Id, Name: r.body.Object?.Name });
  const created = answers.filter((r) => /criada/.test(r.body.Message));
  assert.equal(created.length, 1, JSON.stringify(answers.map(shape)));
  assert.deepEqual({ ...shape(created[0] as LegacyAnswer), Message: '' }, { ...shape(sequential), Message: '' });
  for (const r of answers.filter((a) => a !== created[0])) assert.deepEqual(shape(r), shape(sequential));
  const rows = await contextDb(gw.core.db.kysely)
    .selectFrom('context_rules')
    .select('id')
    .where('account_id', '=', alice.accountId)
    .where('name', '=', body.Name)
    .execute();
  assert.equal(rows.length, 1);
});

test('the same contact group created by 12 requests at once, legacy and operator: one 2xx, the others the duplicate answer; one row', async () => {
  const groupRows = (accountId: number, name: string) =>
    gw.core.db.kysely.selectFrom('contact_groups').select('id').where('account_id', '=', accountId).where('name', '=', name).execute();

  // Legacy /contactgroup: a duplicate is a 400 that names the group.
  const answers = await twelve(() => legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Clientes VIP', Description: 'x' }));
  const sequential = await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Clientes VIP', Description: 'x' });
  assert.equal(sequential.status, 400);
  assert.deepEqual(sequential.body, { Success: false, Object: null, Message: 'Já existe um grupo com o nome "Clientes VIP".' });
  const created = answers.filter((r) => r.status === 200);
  assert.equal(created.length, 1, JSON.stringify(answers.map((r) => [r.status, r.body])));
  for (const r of answers.filter((a) => a.status !== 200)) assert.deepEqual({ status: r.status, body: r.body }, { status: 400, body: sequential.body });
  assert.equal((await groupRows(alice.accountId, 'Clientes VIP')).length, 1);

  // Operator POST /admin/accounts/:id/contact-groups: a duplicate is a 409.
  const url = `/admin/accounts/${alice.accountId}/contact-groups`;
  const body = { name: 'Operador', numbers: ['5511987650001'] };
  const ops = await twelve(() => gw.admin('POST', url, body));
  const again = await gw.admin('POST', url, body);
  assert.equal(again.status, 409);
  assert.deepEqual(again.body, { error: 'A contact group named "Operador" already exists.' });
  assert.equal(ops.filter((r) => r.status === 201).length, 1, JSON.stringify(ops));
  // Status and body as the sequential one's (not the whole answer: its Date header may be a second later).
  for (const r of ops.filter((a) => a.status !== 201)) assert.deepEqual({ status: r.status, body: r.body }, { status: again.status, body: again.body });
  const rows = await groupRows(alice.accountId, 'Operador');
  assert.equal(rows.length, 1);
  const contacts = await gw.core.db.kysely.selectFrom('contacts').select('phone').where('group_id', '=', Number(rows[0]?.id)).execute();
  assert.deepEqual(contacts, [{ phone: '5511987650001' }]);
});

test('the same number added to a group by 12 requests at once: one adds it, the others say it is already there; one row', async () => {
  assert.equal((await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Corrida' })).status, 200);
  const change = { GroupName: 'Corrida', Action: 'add_number', ContactPhone: '11987654444' };
  const answers = await twelve(() => legacy(gw, alice.key, 'PUT', '/contactgroup', change));
  const sequential = await legacy(gw, alice.key, 'PUT', '/contactgroup', change);
  assert.deepEqual(
    { status: sequential.status, body: sequential.body },
    { status: 200, body: { Success: true, Object: null, Message: 'O número 5511987654444 já está no grupo "Corrida".' } },
  );
  assert.equal(answers.filter((r) => /incluído/.test(r.body.Message)).length, 1, JSON.stringify(answers.map((r) => r.body)));
  for (const r of answers.filter((a) => !/incluído/.test(a.body.Message)))
    assert.deepEqual({ status: r.status, body: r.body }, { status: 200, body: sequential.body });
  const rows = await gw.core.db.kysely
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', alice.accountId)
    .where('phone', '=', '5511987654444')
    .execute();
  assert.equal(rows.length, 1);
});

test('the same route granted by 12 operator requests at once: every one 204, like a repeated grant; one row', async () => {
  const account = await gw.admin('POST', '/admin/accounts', { name: 'Grant race' });
  const route = await gw.admin('POST', '/admin/routes', {
    displayName: 'R',
    productName: 'SMS',
    productId: 1,
    farePrice: '0.1',
    replyFarePrice: '0',
    channel: 'SMS',
    connector: 'simulator',
  });
  const url = `/admin/accounts/${account.body.id}/routes`;
  const answers = await twelve(() => gw.admin('POST', url, { routeId: route.body.id }));
  const again = await gw.admin('POST', url, { routeId: route.body.id });
  assert.equal(again.status, 204);
  for (const r of answers) assert.deepEqual({ status: r.status, body: r.body }, { status: again.status, body: again.body });
  const rows = await gw.core.db.kysely.selectFrom('account_routes').selectAll().where('account_id', '=', account.body.id).execute();
  assert.equal(rows.length, 1);
});

/** What the official client libraries send: Content-Type application/json and nothing in the body, the fields in the query. */
const sdk = (method: 'DELETE' | 'PUT', path: string, key: string) =>
  gw.app.inject({ method, url: `/api/v2${path}`, headers: { 'auth-key': key, 'content-type': 'application/json' }, payload: '' });

test('legacy SDK calls with Content-Type application/json and an empty body do what the query asks', async () => {
  assert.equal((await legacy(gw, alice.key, 'POST', '/blacklist', { PhoneNumber: '11955554444' })).status, 200);
  const unblock = await sdk('DELETE', '/blacklist?id=11955554444', alice.key);
  assert.equal(unblock.statusCode, 200, unblock.body);
  assert.deepEqual(unblock.json(), { Success: true, Object: null, Message: 'Número 5511955554444 retirado da lista de bloqueio.' });
  assert.equal((await sdk('DELETE', '/blacklist/11955554444', alice.key)).statusCode, 404);

  const transfer = await sdk('PUT', `/credits?id=${childId}&amount=2.5`, reseller.key);
  assert.equal(transfer.statusCode, 200, transfer.body);
  assert.deepEqual(transfer.json(), { Success: true, Object: 2.5, Message: `2.5 crédito(s) transferido(s) para a subconta ${childId}.` });
  // Empty query values: the answer is about the query, not about a body.
  const empty = await sdk('PUT', '/credits?id=&amount=', reseller.key);
  assert.equal(empty.statusCode, 400);
  assert.deepEqual(empty.json(), { Success: false, Object: null, Message: 'O campo id é obrigatório.' });

  assert.equal((await legacy(gw, alice.key, 'POST', '/sendingcontextrules', { Name: 'Apagar', Message: 'x' })).status, 200);
  assert.equal((await sdk('DELETE', '/sendingcontextrules?id=Apagar', alice.key)).statusCode, 200);
  assert.equal((await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Apagar' })).status, 200);
  assert.equal((await sdk('DELETE', '/contactgroup?id=Apagar', alice.key)).statusCode, 200);
});

test('an operation that needs a body still says so when the body is empty, on both interfaces', async () => {
  for (const payload of ['', '   ']) {
    const res = await gw.app.inject({ method: 'POST', url: '/api/v2/send', headers: { 'auth-key': alice.key, 'content-type': 'application/json' }, payload });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { Success: false, Object: null, Message: 'Envie no corpo da requisição um objeto JSON com os campos da operação.' });
  }
  const bad = await gw.app.inject({
    method: 'POST',
    url: '/api/v2/send',
    headers: { 'auth-key': alice.key, 'content-type': 'application/json' },
    payload: '{"Receivers":',
  });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().Message, 'O corpo da requisição não é um JSON válido.');
  const gateway = await gw.app.inject({
    method: 'POST',
    url: '/messages/sms/send',
    headers: { 'x-api-key': alice.key, 'content-type': 'application/json' },
    payload: '',
  });
  assert.equal(gateway.statusCode, 400);
  assert.equal(gateway.json().hasError, true);
  assert.deepEqual(gateway.json().errors, ['The body is empty; send a JSON object.']);
});

const balance = async (key: string) => (await gw.call(key, 'GET', '/balance')).body.object.balance as number;
const messageCount = async (accountId: number) => {
  await gw.core.settle();
  const row = await gw.core.db.kysely
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
};

test('phone numbers must be valid, not merely possible: the rule in one place', () => {
  for (const valid of ['5511999998888', '5521987654321', '551133334444', '+5511987652003', 5511987652003, '12025550123', '4930123456']) {
    assert.equal(normalizeInternational(valid), String(valid).replace('+', ''), String(valid));
  }
  // Without the country code (was taken as +1 198...), a mobile missing its 9, a mobile starting with 0 or 8, no area code 00.
  for (const invalid of ['11987652003', 11987652003, '551199999888', '5511099998888', '5511899998888', '5500999998888']) {
    assert.equal(normalizeInternational(invalid), null, String(invalid));
  }
  assert.equal(internationalProblem('11987652003'), '11987652003 is not a valid international number: Brazilian numbers start with 55, e.g. 5511987652003');
  assert.equal(internationalProblem(1133334444), '1133334444 is not a valid international number: Brazilian numbers start with 55, e.g. 551133334444');
  assert.match(internationalProblem('5511099998888'), /^5511099998888 is not a valid international number \(country code/);
  // 1e400 in a JSON body reads as Infinity: said as such, not as the null JSON would write.
  assert.match(internationalProblem(Number.POSITIVE_INFINITY), /^Infinity is not a valid international number/);
  assert.match(internationalProblem(Number.NaN), /^NaN is not/);
  for (const [given, stored] of [
    ['11999998888', '5511999998888'],
    ['(21) 98765-4321', '5521987654321'],
    ['1133334444', '551133334444'],
    ['+55 11 98765-2003', '5511987652003'],
  ]) {
    assert.equal(normalizeBrazilian(given as string), stored, given);
  }
  for (const invalid of ['1199999888', '11099998888', '2099998888', '11899998888']) assert.equal(normalizeBrazilian(invalid), null, invalid);
  // Child users' phones follow the same rule.
  assert.deepEqual(checkChildUser({ phoneNumber: '1199999888' }).problems, [
    'phoneNumber: "1199999888" is not a valid Brazilian phone number (area code + number, e.g. 11999998888)',
  ]);
  assert.deepEqual(checkChildUser({ phoneNumber: '(11) 99999-8888' }).problems, []);
});

test('a gateway receiver that is not a valid international number is refused, with the 55 hint for a Brazilian number; nothing sent or charged', async () => {
  const before = { balance: await balance(alice.key), messages: await messageCount(alice.accountId) };
  const send = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: ['5511987652001', '11987652003', 5511099998888], message: 'Olá' });
  assert.equal(send.status, 400, JSON.stringify(send.body));
  assert.deepEqual(send.body.errors, [
    'receivers[1]: 11987652003 is not a valid international number: Brazilian numbers start with 55, e.g. 5511987652003',
    'receivers[2]: 5511099998888 is not a valid international number (country code + number, no separators, e.g. 5511999998888)',
  ]);
  const integer = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: [11987652003], message: 'Olá' });
  assert.equal(integer.status, 400);
  assert.deepEqual(integer.body.errors, ['receivers[0]: 11987652003 is not a valid international number: Brazilian numbers start with 55, e.g. 5511987652003']);

  const batch = await gw.call(alice.key, 'POST', '/messages/sms/batch/send', {
    messages: [
      { receiver: '5511987652001', message: 'a' },
      { receiver: '11987652003', message: 'b' },
    ],
  });
  assert.equal(batch.status, 400, JSON.stringify(batch.body));
  assert.deepEqual(batch.body.errors, [
    'messages[1].receiver: 11987652003 is not a valid international number: Brazilian numbers start with 55, e.g. 5511987652003',
  ]);
  assert.deepEqual({ balance: await balance(alice.key), messages: await messageCount(alice.accountId) }, before);

  // Valid mobiles and landlines of other area codes pass.
  const good = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: ['5511999998888', 5521987654321, '551133334444'], message: 'Olá' });
  assert.equal(good.status, 200, JSON.stringify(good.body));
  assert.equal(await messageCount(alice.accountId), before.messages + 3);
});

test('legacy numbers must be valid: area code + number (a leading 55 tolerated)', async () => {
  const refused = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11999998888, 1199999888, 2099998888', Content: 'x' });
  assertLegacyFailure(refused, 400, /^Número\(s\) de telefone inválido\(s\) em Receivers: 1199999888, 2099998888\./);
  assertLegacyFailure(await legacy(gw, alice.key, 'POST', '/blacklist', { PhoneNumber: '11099998888' }), 400, /"11099998888" não é válido/);
  assert.equal((await legacy(gw, alice.key, 'POST', '/contactgroup', { Name: 'Legacy phones' })).status, 200);
  const add = await legacy(gw, alice.key, 'PUT', '/contactgroup', { GroupName: 'Legacy phones', Action: 'add_number', ContactPhone: '1199999888' });
  assertLegacyFailure(add, 400, /não é válido/);
  const ok = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11999998888, (21) 98765-4321, 1133334444, 5511987652003', Content: 'x' });
  assert.equal(ok.status, 200, ok.raw);
  assert.match(ok.body.Message, /4 destinatário/);
});

test('gateway tokens: a national number is taken as Brazilian; an invalid one is refused', async () => {
  const national = await gw.call(alice.key, 'POST', '/api-tokens/create', { phoneNumber: '11987652003' });
  assert.equal(national.status, 200, JSON.stringify(national.body));
  assert.deepEqual(national.body.object.receivers, ['5511987652003']);
  const invalid = await gw.call(alice.key, 'POST', '/api-tokens/create', { phoneNumber: '5511099998888' });
  assert.equal(invalid.status, 400, JSON.stringify(invalid.body));
});

test('CSV import: numbers without the country code or invalid are reported, not stored', async () => {
  let db: TestDatabase | null = null;
  try {
    db = await freshDatabase();
    const env = { ...db.env, GATEWAY_DEMO: 'false' };
    const run = (...args: string[]) => {
      const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
      assert.equal(res.status, 0, res.stderr);
      return JSON.parse(res.stdout) as Record<string, unknown>;
    };
    const account = run('account', 'create', '--name', 'CSV');
    const csv = join(db.env.GATEWAY_DATA_DIR ?? '', 'numbers.csv');
    writeFileSync(csv, 'phone,name\n5511987652003,Ana\n11987652003,Sem DDI\n5511099998888,Inválido\n551133334444,Fixo\n5521987654321,Rio\n');
    const group = run('group', 'import', '--account', String(account.id), '--name', 'clientes', '--csv', csv);
    assert.deepEqual({ added: group.added, invalid: group.invalid }, { added: 3, invalid: ['11987652003', '5511099998888'] });
  } finally {
    await db?.drop();
  }
});

test('null in an optional gateway field means absent: SMS, batch and its items, tokens, child-user keys', async () => {
  const send = await gw.call(alice.key, 'POST', '/messages/sms/send', {
    receivers: ['5511987650002'],
    message: 'null fields',
    scheduleDate: null,
    tag: null,
    custom: null,
    contactGroups: null,
    route: null,
    shortenLinks: null,
  });
  assert.equal(send.status, 200, JSON.stringify(send.body));
  const onlyGroups = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: null, contactGroups: null, message: 'x' });
  assert.equal(onlyGroups.status, 400);
  assert.deepEqual(onlyGroups.body.errors, ['receivers: give at least one receiver or a contact group with contacts']);

  const batch = await gw.call(alice.key, 'POST', '/messages/sms/batch/send', {
    messages: [
      { receiver: '5511987650003', message: 'a', tag: null, custom: null },
      { receiver: 5511987650004, message: 'b', tag: 't', custom: null },
    ],
    route: null,
    scheduleDate: null,
    tag: null,
    custom: null,
    shortenLinks: null,
  });
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  await gw.core.settle();
  const rows = await gw.core.db.kysely
    .selectFrom('messages')
    .select(['receiver', 'tag', 'custom'])
    .where('request_id', '=', String(batch.headers['x-request-id']))
    .orderBy('receiver')
    .execute();
  assert.deepEqual(rows, [
    { receiver: '5511987650003', tag: null, custom: null },
    { receiver: '5511987650004', tag: 't', custom: null },
  ]);

  // A null does not hide a wrong value elsewhere, and a wrong type is still refused.
  const wrong = await gw.call(alice.key, 'POST', '/messages/sms/send', { receivers: ['5511987650002'], message: 'x', tag: 5, custom: null });
  assert.equal(wrong.status, 400);
  assert.deepEqual(wrong.body.errors, ['tag: must be string']);

  const token = await gw.call(alice.key, 'POST', '/api-tokens/create', {
    phoneNumber: '5511987650005',
    prefix: null,
    expireInMinutes: null,
    enforceSecureValidation: null,
    route: null,
  });
  assert.equal(token.status, 200, JSON.stringify(token.body));
  assert.match(token.body.message, /valid for 10 minute/);
  const validate = await gw.call(alice.key, 'POST', '/api-tokens/validate', { token: '000000', phoneNumber: null });
  assert.equal(validate.status, 400, JSON.stringify(validate.body));
  assert.doesNotMatch(JSON.stringify(validate.body.errors), /phoneNumber/);

  const child = await gw.call(reseller.key, 'POST', '/child-users', {
    fullName: 'Loja Nula',
    email: 'nula@example.com.br',
    phoneNumber: '(11) 99999-8888',
    document: '529.982.247-25',
    limit: 0,
    ownerCredentialFullName: 'Maria',
    ownerCredentialEmail: 'maria.nula@example.com.br',
    ownerCredentialPhoneNumber: '+55 21 98888-7777',
    password: 'correct horse battery',
  });
  assert.equal(child.status, 200, JSON.stringify(child.body));
  const key = await gw.call(reseller.key, 'POST', `/child-users/${child.body.object.id}/api-keys`, { allowedIps: null });
  assert.equal(key.status, 200, JSON.stringify(key.body));
});

test('null in an optional RCS field means absent, in cards and buttons too', async () => {
  const route = await gw.admin('POST', '/admin/routes', {
    displayName: 'RCS',
    productName: 'RCS',
    productId: 2,
    farePrice: '0.25',
    replyFarePrice: '0',
    channel: 'RCS',
    connector: 'simulator',
  });
  await gw.admin('POST', `/admin/accounts/${alice.accountId}/routes`, { routeId: route.body.id });
  const common = { receivers: ['5511987650006'], contactGroups: null, route: route.body.id, scheduleDate: null, tag: null, custom: null };
  const basic = await gw.call(alice.key, 'POST', '/messages/rcs/basic/send', { ...common, message: 'oi' });
  assert.equal(basic.status, 200, JSON.stringify(basic.body));
  const card = await gw.call(alice.key, 'POST', '/messages/rcs/card/send', {
    ...common,
    cardImage: null,
    cardTitle: 'Oferta',
    cardMessage: null,
    buttons: null,
  });
  assert.equal(card.status, 200, JSON.stringify(card.body));
  const carousel = await gw.call(alice.key, 'POST', '/messages/rcs/carousel/send', {
    ...common,
    cards: [
      { cardTitle: 'A', cardImage: null, buttons: [{ text: 'Ver', url: null }] },
      { cardTitle: null, cardMessage: 'B', buttons: null },
    ],
  });
  assert.equal(carousel.status, 200, JSON.stringify(carousel.body));
  const empty = await gw.call(alice.key, 'POST', '/messages/rcs/card/send', { ...common, cardImage: null, cardTitle: null, cardMessage: null });
  assert.equal(empty.status, 400, JSON.stringify(empty.body));
  assert.match(empty.body.errors[0], /^cardImage: a card needs an image/);
});

test('the OpenAPI document shows the optional send fields as nullable', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const body = doc.paths['/messages/sms/send'].post.requestBody.content['application/json'].schema;
  for (const field of ['scheduleDate', 'tag', 'custom', 'contactGroups', 'receivers'])
    assert.equal(body.properties[field].nullable, true, `${field}: ${JSON.stringify(body.properties[field])}`);
  assert.ok(!body.required?.includes('tag'));
  const route = body.properties.route;
  assert.ok(route.nullable === true || JSON.stringify(route).includes('"nullable":true'), JSON.stringify(route));
  const batch = doc.paths['/messages/sms/batch/send'].post.requestBody.content['application/json'].schema;
  assert.equal(batch.properties.messages.items.properties.tag.nullable, true);
});
