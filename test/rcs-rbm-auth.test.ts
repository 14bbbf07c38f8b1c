import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startGateway, type TestGateway } from './helpers.ts';
import { rcsCustomer } from './rcs-fixtures.ts';
import { RbmSim } from '../tools/rbm-sim/server.ts';
import { RbmCarrier } from '../src/carriers/rbm/connector.ts';
import { JWT_BEARER_GRANT, RBM_SCOPE, parseServiceAccount } from '../src/carriers/rbm/auth.ts';
import { buildCarriers, readCarriersFile } from '../src/carriers/connections.ts';
import { ConfigError } from '../src/config.ts';
import type { SubmitResult } from '../src/carriers/carrier.ts';

/**
 * RBM service-account authentication against the RBM simulator's token
 * endpoint: JWTs signed with keys made here (none is committed), tokens
 * minted, reused, refreshed on expiry and after a 401, a wrong key refused.
 */

const SECRET = 'rbm-auth-test-secret';
const EMAIL = 'gateway@test-project.iam.gserviceaccount.com';
const KEY_ID = 'key-1';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const good = rsa();
const wrong = rsa();

/** A service-account key file as Google hands it out. */
const keyJson = (privateKey: KeyObject, tokenUri: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: KEY_ID,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: EMAIL,
    client_id: '1234567890',
    token_uri: tokenUri,
    ...extra,
  });

let gw: TestGateway;
/** Hour-long tokens: rbm-sa (the right key) and rbm-badkey (a key the platform does not know). */
let sim: RbmSim;
/** Two-second tokens: rbm-short. */
let shortSim: RbmSim;
let dir: string;
let rcs: Awaited<ReturnType<typeof rcsCustomer>>;

