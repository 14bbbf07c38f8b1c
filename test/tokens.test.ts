import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import { initial } from '../src/db/migrations/001_initial.ts';
import { legacy } from '../src/db/migrations/002_legacy.ts';
import { childrenLinks } from '../src/db/migrations/003_children_links.ts';
import { webhooks } from '../src/db/migrations/004_webhooks.ts';
import { claimIndex } from '../src/db/migrations/005_claim_index.ts';
import { routeFallback } from '../src/db/migrations/006_route_fallback.ts';
import { waitingIndex } from '../src/db/migrations/007_waiting_index.ts';
import { GUESS_BUDGET, GUESS_WINDOW_MS } from '../src/tokens/store.ts';
import type { TokenTables } from '../src/tokens/tables.ts';
import { freshDatabase, startGateway, type TestDatabase, type TestGateway, type Customer } from './helpers.ts';
import { phones, wrongCode } from './phone.ts';

let gw: TestGateway;
let alice: Customer;
let bob: Customer;
let phone: ReturnType<typeof phones>;

before(async () => {
  gw = await startGateway({ GATEWAY_FETCH_ALLOW: '127.0.0.1' });
  phone = phones(gw);
  alice = await gw.customer({ balance: 10, farePrice: '0.10' });
  bob = await gw.customer({ balance: 10 });
});
after(() => gw.close());

const create = (key: string, body: unknown) => gw.call(key, 'POST', '/api-tokens/create', body);
const validate = (key: string, body: unknown) => gw.call(key, 'POST', '/api-tokens/validate', body);

/** The code as the phone received it: the text the carrier was handed. */
const codeOf = (requestId: string) => phone.codeOf(requestId);

test('create sends "{prefix}: {code}" by SMS, charges it, and answers the token message (code masked)', async () => {
  const res = await create(alice.key, { prefix: 'Acme', phoneNumber: '5511987650010', expireInMinutes: 5, route: alice.routeId });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.object, { content: 'Acme: ******', receivers: ['5511987650010'], sender: 'SMS Simulator' });
  const code = await codeOf(res.headers['x-request-id'] as string);
  const balance = await gw.call(alice.key, 'GET', '/balance');
  assert.equal(balance.body.object.balance, 9.9);

  const ok = await validate(alice.key, { token: code, phoneNumber: '5511987650010' });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body.object, { valid: true, phoneNumber: '5511987650010' });
  const again = await validate(alice.key, { token: code, phoneNumber: '5511987650010' });
  assert.equal(again.status, 400);
  assert.match(again.body.errors[0], /already used/);
});

test('each refusal is its own 400: unknown, wrong phone, phone required, expired, locked', async () => {
  assert.match((await validate(alice.key, { token: '000000' })).body.errors[0], /not valid/);

  const secure = await create(alice.key, { phoneNumber: '5511987650011', enforceSecureValidation: true });
  const code = await codeOf(secure.headers['x-request-id'] as string);
  const noPhone = await validate(alice.key, { token: code });
  assert.equal(noPhone.status, 400);
  assert.match(noPhone.body.errors[0], /phoneNumber/);
  const wrong = await validate(alice.key, { token: code, phoneNumber: '5511987650099' });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.errors[0], /not sent to this phone/);

  const expiring = await create(alice.key, { phoneNumber: '5511987650012', expireInMinutes: 1 });
  const expiringCode = await codeOf(expiring.headers['x-request-id'] as string);
  await gw.core.db.kysely
    .updateTable('tokens' as never)
    .set({ expires_at: Date.now() - 1 } as never)
    .where('phone' as never, '=', '5511987650012' as never)
    .execute();
  assert.match((await validate(alice.key, { token: expiringCode, phoneNumber: '5511987650012' })).body.errors[0], /expired/);

  const locking = await create(alice.key, { phoneNumber: '5511987650013' });
  const lockingCode = await codeOf(locking.headers['x-request-id'] as string);
  for (let i = 0; i < 5; i++) await validate(alice.key, { token: lockingCode === '999999' ? '999998' : '999999', phoneNumber: '5511987650013' });
  const locked = await validate(alice.key, { token: lockingCode, phoneNumber: '5511987650013' });
  assert.equal(locked.status, 400);
  assert.match(locked.body.errors[0], /locked/);
});

