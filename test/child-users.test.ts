/**
 * Child users (docs/child-users-and-short-links.md): a RESELLER key
 * creates CUSTOMER accounts under it, lists them, issues their keys and
 * moves credits to and from them. Runs on SQLite, or PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from './helpers.ts';
import { normalizeDocument, cpfValid, cnpjValid } from '../src/childusers/documents.ts';
import { verifyPassword } from '../src/childusers/password.ts';
import type { ChildUserTables } from '../src/childusers/tables.ts';

let gw: TestGateway;
let reseller: Customer;
let other: Customer;
let customer: Customer;

before(async () => {
  gw = await startGateway();
  reseller = await gw.customer({ role: 'RESELLER', balance: 1000 });
  other = await gw.customer({ role: 'RESELLER', balance: 500 });
  customer = await gw.customer({ balance: 100 });
});
after(() => gw.close());

type Res = Pick<Awaited<ReturnType<TestGateway['call']>>, 'status' | 'body'>;

const CHILD_FIELDS = [
  'fullName',
  'email',
  'phoneNumber',
  'document',
  'limit',
  'ownerCredentialFullName',
  'ownerCredentialEmail',
  'ownerCredentialPhoneNumber',
  'password',
];

let counter = 0;
/** A valid create body; each call has its own e-mail. */
function childBody(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    fullName: `Loja ${counter} Ltda`,
    email: `loja${counter}@example.com.br`,
    phoneNumber: '(11) 99999-8888',
    document: '529.982.247-25',
    limit: 10,
    ownerCredentialFullName: 'Maria Silva',
    ownerCredentialEmail: `maria${counter}@example.com.br`,
    ownerCredentialPhoneNumber: '+55 21 98888-7777',
    password: 'correct horse battery',
    ...overrides,
  };
}

const create = (key: string | null, body: unknown) => gw.call(key, 'POST', '/child-users', body);
const balanceOf = async (accountId: number): Promise<number> => (await gw.admin('GET', `/admin/accounts/${accountId}`)).body.balance as number;
const childRow = (id: number) =>
  gw.core.db.kysely.withTables<ChildUserTables>().selectFrom('child_users').selectAll().where('account_id', '=', id).executeTakeFirst();
const ledgerOf = (accountId: number) =>
  gw.core.db.kysely.selectFrom('ledger').select(['amount', 'reason']).where('account_id', '=', accountId).orderBy('id').execute();
const accountCount = async () =>
  Number(
    (
      await gw.core.db.kysely
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

async function createChild(key = reseller.key, overrides: Record<string, unknown> = {}): Promise<{ id: number; body: Record<string, unknown> }> {
  const body = childBody(overrides);
  const res = await create(key, body);
  assertOk(res);
  return { id: res.body.object.id as number, body };
}

function assertOk(res: Res) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.hasError, false);
  assert.deepEqual(res.body.errors, []);
  assert.ok(res.body.message === null || typeof res.body.message === 'string');
}

/** A failure in the gateway envelope (`hasError: true`); with `fields`, exactly one `errors` entry per listed field, each naming it. */
function assertFailure(res: Res, status: number, fields?: string[]) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.equal(res.body.totalRecords, 0);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, JSON.stringify(res.body));
  if (fields) {
    assert.equal(res.body.errors.length, fields.length, `expected one error per problem (${fields.join(', ')}): ${JSON.stringify(res.body.errors)}`);
    for (const f of fields)
      assert.ok(
        res.body.errors.some((e: string) => e.startsWith(`${f}:`)),
        `no error for ${f}: ${JSON.stringify(res.body.errors)}`,
      );
  }
}

/** Runs `fn` and checks that no account was created and no balance changed. */
async function assertNothingChanged(fn: () => Promise<void>, accounts: number[] = [reseller.accountId, other.accountId, customer.accountId]) {
  const before = { count: await accountCount(), balances: await Promise.all(accounts.map(balanceOf)) };
  await fn();
  assert.deepEqual({ count: await accountCount(), balances: await Promise.all(accounts.map(balanceOf)) }, before);
}

