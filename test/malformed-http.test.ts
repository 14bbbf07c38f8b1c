import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { startGateway, ADMIN_TOKEN, type TestGateway, type Customer } from './helpers.ts';

/**
 * Malformed HTTP against a real listening server, over raw sockets: every
 * answer is a 4xx with `content-type: application/json` and the envelope of
 * the interface the path belongs to, never Node's or Fastify's own body.
 *
 * Requests are written byte by byte, each byte read by the server before the
 * next is sent (the server's socket counts what it read), the way a slow or
 * hostile client delivers them. Node's parser then fails on a chunk of one
 * byte: it cannot know the path, and the answer is in the gateway envelope.
 * Written whole (one small write, one read), the failing chunk starts with
 * the request line, and the answer is in the envelope of its path.
 */

const BODY_LIMIT = 4096;

let gw: TestGateway;
let alice: Customer;
let port: number;
/** Server side of each connection, by the client's port. */
const serverSockets = new Map<number, Socket>();

before(async () => {
  gw = await startGateway({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  alice = await gw.customer();
  GATEWAY.auth = `x-api-key: ${alice.key}`;
  LEGACY.auth = `auth-key: ${alice.key}`;
  gw.app.server.on('connection', (socket: Socket) => serverSockets.set(socket.remotePort ?? 0, socket));
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
});
after(async () => {
  await gw.close();
});

interface RawAnswer {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Parses one HTTP answer; null while incomplete (its body is read by Content-Length). */
function parseAnswer(data: Buffer): RawAnswer | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  assert.ok(Number.isInteger(length), `no Content-Length in ${JSON.stringify(statusLine)} ${JSON.stringify(headers)}`);
  const body = data.subarray(end + 4);
  if (body.length < length) return null;
  const text = body.subarray(0, length).toString('utf8');
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* kept as text: the checks below fail on it */
  }
  return { statusLine, status: Number(statusLine.split(' ')[1]), headers, body: parsed };
}

/**
 * Sends `request` on a new connection, `bytes` by bytes (each byte read by
 * the server before the next) or `whole` in one write, and returns the
 * answer. Stops writing once the server answered or closed.
 */
async function send(request: string, mode: 'bytes' | 'whole'): Promise<RawAnswer> {
  const client = connect(port, '127.0.0.1');
  client.setNoDelay(true);
  await new Promise<void>((resolve, reject) => client.once('connect', resolve).once('error', reject));
  const server = await until(() => serverSockets.get(client.localPort ?? -1));
  let data = Buffer.alloc(0);
  let answer: RawAnswer | null = null;
  let closed = false;
  client.on('data', (chunk: Buffer) => {
    data = Buffer.concat([data, chunk]);
    answer ??= parseAnswer(data);
  });
  client.on('error', () => {}); // the server may close while we write: the answer is what counts
  client.on('close', () => (closed = true));
  const bytes = Buffer.from(request, 'latin1');
  const open = () => answer === null && !closed && !client.destroyed && !server.destroyed;
  if (mode === 'whole') client.write(bytes);
  else {
    for (let i = 0; i < bytes.length && open(); i++) {
      const read = server.bytesRead;
      client.write(bytes.subarray(i, i + 1));
      await until(() => !open() || server.bytesRead > read);
    }
  }
  const result = await until(() => answer ?? (closed ? (parseAnswer(data) ?? fail(data)) : undefined));
  client.destroy();
  return result;
}

function fail(data: Buffer): never {
  assert.fail(`connection closed without a complete answer: ${JSON.stringify(data.toString('latin1').slice(0, 300))}`);
}

/** Waits (event loop turns, no clock) until `probe` gives a value; a hang guard stops a broken server from hanging the run. */
async function until<T>(probe: () => T | undefined | false): Promise<T> {
  for (let turns = 0; ; turns++) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (turns > 5_000_000) assert.fail('no progress');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

type Envelope = 'gateway' | 'legacy' | 'admin';

interface Interface {
  name: Envelope;
  method: string;
  path: string;
  auth: string;
}

const GATEWAY: Interface = { name: 'gateway', method: 'POST', path: '/messages/sms/send', auth: '' };
const LEGACY: Interface = { name: 'legacy', method: 'POST', path: '/api/v2/send', auth: '' };
const ADMIN: Interface = { name: 'admin', method: 'POST', path: '/admin/accounts', auth: `authorization: Bearer ${ADMIN_TOKEN}` };
const INTERFACES = [GATEWAY, LEGACY, ADMIN];

/** A request of the interface: its method, path and credentials, then `headers` and `body`. */
function requestOf(i: Interface, options: { method?: string; path?: string; auth?: string; headers?: string[]; body?: string; host?: boolean } = {}): string {
  const lines = [`${options.method ?? i.method} ${options.path ?? i.path} HTTP/1.1`];
  if (options.host !== false) lines.push('Host: gateway.test');
  lines.push(options.auth ?? i.auth, ...(options.headers ?? []));
  const body = options.body ?? '';
  if (body && !(options.headers ?? []).some((h) => /^(content-length|transfer-encoding):/i.test(h))) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.filter(Boolean).join('\r\n')}\r\n\r\n${body}`;
}

/** Status line, JSON content type, and the envelope's shape and text. */
function assertRefused(a: RawAnswer, status: number, envelope: Envelope, text: RegExp, what: string) {
  const where = `${what}: ${a.statusLine} ${JSON.stringify(a.body)}`;
  assert.match(a.statusLine, new RegExp(`^HTTP/1\\.1 ${status} [A-Za-z]`), where);
  assert.match(a.headers['content-type'] ?? '', /^application\/json/, where);
  const body = a.body;
  assert.equal(typeof body, 'object', where);
  if (envelope === 'gateway') {
    assert.deepEqual(Object.keys(body).sort(), ['errors', 'hasError', 'message', 'object', 'totalRecords'], where);
    assert.equal(body.hasError, true, where);
    assert.equal(body.object, null, where);
    assert.match(body.message, text, where);
    assert.ok(Array.isArray(body.errors) && body.errors.length >= 1, where);
  } else if (envelope === 'legacy') {
    assert.deepEqual(body, { Success: false, Object: null, Message: body.Message }, where);
    assert.match(body.Message, text, where);
  } else {
    assert.deepEqual(Object.keys(body), ['error'], where);
    assert.match(body.error, text, where);
  }
}

/** The legacy interface answers only the statuses its clients know: a too-large request there is a 400. */
const legacyStatus = (i: Interface, status: number) => (i.name === 'legacy' ? 400 : status);

test('a control character in a header value: 400', async () => {
  for (const i of INTERFACES) {
    const request = requestOf(i, { auth: `${i.auth.split(':')[0]}: ab\u0001cd`, headers: ['content-type: application/json'], body: '{}' });
    assertRefused(await send(request, 'bytes'), 400, 'gateway', /header name or value/, `${i.name} byte by byte`);
    assertRefused(await send(request, 'whole'), 400, i.name, /header name or value/, `${i.name} whole`);
  }
});

test('headers over 16 KiB: 431 (a 400 on Legacy v2)', async () => {
  for (const i of INTERFACES) {
    const request = requestOf(i, { headers: [`x-filler: ${'a'.repeat(17 * 1024)}`] });
    assertRefused(await send(request, 'bytes'), legacyStatus(i, 431), i.name, /headers are too large/, i.name);
  }
});

test('a URL over 16 KiB: 414 (a 400 on Legacy v2)', async () => {
  for (const i of INTERFACES) {
    const request = requestOf(i, { path: `${i.path}?q=${'a'.repeat(17 * 1024)}` });
    assertRefused(await send(request, 'bytes'), legacyStatus(i, 414), i.name, /URL is too long/, i.name);
  }
});

test('a request head over the parser bound (32 KiB): 431 or 414, in the gateway envelope when the path is unknown', async () => {
  for (const i of INTERFACES) {
    const big = await send(requestOf(i, { headers: [`x-filler: ${'a'.repeat(33 * 1024)}`] }), 'bytes');
    assertRefused(big, 431, 'gateway', /too large/, `${i.name} headers`);
  }
  const url = await send(requestOf(LEGACY, { path: `/api/v2/send?q=${'a'.repeat(33 * 1024)}` }), 'bytes');
  assert.ok([414, 431].includes(url.status), url.statusLine);
  assertRefused(url, url.status, 'gateway', /too (long|large)/, 'legacy URL');
});

test('conflicting Content-Length headers, and Content-Length with chunked: 400', async () => {
  for (const i of INTERFACES) {
    for (const headers of [
      ['Content-Length: 2', 'Content-Length: 3'],
      ['Transfer-Encoding: chunked', 'Content-Length: 2'],
    ]) {
      const request = requestOf(i, { headers: ['content-type: application/json', ...headers], body: '{}' });
      assertRefused(await send(request, 'bytes'), 400, 'gateway', /Content-Length/, `${i.name} ${headers.join(', ')} byte by byte`);
      assertRefused(await send(request, 'whole'), 400, i.name, /Content-Length/, `${i.name} ${headers.join(', ')} whole`);
    }
  }
});

test('a method the parser does not know (FOO): 405 with Allow', async () => {
  for (const i of INTERFACES) {
    const request = requestOf(i, { method: 'FOO', body: '{}' });
    const bytes = await send(request, 'bytes');
    assertRefused(bytes, 405, 'gateway', /Unknown HTTP method/, `${i.name} byte by byte`);
    assert.match(bytes.headers.allow ?? '', /GET/);
    assertRefused(await send(request, 'whole'), 405, i.name, /Unknown HTTP method/, `${i.name} whole`);
  }
});

test('a method no route has (PROPFIND, LINK): 404 on the gateway and operator API, 405 on a known Legacy v2 path', async () => {
  for (const method of ['PROPFIND', 'LINK']) {
    assertRefused(await send(requestOf(GATEWAY, { method }), 'bytes'), 404, 'gateway', new RegExp(`${method} /messages/sms/send`), `gateway ${method}`);
    assertRefused(await send(requestOf(ADMIN, { method }), 'bytes'), 404, 'admin', new RegExp(`${method} /admin/accounts`), `admin ${method}`);
    const legacy = await send(requestOf(LEGACY, { method }), 'bytes');
    assertRefused(legacy, 405, 'legacy', new RegExp(method), `legacy ${method}`);
    assert.match(legacy.headers.allow ?? '', /POST/);
    assertRefused(
      await send(requestOf(LEGACY, { method, path: '/api/v2/nothing-here' }), 'bytes'),
      404,
      'legacy',
      /nothing-here/,
      `legacy ${method} unknown path`,
    );
  }
});

test('an unsupported or malformed Content-Type: 415 (Legacy v2 reads any body as JSON: 400)', async () => {
  for (const type of ['text/xml', 'text/plain', ';;', 'multipart/form-data; boundary=x']) {
    for (const i of [GATEWAY, ADMIN]) {
      const request = requestOf(i, { headers: [`content-type: ${type}`], body: '<a/>' });
      assertRefused(await send(request, 'bytes'), 415, i.name, /Content-Type/, `${i.name} ${type}`);
    }
    const legacy = await send(requestOf(LEGACY, { headers: [`content-type: ${type}`], body: '<a/>' }), 'bytes');
    assertRefused(legacy, 400, 'legacy', /JSON/, `legacy ${type}`);
  }
});

test('invalid JSON: 400', async () => {
  for (const i of INTERFACES) {
    const request = requestOf(i, { headers: ['content-type: application/json'], body: '{"a":' });
    assertRefused(await send(request, 'bytes'), 400, i.name, /JSON/, i.name);
  }
});

test('a body over the limit: 413 (a 400 on Legacy v2), by Content-Length and chunked', async () => {
  for (const i of INTERFACES) {
    const declared = requestOf(i, {
      headers: ['content-type: application/json', `Content-Length: ${BODY_LIMIT + 1}`],
      body: `{"a":"${'x'.repeat(BODY_LIMIT)}"}`,
    });
    // Legacy v2 texts are in the configured language (Portuguese by default).
    assertRefused(await send(declared, 'bytes'), legacyStatus(i, 413), i.name, /too large|grande demais/, `${i.name} Content-Length`);
    const payload = `{"a":"${'x'.repeat(BODY_LIMIT)}"}`;
    const chunked = requestOf(i, {
      headers: ['content-type: application/json', 'Transfer-Encoding: chunked'],
      body: `${payload.length.toString(16)}\r\n${payload}\r\n0\r\n\r\n`,
    });
    assertRefused(await send(chunked, 'bytes'), legacyStatus(i, 413), i.name, /too large|grande demais/, `${i.name} chunked`);
  }
});

test('a compressed body (Content-Encoding gzip): 415 saying to send it uncompressed (a 400 on Legacy v2), nothing sent', async () => {
  // Refused by its header, before the body is read: the body's octets are written here as base64 text (this helper writes text).
  const gzip = (await import('node:zlib')).gzipSync('{"receivers":[5511999998888],"message":"zipped"}').toString('base64');
  for (const i of INTERFACES) {
    const request = requestOf(i, { headers: ['content-type: application/json', 'Content-Encoding: GZip'], body: gzip });
    const answer = await send(request, 'bytes');
    assertRefused(answer, legacyStatus(i, 415), i.name, /Content-Encoding gzip is not supported; send the body uncompressed/, i.name);
    assert.equal(answer.headers['accept-encoding'], 'identity', i.name);
  }
  const sent = await gw.call(alice.key, 'GET', '/reports/messages/sent');
  assert.equal(sent.body.totalRecords, 0);
});

test('HTTP/1.1 without Host: 400', async () => {
  for (const i of INTERFACES) {
    assertRefused(await send(requestOf(i, { host: false, headers: ['content-type: application/json'], body: '{}' }), 'bytes'), 400, i.name, /Host/, i.name);
  }
});

test('the server still answers well-formed requests on new connections', async () => {
  const ok = await send('GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n', 'bytes');
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { status: 'ok' });
});