test('creation is limited per phone: the sixth in ten minutes is a 429 and is not charged', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await create(alice.key, { phoneNumber: '5511987650020' })).status, 200);
  const before = (await gw.call(alice.key, 'GET', '/balance')).body.object.balance;
  const limited = await create(alice.key, { phoneNumber: '5511987650020' });
  assert.equal(limited.status, 429);
  assert.equal(limited.body.hasError, true);
  assert.equal((await gw.call(alice.key, 'GET', '/balance')).body.object.balance, before);
});

test('bad input is a 400; another account cannot validate a code', async () => {
  assert.equal((await create(alice.key, {})).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: 'abc' })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', expireInMinutes: 0 })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', expireInMinutes: 24 * 60 + 1 })).status, 400);
  assert.equal((await create(alice.key, { phoneNumber: '5511987650030', route: 999999 })).status, 404);
  assert.equal((await validate(alice.key, { token: true })).status, 400);
  assert.equal((await create('not-a-key', { phoneNumber: '5511987650030' })).status, 401);

  const mine = await create(alice.key, { phoneNumber: '5511987650031' });
  const code = await codeOf(mine.headers['x-request-id'] as string);
  assert.equal((await validate(bob.key, { token: code, phoneNumber: '5511987650031' })).status, 400);
  assert.equal((await validate(alice.key, { token: code, phoneNumber: '5511987650031' })).status, 200, 'still valid for its owner');
});

test('the legacy /tokenmanager shares the store: created on the gateway, validated on the legacy interface', async () => {
  const res = await create(alice.key, { phoneNumber: '5511987650040' });
  const code = await codeOf(res.headers['x-request-id'] as string);
  const legacy = await gw.app.inject({
    method: 'PUT',
    url: '/api/v2/tokenmanager',
    headers: { 'auth-key': alice.key },
    payload: { TokenCode: code, PhoneNumber: '11987650040' },
  });
  assert.equal(legacy.statusCode, 200);
  assert.equal(legacy.json().Success, true);
  assert.equal((await validate(alice.key, { token: code, phoneNumber: '5511987650040' })).status, 400, 'single use across interfaces');
});

const tokens = (target: TestGateway = gw) => target.core.db.kysely.withTables<TokenTables>();

/** A 429 in the gateway's envelope with a Retry-After within the window. */
function assertGuessLimit(res: { status: number; body: any; headers: Record<string, unknown> }) {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assert.equal(res.body.hasError, true);
  assert.equal(res.body.object, null);
  assert.match(res.body.errors[0], /Too many wrong validation attempts/);
  const wait = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= GUESS_WINDOW_MS / 1000, `Retry-After: ${String(res.headers['retry-after'])}`);
}

test('without a phone, wrong guesses spend the account budget: then every validate is a 429 with Retry-After, even the right code', async () => {
  const carol = await gw.customer({ balance: 10 });
  const dave = await gw.customer({ balance: 10 });
  const res = await create(carol.key, { phoneNumber: '5511987651000' });
  const code = await codeOf(res.headers['x-request-id'] as string);
  for (let i = 0; i < GUESS_BUDGET; i++) {
    const wrong = await validate(carol.key, { token: wrongCode(code, i) });
    assert.equal(wrong.status, 400, `guess ${i + 1}: ${JSON.stringify(wrong.body)}`);
    assert.match(wrong.body.errors[0], /not valid/);
  }
  assertGuessLimit(await validate(carol.key, { token: wrongCode(code, GUESS_BUDGET) }));
  assertGuessLimit(await validate(carol.key, { token: code }));
  assertGuessLimit(await validate(carol.key, { token: Number(code) }));
  assertGuessLimit(await validate(carol.key, { token: code, phoneNumber: '5511987651000' }));
  const row = await tokens().selectFrom('tokens').select(['used_at', 'failed_attempts']).where('account_id', '=', carol.accountId).executeTakeFirstOrThrow();
  assert.deepEqual(row, { used_at: null, failed_attempts: 0 }, 'refused before any check');

  // Each account has its own budget.
  const other = await create(dave.key, { phoneNumber: '5511987651001' });
  assert.equal((await validate(dave.key, { token: await codeOf(other.headers['x-request-id'] as string) })).status, 200);
});