test('create: a CUSTOMER account under the reseller, normalised, allotment moved with ledger entries on both sides', async () => {
  const before = await balanceOf(reseller.accountId);
  const body = childBody({ limit: 25, document: '11.222.333/0001-81', email: 'Loja.Centro@Example.com' });
  const res = await create(reseller.key, body);
  assertOk(res);
  assert.equal(res.body.totalRecords, 0);
  const child = res.body.object;
  assert.deepEqual(Object.keys(child).sort(), ['document', 'email', 'fullName', 'id', 'parentUserId', 'phoneNumber', 'role']);
  assert.equal(typeof child.id, 'number');
  assert.deepEqual(
    { ...child, id: 0 },
    {
      id: 0,
      fullName: body.fullName,
      email: 'Loja.Centro@Example.com',
      phoneNumber: '5511999998888',
      document: '11222333000181',
      role: 'CUSTOMER',
      parentUserId: reseller.accountId,
    },
  );

  assert.equal(await balanceOf(reseller.accountId), before - 25);
  assert.equal(await balanceOf(child.id), 25);
  const account = await gw.core.db.kysely.selectFrom('accounts').selectAll().where('id', '=', child.id).executeTakeFirstOrThrow();
  assert.equal(account.role, 'CUSTOMER');
  assert.equal(Number(account.parent_id), reseller.accountId);
  assert.deepEqual(
    (await ledgerOf(child.id)).map((l) => Number(l.amount)),
    [25_000_000],
  );
  const resellerLedger = await ledgerOf(reseller.accountId);
  assert.equal(Number(resellerLedger.at(-1)?.amount), -25_000_000);
  assert.match(resellerLedger.at(-1)?.reason ?? '', new RegExp(`child user ${child.id}`));

  const row = await childRow(child.id);
  assert.ok(row);
  assert.equal(row.owner_phone, '5521988887777');
  assert.equal(row.owner_full_name, 'Maria Silva');
  assert.match(row.password_hash, /^\$scrypt\$ln=15,r=8,p=3\$/);
  assert.ok(!row.password_hash.includes('correct horse'));
  assert.equal(await verifyPassword('correct horse battery', row.password_hash), true);
  assert.equal(await verifyPassword('correct horse batterY', row.password_hash), false);
});

test('two hashes of one password differ (random salt)', async () => {
  const a = await createChild(reseller.key, { password: 'same password 1', limit: 0 });
  const b = await createChild(reseller.key, { password: 'same password 1', limit: 0 });
  const [ra, rb] = [await childRow(a.id), await childRow(b.id)];
  assert.ok(ra && rb);
  assert.notEqual(ra.password_hash, rb.password_hash);
});

test("the child works on its own: key issued by the reseller, the allotment as balance, the reseller's routes", async () => {
  const { id } = await createChild(reseller.key, { limit: 5 });
  const issued = await gw.call(reseller.key, 'POST', `/child-users/${id}/api-keys`);
  assertOk(issued);
  assert.match(issued.body.object.key, /^[0-9a-f-]{36}$/);
  const key = issued.body.object.key as string;
  assert.equal((await gw.call(key, 'GET', '/balance')).body.object.balance, 5);
  const routes = await gw.call(key, 'GET', '/routes');
  assert.deepEqual(
    routes.body.object.map((r: { id: number }) => r.id),
    [reseller.routeId],
  );
  const sent = await gw.call(key, 'POST', '/messages/sms/send', { receivers: ['5511988887777'], message: 'from the child' });
  assertOk(sent);
  assert.equal((await gw.call(key, 'GET', '/balance')).body.object.balance, 4.9);
  // The child is a CUSTOMER: it may not create child users itself.
  assertFailure(await create(key, childBody()), 403);
  // Another key with an allow-list; the key is shown only when issued.
  const restricted = await gw.call(reseller.key, 'POST', `/child-users/${id}/api-keys`, { allowedIps: ['10.0.0.0/8'] });
  assertOk(restricted);
  assertFailure(await gw.call(restricted.body.object.key, 'GET', '/balance'), 401);
  const list = await gw.call(reseller.key, 'GET', '/child-users?limit=1000');
  assert.ok(!JSON.stringify(list.body).includes(key));
});

