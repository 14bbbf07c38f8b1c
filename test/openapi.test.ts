import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startGateway, type Customer, type TestGateway } from './helpers.ts';
import { interfaceOf, operations as documentOperations } from './openapi-operations.ts';

/*
 * The OpenAPI document (GET /openapi.json; docs/api.md): it passes the
 * linter (Redocly CLI with redocly.yaml), every operation is described,
 * declares the credential of its interface and documents its answers; and
 * the credential it declares is the one its route takes.
 */

let gw: TestGateway;
let alice: Customer;
/** A browser panel session of alice's account (its cookie). */
let panelCookie: string;
let doc: any;

before(async () => {
  gw = await startGateway();
  alice = await gw.customer();
  await gw.admin('POST', `/admin/accounts/${alice.accountId}/panel-users`, { email: 'alice@acme.example', password: 'correct horse battery' });
  const signIn = await gw.app.inject({
    method: 'POST',
    url: '/panel/api/session',
    payload: { email: 'alice@acme.example', password: 'correct horse battery' },
  });
  panelCookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
  const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = res.json();
});
after(() => gw.close());

const REPO = fileURLToPath(new URL('..', import.meta.url));
const operations = () => documentOperations(doc);

test('the document passes the OpenAPI linter (Redocly CLI, redocly.yaml): no error, no warning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const cli = join(REPO, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    // Offline: the built-in rules only; no telemetry, no update check.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' };
    const run = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', join(REPO, 'redocly.yaml'), '--format=json'], {
      cwd: dir,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; code?: number }) => err);
    const report = JSON.parse(String(run.stdout)) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(problems, [], `linter problems:\n${problems.slice(0, 50).join('\n')}`);
    assert.equal(report.totals.errors, 0);
    assert.equal(report.totals.warnings, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every operation has an operationId (unique), a summary, a description and defined tags', () => {
  const ops = operations();
  assert.ok(ops.length > 90, `${ops.length} operations`);
  const tags = new Set((doc.tags as { name: string }[]).map((t) => t.name));
  const ids = new Set<string>();
  for (const { op, name } of ops) {
    assert.ok(typeof op.operationId === 'string' && op.operationId.length > 0, `${name}: operationId`);
    assert.ok(!ids.has(op.operationId), `${name}: operationId ${op.operationId} used twice`);
    ids.add(op.operationId);
    assert.ok(typeof op.summary === 'string' && op.summary.length > 0, `${name}: summary`);
    assert.ok(typeof op.description === 'string' && op.description.length >= 40, `${name}: description`);
    assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${name}: tags`);
    for (const tag of op.tags) assert.ok(tags.has(tag), `${name}: tag ${tag} is not in the document's tags`);
  }
  for (const path of ['/healthz', '/readyz', '/metrics', '/s/{code}', '/media/{name}', '/admin/accounts', '/api/v2/send', '/messages/sms/send']) {
    assert.ok(doc.paths[path], `${path} is documented`);
  }
});

test('each interface declares its own credential: operator bearer, legacy auth-key, gateway x-api-key, public none', () => {
  const schemes = doc.components.securitySchemes;
  const expected = {
    operator: { type: 'http', scheme: 'bearer' },
    legacy: { type: 'apiKey', in: 'header', name: 'auth-key' },
    gateway: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    panel: { type: 'apiKey', in: 'cookie', name: 'gw_session' },
  };
  // The panel's operations before sign-in take no credential.
  const panelPublic = new Set(['POST /panel/api/session', 'GET /panel/api/info']);
  assert.equal(doc.security, undefined, 'no document-wide default: each operation says what it needs');
  for (const { path, op, name } of operations()) {
    const kind = interfaceOf(path);
    assert.ok(Array.isArray(op.security), `${name}: security`);
    if (kind === 'public' || panelPublic.has(name)) {
      assert.deepEqual(op.security, [], `${name}: public`);
      continue;
    }
    assert.equal(op.security.length, 1, `${name}: one requirement`);
    const names = Object.keys(op.security[0]);
    assert.equal(names.length, 1, `${name}: one scheme`);
    const scheme = schemes[names[0] as string];
    for (const [key, value] of Object.entries(expected[kind])) assert.equal(scheme?.[key], value, `${name}: ${kind} scheme ${names[0]}.${key}`);
    // The credential is the security scheme; Legacy v2 lists its auth-key header as an optional parameter too (legacy/docs.ts).
    const params = (op.parameters ?? []) as { in: string; name: string; required?: boolean }[];
    const keys = params.filter((p) => p.in === 'header' && ['x-api-key', 'auth-key', 'authorization'].includes(p.name.toLowerCase()));
    if (kind === 'legacy')
      assert.deepEqual(
        keys.map((p) => [p.name, p.required]),
        [['auth-key', false]],
        `${name}: auth-key parameter`,
      );
    else assert.deepEqual(keys, [], `${name}: key parameter`);
  }
});