before(async () => {
  const account = { clientEmail: EMAIL, publicKey: good.publicKey, keyId: KEY_ID };
  sim = await new RbmSim({ secret: SECRET, serviceAccount: account, deliveryMs: 20 }).start();
  shortSim = await new RbmSim({ secret: SECRET, serviceAccount: account, tokenLifetimeS: 2, deliveryMs: 20 }).start();
  dir = mkdtempSync(join(tmpdir(), 'rbm-auth-'));
  writeFileSync(join(dir, 'good-key.json'), keyJson(good.privateKey, sim.tokenUrl));
  writeFileSync(join(dir, 'wrong-key.json'), keyJson(wrong.privateKey, sim.tokenUrl));
  process.env.RBM_AUTH_SECRET = SECRET;
  process.env.RBM_AUTH_SHORT_KEY = keyJson(good.privateKey, shortSim.tokenUrl);
  const common = { agentId: 'test-agent', webhookSecretEnv: 'RBM_AUTH_SECRET' };
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({
      rbm: [
        // Relative: found beside the carriers file.
        { name: 'rbm-sa', baseUrl: sim.url, serviceAccountFile: 'good-key.json', ...common },
        { name: 'rbm-badkey', baseUrl: sim.url, serviceAccountFile: join(dir, 'wrong-key.json'), ...common },
        { name: 'rbm-short', baseUrl: shortSim.url, serviceAccountEnv: 'RBM_AUTH_SHORT_KEY', ...common },
      ],
    }),
  );
  gw = await startGateway({ GATEWAY_CARRIERS_FILE: file, GATEWAY_PUBLIC_URL: 'https://gw.example.com' });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const events = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/rbm/events`;
  sim.webhookUrl = `${events}/rbm-sa`;
  shortSim.webhookUrl = `${events}/rbm-short`;
  rcs = await rcsCustomer(gw, { balance: 10, farePrice: '0.5', connector: 'rbm-sa' });
});
after(async () => {
  await gw.close();
  await sim.stop();
  await shortSim.stop();
  rmSync(dir, { recursive: true, force: true });
});

const phone = (n: number) => `55219${String(n).padStart(4, '0')}6666`;
const post = (key: string, body: unknown) => gw.call(key, 'POST', '/messages/rcs/basic/send', body);
const balance = async (key: string) => (await gw.call(key, 'GET', '/balance')).body.object.balance as number;
const requestIdOf = (res: Awaited<ReturnType<typeof post>>) => {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.headers['x-request-id'] as string;
};
const messagesOf = (requestId: string) =>
  gw.core.db.kysely.selectFrom('messages').select(['id', 'status', 'status_details', 'attempts']).where('request_id', '=', requestId).execute();
const delivered = (requestId: string) =>
  gw.eventually(
    () => messagesOf(requestId),
    (rows) => rows.length > 0 && rows.every((m) => m.status === 'DELIVERED'),
    `request ${requestId} DELIVERED`,
  );

test('sends through a service-account connection are DELIVERED; one token serves them all, concurrent ones included', async () => {
  // Five receivers at once: the connector's workers all ask for a token together and share one exchange.
  const first = requestIdOf(await post(rcs.key, { receivers: [1, 2, 3, 4, 5].map(phone), message: 'Olá, conta de serviço' }));
  await delivered(first);
  for (const n of [6, 7]) await delivered(requestIdOf(await post(rcs.key, { receivers: [phone(n)], message: `again ${n}` })));
  assert.equal(sim.tokens.grants, 1, 'one token for every send');
  assert.equal(sim.unauthorized, 0);
  const [row] = await messagesOf(first);
  assert.ok(sim.received.some((m) => m.messageId === row?.id && m.agentId === 'test-agent'));
});

test('a token the platform revoked (401) is dropped, a new one minted, and the send goes through', async () => {
  const grants = sim.tokens.grants;
  sim.tokens.revokeAll();
  const requestId = requestIdOf(await post(rcs.key, { receivers: [phone(8)], message: 'after revocation' }));
  await delivered(requestId);
  assert.equal(sim.unauthorized, 1, 'the old token was refused once');
  assert.equal(sim.tokens.grants, grants + 1, 'one new token');
  const [row] = await messagesOf(requestId);
  assert.equal(row?.attempts, 1, 'retried inside the same attempt, not by the outbox');
});

test('an expired token is refreshed before it is used again', async () => {
  const short = await rcsCustomer(gw, { balance: 10, farePrice: '0.5', connector: 'rbm-short' });
  await delivered(requestIdOf(await post(short.key, { receivers: [phone(9)], message: 'first token' })));
  assert.equal(shortSim.tokens.grants, 1);
  await new Promise((r) => setTimeout(r, 2100)); // the token's two seconds are over
  await delivered(requestIdOf(await post(short.key, { receivers: [phone(10)], message: 'second token' })));
  assert.equal(shortSim.tokens.grants, 2, 'a new token was minted');
  assert.equal(shortSim.unauthorized, 0, 'the expired one was not used');
});

test('a key the platform does not know: nothing delivered, a clear status, charged once while it waits', async () => {
  const bad = await rcsCustomer(gw, { balance: 10, farePrice: '0.5', connector: 'rbm-badkey' });
  const grants = sim.tokens.grants;
  const received = sim.received.length;
  const requestId = requestIdOf(await post(bad.key, { receivers: [phone(11)], message: 'never sent' }));
  // Two attempts: the retry must not debit again.
  const [row] = await gw.eventually(
    () => messagesOf(requestId),
    (rows) => rows[0]?.status === 'QUEUED' && (rows[0]?.attempts ?? 0) >= 2,
    'a second failed attempt',
  );
  assert.match(row?.status_details ?? '', /^RBM: service account token: .*\/token answered HTTP 400 invalid_grant: Invalid JWT Signature\.$/);
  assert.equal(sim.received.length, received, 'nothing reached the platform');
  assert.equal(sim.tokens.grants, grants, 'no token was issued');
  assert.equal(await balance(bad.key), 9.5, 'debited once');
  const ledger = await gw.core.db.kysely.selectFrom('ledger').select(['amount']).where('request_id', '=', requestId).execute();
  assert.equal(ledger.length, 1, 'one ledger row: the debit at accept');
});

test('a refused key is logged as an error naming the fix; the send is a retryable failure', async () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const carrier = new RbmCarrier({
    name: 'direct',
    baseUrl: sim.url,
    agentId: 'a',
    serviceAccount: parseServiceAccount(keyJson(wrong.privateKey, sim.tokenUrl)),
    webhookSecret: SECRET,
    logger,
  });
  await carrier.start({ receipt: async () => undefined, inbound: async () => undefined, unfinished: async () => [] });
  const results: SubmitResult[] = [];
  await carrier.submit(
    [{ id: `bad-key-${Date.now()}`, receiver: phone(12), content: 'x', channel: 'RCS', payload: { kind: 'basic', text: 'x' }, sender: null }],
    (_id, r) => results.push(r),
  );
  await carrier.stop();
  assert.equal(results.length, 1);
  assert.equal(results[0]?.ok, false);
  assert.equal(results[0]?.ok === false && results[0].retry, true);
  const errors = lines.filter((l) => l.level === 50);
  assert.equal(errors.length, 1);
  assert.match(errors[0]?.msg ?? '', /answered HTTP 400 invalid_grant: Invalid JWT Signature\.; check the service account key/);
});

test('the token endpoint unreachable: a retryable failure naming it', async () => {
  // A key whose token_uri has nothing listening.
  const closed = await new RbmSim({ secret: SECRET }).start();
  const deadUri = closed.tokenUrl;
  await closed.stop();
  const logger = pino({ level: 'silent' });
  const down = new RbmCarrier({
    name: 'down',
    baseUrl: sim.url,
    agentId: 'a',
    serviceAccount: parseServiceAccount(keyJson(good.privateKey, deadUri)),
    webhookSecret: SECRET,
    logger,
  });
  await down.start({ receipt: async () => undefined, inbound: async () => undefined, unfinished: async () => [] });
  const results: SubmitResult[] = [];
  await down.submit(
    [{ id: `down-${Date.now()}`, receiver: phone(13), content: 'x', channel: 'RCS', payload: { kind: 'basic', text: 'x' }, sender: null }],
    (_id, r) => results.push(r),
  );
  await down.stop();
  assert.equal(results[0]?.ok === false && results[0].retry, true, JSON.stringify(results));
  assert.match(results[0]?.ok === false ? results[0].error : '', /^RBM: service account token: .*\/token: fetch failed \(ECONNREFUSED\)$/);
});

test('the token endpoint answering 5xx: a retryable failure and a warning (not an error: nothing to fix in the key)', async () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const carrier = new RbmCarrier({
    name: 'outage',
    baseUrl: sim.url,
    agentId: 'a',
    serviceAccount: parseServiceAccount(keyJson(good.privateKey, sim.tokenUrl)),
    webhookSecret: SECRET,
    logger,
  });
  await carrier.start({ receipt: async () => undefined, inbound: async () => undefined, unfinished: async () => [] });
  const received = sim.received.length;
  sim.tokenOutage = 503;
  const results: SubmitResult[] = [];
  try {
    await carrier.submit(
      [{ id: `outage-${Date.now()}`, receiver: phone(14), content: 'x', channel: 'RCS', payload: { kind: 'basic', text: 'x' }, sender: null }],
      (_id, r) => results.push(r),
    );
  } finally {
    sim.tokenOutage = null;
    await carrier.stop();
  }
  assert.equal(results[0]?.ok === false && results[0].retry, true, JSON.stringify(results));
  assert.match(results[0]?.ok === false ? results[0].error : '', /answered HTTP 503 internal_failure: the token service is down/);
  assert.equal(sim.received.length, received);
  assert.deepEqual(
    lines.map((l) => l.level),
    [40],
    'one warning',
  );
});

test('the simulated token endpoint checks the assertion as Google does: signature, iss, aud, scope, lifetime', async () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: EMAIL, scope: RBM_SCOPE, aud: sim.tokenUrl, iat: now, exp: now + 3600 };
  const jwt = (c: Record<string, unknown>, key = good.privateKey, header: Record<string, unknown> = { alg: 'RS256', typ: 'JWT', kid: KEY_ID }) => {
    const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(c)).toString('base64url')}`;
    return `${input}.${sign('RSA-SHA256', Buffer.from(input), key).toString('base64url')}`;
  };
  const exchange = async (assertion: string, grant = JWT_BEARER_GRANT) => {
    const res = await fetch(sim.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grant, assertion }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const ok = await exchange(jwt(claims));
  assert.equal(ok.status, 200);
  assert.equal(ok.body.token_type, 'Bearer');
  assert.equal(ok.body.expires_in, 3600);
  const agentCall = (token: string) =>
    fetch(`${sim.url}/v1/phones/+${phone(20)}/capabilities`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
  assert.equal(await agentCall(String(ok.body.access_token)), 200, 'an issued token opens the agent API');
  assert.equal(await agentCall('made-up'), 401);
  const refusals: [string, string, RegExp][] = [
    [jwt(claims, wrong.privateKey), JWT_BEARER_GRANT, /Invalid JWT Signature/],
    [jwt(claims, good.privateKey, { alg: 'RS256', kid: 'other-key' }), JWT_BEARER_GRANT, /Invalid JWT Signature/],
    [jwt({ ...claims, iss: 'someone@else.iam.gserviceaccount.com' }), JWT_BEARER_GRANT, /account not found/],
    [jwt({ ...claims, aud: 'https://oauth2.example.com/token' }), JWT_BEARER_GRANT, /aud must be/],
    [jwt({ ...claims, scope: 'https://www.googleapis.com/auth/cloud-platform' }), JWT_BEARER_GRANT, /scope/],
    [jwt({ ...claims, iat: now - 7200, exp: now - 3600 }), JWT_BEARER_GRANT, /short-lived token/],
    [jwt({ ...claims, exp: now + 7200 }), JWT_BEARER_GRANT, /short-lived token/],
    [jwt(claims), 'client_credentials', /grant_type/],
  ];
  for (const [assertion, grant, why] of refusals) {
    const res = await exchange(assertion, grant);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(String(res.body.error_description), why);
  }
});