test('only a RESELLER key: a CUSTOMER key gets 403 on every operation, whatever it sends, and nothing changes', async () => {
  const { id } = await createChild();
  await assertNothingChanged(async () => {
    assertFailure(await create(customer.key, childBody()), 403);
    assertFailure(await create(customer.key, { fullName: 5 }), 403);
    assertFailure(await gw.call(customer.key, 'GET', '/child-users'), 403);
    assertFailure(await gw.call(customer.key, 'POST', `/child-users/${id}/api-keys`, {}), 403);
    assertFailure(await gw.call(customer.key, 'POST', `/child-users/${id}/credits`, { amount: 1 }), 403);
  }, [reseller.accountId, customer.accountId, id]);
});

test('missing, unknown or revoked key: 401 in the envelope on every operation', async () => {
  const { id } = await createChild();
  await assertNothingChanged(async () => {
    for (const key of [null, 'not-a-key', '00000000-0000-4000-8000-000000000000']) {
      assertFailure(await create(key, childBody()), 401);
      assertFailure(await gw.call(key, 'GET', '/child-users'), 401);
      assertFailure(await gw.call(key, 'POST', `/child-users/${id}/api-keys`, {}), 401);
      assertFailure(await gw.call(key, 'POST', `/child-users/${id}/credits`, { amount: 1 }), 401);
    }
  });
});

test('missing fields: one error per missing field, nothing created', async () => {
  await assertNothingChanged(async () => {
    assertFailure(await create(reseller.key, {}), 400, [
      'fullName',
      'email',
      'phoneNumber',
      'document',
      'limit',
      'ownerCredentialFullName',
      'ownerCredentialEmail',
      'ownerCredentialPhoneNumber',
      'password',
    ]);
    const { password: _p, document: _d, ...rest } = childBody();
    assertFailure(await create(reseller.key, rest), 400, ['password', 'document']);
  });
});

test('wrong types: one error per field', async () => {
  await assertNothingChanged(async () => {
    assertFailure(await create(reseller.key, childBody({ fullName: 5 })), 400, ['fullName']);
    assertFailure(await create(reseller.key, childBody({ limit: '10' })), 400, ['limit']);
    assertFailure(await create(reseller.key, childBody({ limit: 1.5 })), 400, ['limit']);
    assertFailure(await create(reseller.key, childBody({ limit: -1 })), 400, ['limit']);
    assertFailure(await create(reseller.key, childBody({ phoneNumber: 11999998888 })), 400, ['phoneNumber']);
    assertFailure(await create(reseller.key, childBody({ email: null, password: ['x'] })), 400, ['email', 'password']);
  });
});

test('bad values: every problem named once, type errors and field checks together', async () => {
  await assertNothingChanged(async () => {
    assertFailure(
      await create(
        reseller.key,
        childBody({
          fullName: '   ',
          email: 'not-an-email',
          phoneNumber: '123',
          document: '529.982.247-26',
          ownerCredentialEmail: 'a@b',
          ownerCredentialPhoneNumber: 'phone',
          password: 'short',
        }),
      ),
      400,
      ['fullName', 'email', 'phoneNumber', 'document', 'ownerCredentialEmail', 'ownerCredentialPhoneNumber', 'password'],
    );
    assertFailure(await create(reseller.key, childBody({ limit: 'ten', document: '111.111.111-11' })), 400, ['limit', 'document']);
    assertFailure(await create(reseller.key, childBody({ email: 'two@@example.com', ownerCredentialFullName: '' })), 400, ['email', 'ownerCredentialFullName']);
    assertFailure(await create(reseller.key, childBody({ document: 'x'.repeat(33) })), 400, ['document']);
  });
});