test('a right code gives its guess back: only refusals spend the budget', async () => {
  const erin = await gw.customer({ balance: 10 });
  const first = await codeOf((await create(erin.key, { phoneNumber: '5511987651100' })).headers['x-request-id'] as string);
  const second = await codeOf((await create(erin.key, { phoneNumber: '5511987651101' })).headers['x-request-id'] as string);
  const taken = new Set([first, second]);
  const guesses = Array.from({ length: GUESS_BUDGET + 2 }, (_, i) => wrongCode(first, i)).filter((g) => !taken.has(g));
  for (let i = 0; i < GUESS_BUDGET - 1; i++) assert.equal((await validate(erin.key, { token: guesses[i] })).status, 400);
  assert.equal((await validate(erin.key, { token: first })).status, 200);
  assert.equal((await validate(erin.key, { token: guesses[GUESS_BUDGET - 1] })).status, 400, 'the last guess of the budget');
  assertGuessLimit(await validate(erin.key, { token: second }));
});

test('two gateways sharing one database enforce one budget', async () => {
  const db = await freshDatabase();
  const one = await startGateway({}, {}, db);
  const two = await startGateway({}, { dispatch: false }, db);
  try {
    const phoneOfOne = phones(one);
    const frank = await one.customer({ balance: 10 });
    const res = await one.call(frank.key, 'POST', '/api-tokens/create', { phoneNumber: '5511987652000' });
    const code = await phoneOfOne.codeOf(res.headers['x-request-id'] as string);
    for (let i = 0; i < GUESS_BUDGET; i++) {
      const target = i % 2 === 0 ? one : two;
      const wrong = await target.call(frank.key, 'POST', '/api-tokens/validate', { token: wrongCode(code, i) });
      assert.equal(wrong.status, 400, `guess ${i + 1}`);
    }
    assertGuessLimit(await two.call(frank.key, 'POST', '/api-tokens/validate', { token: code }));
    assertGuessLimit(await one.call(frank.key, 'POST', '/api-tokens/validate', { token: code }));
  } finally {
    await two.close();
    await one.close();
    await db.drop();
  }
});

for (const n of [GUESS_BUDGET, 3 * GUESS_BUDGET]) {
  test(`${n} wrong guesses in parallel: exactly the budget is checked, the others are 429s`, async () => {
    const grace = await gw.customer({ balance: 10 });
    const res = await create(grace.key, { phoneNumber: `55119876530${n}` });
    const code = await codeOf(res.headers['x-request-id'] as string);
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => validate(grace.key, { token: wrongCode(code, i) })));
    assert.equal(answers.filter((a) => a.status === 400).length, GUESS_BUDGET);
    assert.equal(answers.filter((a) => a.status === 429).length, n - GUESS_BUDGET);
    for (const a of answers.filter((x) => x.status === 429)) assertGuessLimit(a);
    assertGuessLimit(await validate(grace.key, { token: code }));
    const budget = await tokens().selectFrom('token_guesses').select('failures').where('account_id', '=', grace.accountId).executeTakeFirstOrThrow();
    assert.equal(budget.failures, GUESS_BUDGET);
  });
}

test('five wrong guesses naming a phone lock every live token of that phone, not only the newest', async () => {
  const heidi = await gw.customer({ balance: 10 });
  const phoneNumber = '5511987654000';
  const older = await codeOf((await create(heidi.key, { phoneNumber })).headers['x-request-id'] as string);
  const newer = await codeOf((await create(heidi.key, { phoneNumber })).headers['x-request-id'] as string);
  const elsewhere = await codeOf((await create(heidi.key, { phoneNumber: '5511987654001' })).headers['x-request-id'] as string);
  const taken = new Set([older, newer, elsewhere]);
  const guesses = Array.from({ length: 8 }, (_, i) => wrongCode(older, i)).filter((g) => !taken.has(g));
  for (let i = 0; i < 5; i++) assert.equal((await validate(heidi.key, { token: guesses[i], phoneNumber })).status, 400);
  for (const code of [older, newer]) {
    const locked = await validate(heidi.key, { token: code, phoneNumber });
    assert.equal(locked.status, 400);
    assert.match(locked.body.errors[0], /locked/);
  }
  assert.match((await validate(heidi.key, { token: older })).body.errors[0], /locked/, 'without the phone too');
  assert.equal((await validate(heidi.key, { token: elsewhere, phoneNumber: '5511987654001' })).status, 200, "another phone's token is not locked");
});