test('config: exactly one credential, a readable key file, a key with a private key; clear start errors', () => {
  process.env.RBM_AUTH_TOKEN = 'static';
  const log = pino({ level: 'silent' });
  const base = { name: 'r', baseUrl: 'http://127.0.0.1:1', agentId: 'a', webhookSecretEnv: 'RBM_AUTH_SECRET' };
  const start = (connection: Record<string, unknown>) => {
    const file = join(dir, `carriers-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ rbm: [{ ...base, ...connection }] }));
    return buildCarriers(readCarriersFile(file), process.env, log);
  };
  const refused = (connection: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => start(connection),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      JSON.stringify(connection),
    );

  refused(
    { tokenEnv: 'RBM_AUTH_TOKEN', serviceAccountFile: 'good-key.json' },
    /\/rbm\/0: give exactly one of tokenEnv, serviceAccountFile, serviceAccountEnv \(found tokenEnv and serviceAccountFile\)/,
  );
  refused({ serviceAccountFile: 'good-key.json', serviceAccountEnv: 'RBM_AUTH_SHORT_KEY' }, /found serviceAccountFile and serviceAccountEnv/);
  refused({}, /give exactly one of tokenEnv, serviceAccountFile, serviceAccountEnv \(found none\)/);
  refused({ serviceAccountFile: 'missing.json' }, /RBM connection "r": cannot read serviceAccountFile .*missing\.json \(ENOENT/);
  refused({ serviceAccountEnv: 'RBM_AUTH_UNSET' }, /environment variable RBM_AUTH_UNSET \(serviceAccountEnv\), its service-account key JSON, is not set/);

  const { private_key: _dropped, ...noPrivateKey } = JSON.parse(keyJson(good.privateKey, sim.tokenUrl)) as Record<string, unknown>;
  writeFileSync(join(dir, 'no-private-key.json'), JSON.stringify(noPrivateKey));
  refused({ serviceAccountFile: 'no-private-key.json' }, /no-private-key\.json is not a usable service-account key: it has no private_key/);
  writeFileSync(join(dir, 'bad-pem.json'), keyJson(good.privateKey, sim.tokenUrl).replace(/MII[A-Za-z0-9+/]{20}/, 'MIIxxxxxxxxxxxxxxxxxxxx'));
  refused({ serviceAccountFile: 'bad-pem.json' }, /private_key is not a PEM private key/);
  writeFileSync(join(dir, 'not-json.json'), 'client_email=x');
  refused({ serviceAccountFile: 'not-json.json' }, /not-json\.json is not a usable service-account key: it is not JSON/);
  process.env.RBM_AUTH_USER_KEY = JSON.stringify({ type: 'authorized_user', client_id: 'x' });
  refused({ serviceAccountEnv: 'RBM_AUTH_USER_KEY' }, /"type" must be "service_account"/);

  // Each credential alone builds a connection.
  assert.equal(start({ tokenEnv: 'RBM_AUTH_TOKEN' }).length, 1);
  assert.equal(start({ serviceAccountFile: 'good-key.json' }).length, 1);
  assert.equal(start({ serviceAccountEnv: 'RBM_AUTH_SHORT_KEY' }).length, 1);
});