test('a body that is not a JSON object, malformed JSON, an empty body: 400 in the envelope', async () => {
  const raw = (payload: string) =>
    gw.app.inject({ method: 'POST', url: '/child-users', headers: { 'x-api-key': reseller.key, 'content-type': 'application/json' }, payload });
  await assertNothingChanged(async () => {
    for (const payload of ['{"fullName": ', '[]', '"text"', '42', 'null', '']) {
      const res = await raw(payload);
      assertFailure({ status: res.statusCode, body: JSON.parse(res.body) }, 400);
    }
    assertFailure(await create(reseller.key, undefined), 400);
  });
});

test('CPF and CNPJ vectors: check digits, formatting, all-same-digit numbers', () => {
  for (const cpf of ['529.982.247-25', '111.444.777-35', '39053344705', '000.000.001-91']) assert.ok('document' in normalizeDocument(cpf), cpf);
  for (const cnpj of ['11.222.333/0001-81', '11.444.777/0001-61', '33.000.167/0001-01', '04252011000110'])
    assert.ok('document' in normalizeDocument(cnpj), cnpj);
  assert.deepEqual(normalizeDocument(' 529 982 247 25 '), { document: '52998224725', kind: 'CPF' });
  assert.deepEqual(normalizeDocument('11.222.333/0001-81'), { document: '11222333000181', kind: 'CNPJ' });
  // Alphanumeric CNPJ (issued since July 2026; the Receita Federal's own example), stored upper-case.
  assert.deepEqual(normalizeDocument('12.ABC.345/01DE-35'), { document: '12ABC34501DE35', kind: 'CNPJ' });
  assert.deepEqual(normalizeDocument('12.abc.345/01de-35'), { document: '12ABC34501DE35', kind: 'CNPJ' });
  const invalid = [
    '529.982.247-24',
    '529.982.247-15',
    '111.444.777-53',
    '12345678900', // wrong check digits
    '11.222.333/0001-80',
    '11.222.333/0001-18',
    '33.000.167/0001-02', // wrong check digits
    '000.000.000-00',
    '111.111.111-11',
    '999.999.999-99',
    '00.000.000/0000-00',
    '11111111111111', // all the same digit
    '12.ABC.345/01DE-36',
    '12.ABC.345/01DE-53',
    '12ABC34501DEAB',
    'ABCDEFGHIJK', // alphanumeric CNPJ: wrong check digits, letters where digits go
    '5299822472',
    '529982247250',
    '1122233300018',
    '',
    'abc.def.ghi-jk',
    '529.982.247-2X',
    '+52998224725',
    '529,982,247-25',
  ];
  for (const doc of invalid) assert.ok('error' in normalizeDocument(doc), doc);
  assert.equal(cpfValid('52998224725'), true);
  assert.equal(cnpjValid('11222333000181'), true);
  assert.equal(cpfValid('11222333000181'), false);
});

test('CPF and CNPJ through the API: valid ones stored as digits, invalid ones refused', async () => {
  const cpf = await createChild(reseller.key, { document: '111.444.777-35', limit: 0 });
  assert.equal((await childRow(cpf.id))?.document, '11144477735');
  const cnpj = await createChild(reseller.key, { document: '11.444.777/0001-61', limit: 0 });
  assert.equal((await childRow(cnpj.id))?.document, '11444777000161');
  const alnum = await createChild(reseller.key, { document: '12.abc.345/01de-35', limit: 0 });
  assert.equal((await childRow(alnum.id))?.document, '12ABC34501DE35');
  await assertNothingChanged(async () => {
    for (const document of ['111.444.777-36', '11.444.777/0001-62', '00000000000', '1234567890123', '12.ABC.345/01DE-34']) {
      assertFailure(await create(reseller.key, childBody({ document })), 400, ['document']);
    }
  });
});