test('a code is readable only while it can be used: reports mask it once the token is spent, events and the requests report never show it, tokens keep a keyed hash', async () => {
  const ivan = await gw.customer({ balance: 10 });
  assert.equal((await gw.call(ivan.key, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', topics: ['message.status', 'message.reply'] })).status, 200);
  assert.equal(
    (
      await gw.admin('PUT', `/admin/accounts/${ivan.accountId}/callbacks`, {
        replyUrl: 'http://127.0.0.1:9/legacy-reply',
        statusUrl: 'http://127.0.0.1:9/legacy-status',
      })
    ).status,
    200,
  );
  const db = gw.core.db.kysely;
  const message = (requestId: string) =>
    db.selectFrom('messages').select(['id', 'content', 'status']).where('request_id', '=', requestId).executeTakeFirstOrThrow();
  const sentContent = async (requestId: string) =>
    (await gw.call(ivan.key, 'GET', `/reports/messages/sent?requestId=${requestId}`)).body.object[0].content as string;
  const detailedContent = async (requestId: string) =>
    (await gw.app.inject({ method: 'GET', url: `/api/v2/detailedreporting?RequestUniqueId=${requestId}`, headers: { 'auth-key': ivan.key } })).json().Object[0]
      .Content as string;

  const phoneNumber = '5511987655000';
  const res = await create(ivan.key, { prefix: 'Acme', phoneNumber });
  const requestId = res.headers['x-request-id'] as string;
  const code = await codeOf(requestId);
  const text = `Acme: ${code}`;
  assert.equal(await phone.textOf(requestId), text, 'the phone got the code');
  const delivered = await gw.eventually(
    () => message(requestId),
    (m) => m.status === 'DELIVERED',
    'the token SMS delivered',
  );
  assert.equal((await db.selectFrom('messages').select('otp').where('id', '=', delivered.id).executeTakeFirstOrThrow()).otp, 1);

  // While it can be used, the account reads its token message whole in the sent reports (as clients in the field do).
  assert.equal(await sentContent(requestId), text);
  assert.equal(await detailedContent(requestId), text);
  // The requests report never shows it.
  const request = await db.selectFrom('requests').select('content').where('id', '=', requestId).executeTakeFirstOrThrow();
  assert.equal(request.content, 'Acme: ******');
  assert.equal((await gw.call(ivan.key, 'GET', `/reports/messages/requests?requestId=${requestId}`)).body.object[0].content, 'Acme: ******');
  // The token keeps only an HMAC keyed with the server's secret.
  const token = await tokens().selectFrom('tokens').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
  assert.ok(!JSON.stringify(token).includes(code));
  assert.notEqual(token.code_hash, createHash('sha256').update(`token:${ivan.accountId}:${code}`).digest('hex'), 'not the old unkeyed hash');
  const key = await db.selectFrom('settings').select('value').where('name', '=', 'token_hmac_key').executeTakeFirstOrThrow();
  assert.match(key.value, /^[0-9a-f]{64}$/);
  assert.equal(
    token.code_hash,
    createHmac('sha256', Buffer.from(key.value, 'hex')).update(`${ivan.accountId}:${code}`).digest('hex'),
    'HMAC-SHA256 with the server key',
  );

  // Events never carry it: a reply to the token SMS carries the text it answers, masked.
  await gw.core.simulator.inbound(phoneNumber, null, 'thanks');
  const bodies = await gw.eventually(
    async () =>
      (await db
        .selectFrom('webhook_deliveries' as never)
        .select('body' as never)
        .where('account_id' as never, '=', ivan.accountId as never)
        .execute()) as { body: string }[],
    (rows) => rows.filter((r) => r.body.includes('thanks')).length === 2,
    'the reply events',
  );
  for (const { body } of bodies) assert.ok(!body.includes(text), body);
  const replies = bodies.map((r) => JSON.parse(r.body)).filter((b) => b.type === 'message.reply' || 'SentContent' in b);
  assert.deepEqual(
    replies.map((b) => b.data?.message?.content ?? b.SentContent),
    ['Acme: ******', 'Acme: ******'],
  );

  // Used: every report masks it, and the content filter does not find it.
  assert.equal((await validate(ivan.key, { token: code, phoneNumber })).status, 200);
  assert.equal(await sentContent(requestId), 'Acme: ******');
  assert.equal((await gw.call(ivan.key, 'GET', `/reports/messages/sent?content=${code}`)).body.totalRecords, 0, 'the content filter does not see the code');
  // (The legacy reports answer a repeated query within 30 s with 202: the reply report stands for them here.)
  const replyReport = await gw.app.inject({ method: 'GET', url: `/api/v2/replyreporting?RequestUniqueId=${requestId}`, headers: { 'auth-key': ivan.key } });
  assert.equal(replyReport.json().Object[0].SentContent, 'Acme: ******');

  // Expired, or locked: masked too.
  const expiring = (await create(ivan.key, { prefix: 'Acme', phoneNumber: '5511987655001' })).headers['x-request-id'] as string;
  const expiringCode = await codeOf(expiring);
  assert.equal(await sentContent(expiring), `Acme: ${expiringCode}`);
  await tokens()
    .updateTable('tokens')
    .set({ expires_at: Date.now() - 1 })
    .where('request_id', '=', expiring)
    .execute();
  assert.equal(await sentContent(expiring), 'Acme: ******');
  const locking = (await create(ivan.key, { prefix: 'Acme', phoneNumber: '5511987655002' })).headers['x-request-id'] as string;
  await codeOf(locking);
  await tokens().updateTable('tokens').set({ failed_attempts: 5 }).where('request_id', '=', locking).execute();
  assert.equal(await sentContent(locking), 'Acme: ******');

  // A message that never reaches the phone (blocked) does not keep its code.
  await db.insertInto('blocklist').values({ account_id: ivan.accountId, phone: '5511987655009', created_at: Date.now() }).execute();
  const blocked = await create(ivan.key, { prefix: 'Acme', phoneNumber: '5511987655009' });
  const blockedRow = await message(blocked.headers['x-request-id'] as string);
  assert.deepEqual({ status: blockedRow.status, content: blockedRow.content }, { status: 'BLOCKED', content: 'Acme: ******' });
});

/**
 * A database as the code before migration 008 left it: migrations 001 to 007
 * only. Returns a plain Kysely on it (no gateway), to write rows the way that
 * code did.
 */
async function databaseBefore008(db: TestDatabase): Promise<Kysely<any>> {
  const kysely: Kysely<any> = db.pgSchema
    ? new Kysely({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.env.DATABASE_URL, max: 2, options: `-c search_path=${db.pgSchema}` }) }),
      })
    : new Kysely({ dialect: new SqliteDialect({ database: new SQLite(join(db.env.GATEWAY_DATA_DIR ?? '', 'gateway.sqlite')) }) });
  const dialect = db.pgSchema ? 'postgres' : 'sqlite';
  const migrations: Record<string, Migration> = {
    '001_initial': initial(dialect),
    '002_legacy': legacy(dialect),
    '003_children_links': childrenLinks(dialect),
    '004_webhooks': webhooks(dialect),
    '005_claim_index': claimIndex,
    '006_route_fallback': routeFallback,
    '007_waiting_index': waitingIndex,
  };
  const migrator = new Migrator({
    db: kysely,
    provider: { getMigrations: async () => migrations },
    ...(db.pgSchema ? { migrationTableSchema: db.pgSchema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  return kysely;
}

test('the migration retires tokens hashed without a key and masks the texts of earlier token messages', async () => {
  const db = await freshDatabase();
  const old = await databaseBefore008(db);
  const now = Date.now();
  let accountId = 0;
  let routeId = 0;
  try {
    accountId = Number(
      (
        await old
          .insertInto('accounts')
          .values({ name: 'Judy', role: 'CUSTOMER', timezone: 'America/Sao_Paulo', balance: 10_000_000, parent_id: null, active: 1, created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    routeId = Number(
      (
        await old
          .insertInto('routes')
          .values({
            display_name: 'SMS Simulator',
            product_name: 'SMS',
            product_id: 1,
            fare_price: 100_000,
            reply_fare_price: 20_000,
            channel: 'SMS',
            connector: 'simulator',
            created_at: now,
            fallback_route_id: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    await old.insertInto('account_routes').values({ account_id: accountId, route_id: routeId }).execute();
    const oldHash = (code: string) => createHash('sha256').update(`token:${accountId}:${code}`).digest('hex');
    for (const [id, source, content] of [
      ['r-token', 'token', 'Acme: 123456'],
      ['r-plain', 'gateway', 'Meeting at 123456'],
    ] as const) {
      await old
        .insertInto('requests')
        .values({
          id,
          account_id: accountId,
          route_id: routeId,
          channel: 'SMS',
          product: 'SMS',
          content,
          tag: null,
          custom: null,
          sender: null,
          source,
          message_count: 1,
          cost: 0,
          schedule_at: now,
          created_at: now,
        })
        .execute();
      await old
        .insertInto('messages')
        .values({
          id: `m-${id}`,
          account_id: accountId,
          request_id: id,
          route_id: routeId,
          connector: 'simulator',
          channel: 'SMS',
          receiver: '5511987656000',
          content,
          payload: null,
          segments: 1,
          cost: 0,
          status: 'DELIVERED',
          status_details: null,
          tag: null,
          custom: null,
          sender: null,
          created_at: now,
          schedule_at: now,
          due_at: now,
          lease_owner: null,
          attempts: 1,
          sent_at: now,
          carrier_id: `sim-D-${id}`,
          status_at: now,
        })
        .execute();
    }
    await old
      .insertInto('tokens')
      .values([
        {
          account_id: accountId,
          phone: '5511987656000',
          code_hash: oldHash('123456'),
          enforce_phone: 0,
          request_id: 'r-token',
          created_at: now,
          expires_at: now + 3_600_000,
          used_at: null,
          failed_attempts: 0,
        },
        {
          account_id: accountId,
          phone: '5511987656000',
          code_hash: oldHash('654321'),
          enforce_phone: 0,
          request_id: null,
          created_at: now - 60_000,
          expires_at: now + 3_600_000,
          used_at: now - 1000,
          failed_attempts: 0,
        },
      ])
      .execute();
  } finally {
    await old.destroy();
  }

  const gw2 = await startGateway({}, {}, db);
  try {
    const key = (await gw2.admin('POST', `/admin/accounts/${accountId}/api-keys`, {})).body.key as string;
    const after = await gw2.core.db.kysely
      .withTables<TokenTables>()
      .selectFrom('tokens')
      .select(['code_hash', 'expires_at'])
      .where('account_id', '=', accountId)
      .execute();
    assert.equal(after.length, 2);
    for (const t of after) {
      assert.equal(t.code_hash, 'retired');
      assert.ok(t.expires_at <= Date.now());
    }
    const refused = await gw2.call(key, 'POST', '/api-tokens/validate', { token: '123456' });
    assert.equal(refused.status, 400, 'a code sent before the upgrade must be asked for again');
    const messages = await gw2.core.db.kysely
      .selectFrom('messages')
      .select(['id', 'content', 'otp'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    assert.deepEqual(messages, [
      { id: 'm-r-plain', content: 'Meeting at 123456', otp: 0 },
      { id: 'm-r-token', content: 'Acme: ******', otp: 1 },
    ]);
    const requests = await gw2.core.db.kysely.selectFrom('requests').select(['id', 'content']).where('account_id', '=', accountId).orderBy('id').execute();
    assert.deepEqual(requests, [
      { id: 'r-plain', content: 'Meeting at 123456' },
      { id: 'r-token', content: 'Acme: ******' },
    ]);
    const secret = await gw2.core.db.kysely.selectFrom('settings').select('value').where('name', '=', 'token_hmac_key').executeTakeFirstOrThrow();
    assert.match(secret.value, /^[0-9a-f]{64}$/);

    // New tokens work after the migration.
    const phoneOf2 = phones(gw2);
    const res = await gw2.call(key, 'POST', '/api-tokens/create', { phoneNumber: '5511987656000', route: routeId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const code = await phoneOf2.codeOf(res.headers['x-request-id'] as string);
    assert.equal((await gw2.call(key, 'POST', '/api-tokens/validate', { token: code })).status, 200);
  } finally {
    await gw2.close();
    await db.drop();
  }
});