test('the credential each operation declares is the one its route takes; without it the answer is 401', async () => {
  const credential: Record<string, Record<string, string>> = {
    operatorToken: { authorization: `Bearer ${ADMIN_TOKEN}` },
    legacyAuthKey: { 'auth-key': alice.key },
    gatewayApiKey: { 'x-api-key': alice.key },
    panelSession: { cookie: panelCookie },
  };
  for (const { path, method, op, name } of operations()) {
    if (op.security.length === 0) continue;
    // Ids no record has, and no body: nothing is created, changed or revoked.
    const url = path.replace(/\{[^}]+\}/g, '999999');
    const headers = credential[Object.keys(op.security[0])[0] as string] as Record<string, string>;
    const given = await gw.app.inject({ method: method.toUpperCase() as 'GET', url, headers });
    assert.notEqual(given.statusCode, 401, `${name} with its declared credential: ${given.body}`);
    const none = await gw.app.inject({ method: method.toUpperCase() as 'GET', url });
    assert.equal(none.statusCode, 401, `${name} without a credential`);
    assert.ok(op.responses['401'], `${name}: 401 documented`);
  }
});

test('responses: described, the real success status, errors in the interface envelope, realistic examples', () => {
  const envelope = {
    gateway: '#/components/schemas/GatewayError',
    panel: '#/components/schemas/GatewayError',
    legacy: '#/components/schemas/LegacyError',
    operator: '#/components/schemas/PlainError',
  };
  for (const { path, op, name } of operations()) {
    const kind = interfaceOf(path);
    const statuses = Object.keys(op.responses);
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      assert.ok(typeof response.description === 'string' && response.description.length > 0, `${name} ${status}: description`);
      assert.notEqual(response.description, 'Default Response', `${name} ${status}: a description of its own`);
      const media = response.content?.['application/json'];
      const ok = status.startsWith('2') || status.startsWith('3');
      if (ok && media?.example && typeof media.example === 'object') {
        assert.notEqual(media.example.hasError, true, `${name} ${status}: a success example with hasError true`);
        if (status === '200') assert.notEqual(media.example.Success, false, `${name} ${status}: a 200 example with Success false`);
      }
      if (!ok && kind !== 'public' && !(kind === 'legacy' && status === '401')) {
        assert.equal(media?.schema?.$ref, envelope[kind], `${name} ${status}: the ${kind} error envelope`);
        assert.ok(media.example, `${name} ${status}: an example`);
      }
    }
    if (kind !== 'public') {
      assert.ok(
        statuses.some((s) => /^[45]/.test(s)),
        `${name}: at least one error status`,
      );
      assert.ok(
        statuses.some((s) => /^2/.test(s)),
        `${name}: a success status`,
      );
    }
  }
  // The legacy 401 has an empty body, and the statuses are the routes' own.
  assert.equal(doc.paths['/api/v2/send'].post.responses['401'].content, undefined);
  const created = doc.paths['/admin/accounts'].post.responses;
  assert.ok(created['201'] && !created['200'], 'POST /admin/accounts answers 201');
  assert.ok(doc.paths['/admin/api-keys/{id}'].delete.responses['204']);
  assert.ok(doc.paths['/admin/simulator/inbound'].post.responses['202']);
  assert.ok(doc.paths['/api/v2/detailedreporting'].get.responses['202'].headers['Retry-After']);
  assert.ok(doc.paths['/s/{code}'].get.responses['302'].headers.Location);
  assert.ok(doc.paths['/messages/sms/send'].post.responses['200'].headers['X-Request-Id']);
  const send = doc.paths['/messages/sms/send'].post;
  assert.deepEqual(send.responses['200'].content['application/json'].example.hasError, false);
  assert.ok(send.requestBody.content['application/json'].example.receivers.includes(5511999998888));
});

test('the error envelopes are shared components, the same shapes the routes answer', async () => {
  const schemas = doc.components.schemas;
  assert.deepEqual(Object.keys(schemas.GatewayError.properties), ['hasError', 'message', 'totalRecords', 'errors', 'object']);
  assert.deepEqual(Object.keys(schemas.LegacyError.properties), ['Success', 'Object', 'Message']);
  assert.deepEqual(Object.keys(schemas.PlainError.properties), ['error']);
  const gateway = await gw.call(null, 'GET', '/balance');
  assert.deepEqual(Object.keys(gateway.body), Object.keys(schemas.GatewayError.properties));
  const legacy = await gw.app.inject({ method: 'POST', url: '/api/v2/send', headers: { 'auth-key': alice.key }, payload: {} });
  assert.equal(legacy.statusCode, 400);
  assert.deepEqual(Object.keys(legacy.json()), Object.keys(schemas.LegacyError.properties));
  const operator = await gw.app.inject({ method: 'GET', url: '/admin/carriers' });
  assert.deepEqual(Object.keys(operator.json()), ['error']);
});

test('GET /docs answers the Swagger UI page', async () => {
  const res = await gw.app.inject({ method: 'GET', url: '/docs' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.body, /swagger/i);
});