test('phones normalised to 55 + area code + number from any common form', async () => {
  for (const [given, stored] of [
    ['11999998888', '5511999998888'],
    ['5511999998888', '5511999998888'],
    ['+55 (21) 3333-4444', '552133334444'],
    ['[11] 99999.8888', '5511999998888'],
  ]) {
    const { id } = await createChild(reseller.key, { phoneNumber: given, ownerCredentialPhoneNumber: given, limit: 0 });
    const row = await childRow(id);
    assert.equal(row?.phone, stored, given);
    assert.equal(row?.owner_phone, stored, given);
  }
});

test('e-mail unique across all child users, case-insensitively, also under another reseller and under concurrent creates', async () => {
  await createChild(reseller.key, { email: 'Unique.Shop@Example.com', limit: 0 });
  await assertNothingChanged(async () => {
    assertFailure(await create(reseller.key, childBody({ email: 'unique.shop@example.COM' })), 400, ['email']);
    assertFailure(await create(other.key, childBody({ email: ' UNIQUE.SHOP@EXAMPLE.COM ' })), 400, ['email']);
    // With another problem: both named.
    assertFailure(await create(other.key, childBody({ email: 'unique.shop@example.com', document: '123' })), 400, ['email', 'document']);
  });

  // Two creates of each reseller at once (a reseller has at most two passwords being hashed: see 'creations in a flood').
  const before = (await balanceOf(other.accountId)) + (await balanceOf(reseller.accountId));
  const results = await Promise.all(
    [other.key, other.key, reseller.key, reseller.key].map((key) => create(key, childBody({ email: 'race@example.com', limit: 1 }))),
  );
  assert.equal(results.filter((r) => r.status === 200).length, 1, JSON.stringify(results.map((r) => r.body)));
  for (const r of results.filter((x) => x.status !== 200)) assertFailure(r, 400, ['email']);
  assert.equal((await balanceOf(other.accountId)) + (await balanceOf(reseller.accountId)), before - 1);
});

test('an allotment the reseller cannot cover: 400, nothing created, nothing moved; the exact balance is enough', async () => {
  const poor = await gw.customer({ role: 'RESELLER', balance: 3 });
  await assertNothingChanged(async () => {
    assertFailure(await create(poor.key, childBody({ limit: 4 })), 400, ['limit']);
  }, [poor.accountId]);
  const { id } = await createChild(poor.key, { limit: 3 });
  assert.equal(await balanceOf(poor.accountId), 0);
  assert.equal(await balanceOf(id), 3);
});

test("list: the reseller's own children, paged, with totalRecords; another reseller sees none of them", async () => {
  const fresh = await gw.customer({ role: 'RESELLER', balance: 10 });
  const made: number[] = [];
  for (let i = 0; i < 3; i++) made.push((await createChild(fresh.key, { limit: 0 })).id);
  const all = await gw.call(fresh.key, 'GET', '/child-users');
  assertOk(all);
  assert.equal(all.body.totalRecords, 3);
  assert.deepEqual(
    all.body.object.map((c: { id: number }) => c.id),
    made,
  );
  for (const c of all.body.object) assert.equal(c.parentUserId, fresh.accountId);
  const page = await gw.call(fresh.key, 'GET', '/child-users?skip=1&limit=1');
  assert.equal(page.body.totalRecords, 3);
  assert.deepEqual(
    page.body.object.map((c: { id: number }) => c.id),
    [made[1]],
  );
  const others = await gw.call(other.key, 'GET', '/child-users?limit=1000');
  assert.ok(others.body.object.every((c: { id: number; parentUserId: number }) => !made.includes(c.id) && c.parentUserId === other.accountId));
  assertFailure(await gw.call(fresh.key, 'GET', '/child-users?limit=0'), 400, ['limit']);
  assertFailure(await gw.call(fresh.key, 'GET', '/child-users?skip=-1&limit=abc'), 400, ['skip', 'limit']);
});

test("another reseller's child ids, unknown ids and non-children: 404, nothing changes; bad ids 400", async () => {
  const { id } = await createChild(reseller.key, { limit: 2 });
  const keysBefore = await gw.core.db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', id).execute();
  await assertNothingChanged(async () => {
    for (const target of [id, customer.accountId, reseller.accountId, 999_999]) {
      assertFailure(await gw.call(other.key, 'POST', `/child-users/${target}/api-keys`, {}), 404);
      assertFailure(await gw.call(other.key, 'POST', `/child-users/${target}/credits`, { amount: 1 }), 404);
      assertFailure(await gw.call(other.key, 'POST', `/child-users/${target}/credits`, { amount: -1 }), 404);
    }
    assertFailure(await gw.call(reseller.key, 'POST', '/child-users/abc/credits', { amount: 1 }), 400);
    assertFailure(await gw.call(reseller.key, 'POST', '/child-users/0/api-keys', {}), 400);
    assertFailure(await gw.call(reseller.key, 'POST', `/child-users/${Number.MAX_SAFE_INTEGER + 2}/api-keys`, {}), 400);
  }, [reseller.accountId, other.accountId, id]);
  const keysAfter = await gw.core.db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', id).execute();
  assert.equal(keysAfter.length, keysBefore.length);
});

test('api keys: bad allow-list or body is a 400', async () => {
  const { id } = await createChild(reseller.key, { limit: 0 });
  assertFailure(await gw.call(reseller.key, 'POST', `/child-users/${id}/api-keys`, { allowedIps: ['not-an-ip'] }), 400, ['allowedIps']);
  assertFailure(await gw.call(reseller.key, 'POST', `/child-users/${id}/api-keys`, { allowedIps: '10.0.0.1' }), 400, ['allowedIps']);
  const res = await gw.app.inject({
    method: 'POST',
    url: `/child-users/${id}/api-keys`,
    headers: { 'x-api-key': reseller.key, 'content-type': 'application/json' },
    payload: '{',
  });
  assert.equal(res.statusCode, 400);
});

test('credits: positive moves reseller -> child, negative moves back; ledger entries on both; never below zero', async () => {
  const r = await gw.customer({ role: 'RESELLER', balance: 20 });
  const { id } = await createChild(r.key, { limit: 5 });
  const give = await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 7.5 });
  assertOk(give);
  assert.deepEqual(give.body.object, { childUserId: id, amount: 7.5, balance: 12.5, resellerBalance: 7.5 });
  const take = await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: -2.25 });
  assertOk(take);
  assert.deepEqual(take.body.object, { childUserId: id, amount: -2.25, balance: 10.25, resellerBalance: 9.75 });

  await assertNothingChanged(async () => {
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 9.76 }), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: -10.26 }), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 0 }), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 0.0000001 }), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: '1' }), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, {}), 400, ['amount']);
    assertFailure(await gw.call(r.key, 'POST', `/child-users/${id}/credits`), 400);
  }, [r.accountId, id]);

  // The ledger of each side sums to its balance.
  for (const account of [r.accountId, id]) {
    const sum = (await ledgerOf(account)).reduce((s, l) => s + Number(l.amount), 0);
    assert.equal(sum / 1_000_000, await balanceOf(account));
  }
  // The exact balance can be moved, in both directions.
  assertOk(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 9.75 }));
  assertOk(await gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: -20 }));
  assert.equal(await balanceOf(id), 0);
  assert.equal(await balanceOf(r.accountId), 20);
});

test('credits: concurrent moves never take a balance below zero', async () => {
  const r = await gw.customer({ role: 'RESELLER', balance: 50 });
  const { id } = await createChild(r.key, { limit: 0 });
  const results = await Promise.all(Array.from({ length: 12 }, () => gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: 10 })));
  assert.equal(results.filter((x) => x.status === 200).length, 5);
  for (const x of results.filter((y) => y.status !== 200)) assertFailure(x, 400, ['amount']);
  assert.equal(await balanceOf(r.accountId), 0);
  assert.equal(await balanceOf(id), 50);
  const back = await Promise.all(Array.from({ length: 8 }, () => gw.call(r.key, 'POST', `/child-users/${id}/credits`, { amount: -20 })));
  assert.equal(back.filter((x) => x.status === 200).length, 2);
  assert.equal(await balanceOf(id), 10);
  assert.equal(await balanceOf(r.accountId), 40);
});

test('the operations are in the OpenAPI document', async () => {
  const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  for (const path of ['/child-users', '/child-users/{id}/api-keys', '/child-users/{id}/credits']) assert.ok(doc.paths[path], path);
  const schema = doc.paths['/child-users'].post.requestBody.content['application/json'].schema;
  assert.deepEqual([...schema.required].sort(), [
    'document',
    'email',
    'fullName',
    'limit',
    'ownerCredentialEmail',
    'ownerCredentialFullName',
    'ownerCredentialPhoneNumber',
    'password',
    'phoneNumber',
  ]);
  assert.ok(doc.paths['/child-users'].post.responses['403']);
});

test('nothing a client sends produces a 500', async () => {
  const { id } = await createChild(reseller.key, { limit: 1 });
  const values: unknown[] = [null, true, 0, -1, 1.5, 1e308, -1e308, '', ' ', 'x'.repeat(5000), 'a\u0000b', '\u{1F600}'.repeat(10), [], [1], {}, { a: 1 }];
  const bodies: unknown[] = [...values, ...CHILD_FIELDS.flatMap((field) => values.map((v) => childBody({ [field]: v })))];
  for (const body of bodies) {
    const res = await create(reseller.key, body);
    assert.ok(res.status < 500, `${JSON.stringify(body).slice(0, 200)} -> ${res.status} ${JSON.stringify(res.body)}`);
  }
  const ids = ['-1', '0', '1.5', '1e3', '99999999999999999999', '%00', 'null', String(id)];
  for (const target of ids) {
    for (const body of [...values.map((amount) => ({ amount })), ...values.map((allowedIps) => ({ allowedIps })), ...values]) {
      for (const op of ['credits', 'api-keys']) {
        const res = await gw.call(reseller.key, 'POST', `/child-users/${target}/${op}`, body);
        assert.ok(res.status < 500, `${op} ${target} ${JSON.stringify(body).slice(0, 100)} -> ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  }
  for (const query of ['?skip=1e400', '?limit=%00', '?skip=-0', '?limit=1&limit=2', '?skip[]=1']) {
    const res = await gw.call(reseller.key, 'GET', `/child-users${query}`);
    assert.ok(res.status < 500, `${query} -> ${res.status}`);
  }
});

test('creations in a flood: a reseller has at most 2 passwords being hashed, the rest refused 429 with nothing written; another reseller creates meanwhile', async () => {
  const before = { count: await accountCount(), balance: await balanceOf(reseller.accountId) };
  const results = await Promise.all(Array.from({ length: 8 }, () => create(reseller.key, childBody({ limit: 1 }))));
  const created = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status !== 200);
  for (const r of created) assertOk(r);
  for (const r of refused) {
    assertFailure(r, 429);
    assert.equal(r.headers['retry-after'], '2');
  }
  assert.ok(created.length >= 1 && refused.length >= 1, `${created.length} created, ${refused.length} refused`);
  assert.equal(await accountCount(), before.count + created.length);
  assert.equal(await balanceOf(reseller.accountId), before.balance - created.length);
  assertOk(await create(other.key, childBody({ limit: 1 })));
});
