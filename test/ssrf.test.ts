import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SafeFetcher, SafeFetchError, checkUrl, parseAllowList } from '../src/net/safe-fetch.ts';
import { addressRefusal, type SafeFetchErrorCode } from '../src/net/policy.ts';
import { startGateway, type TestGateway } from './helpers.ts';

/**
 * The SSRF-safe fetcher, tested directly against a real server on loopback:
 * a fetcher with the loopback allow-list reaches it, one without does not,
 * and no redirect, name or address form gets a request to a private address.
 */

let server: Server;
let port: number;
let origin: string;
const seen: string[] = [];
let open: SafeFetcher;
let closed: SafeFetcher;

before(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    seen.push(`${req.method} ${url}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (url === '/to-private') return res.writeHead(302, { location: 'http://10.0.0.1/admin' }).end();
      if (url === '/to-metadata') return res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (url === '/to-localhost') return res.writeHead(301, { location: 'http://localhost/echo' }).end();
      if (url === '/to-file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      if (url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (url === '/see-other') return res.writeHead(303, { location: '/echo' }).end();
      if (url === '/big') return res.end(Buffer.alloc(100_000, 'x'));
      if (url === '/hang') return; // never answers
      res.writeHead(201, { 'content-type': 'text/plain', 'x-method': req.method ?? '' }).end(`${req.method} ${body} ${req.headers['x-test'] ?? ''}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  open = new SafeFetcher({ allow: '127.0.0.1' });
  closed = new SafeFetcher();
});
after(async () => {
  await open.close();
  await closed.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function refused(promise: Promise<unknown>, code: SafeFetchErrorCode): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SafeFetchError, `not a SafeFetchError: ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected a ${code} refusal`);
}

test('an allow-listed host is reached on any port: method, headers, body, status, answer', async () => {
  const res = await open.fetch(`${origin}/echo`, { method: 'POST', headers: { 'x-test': 'yes' }, body: 'payload' });
  assert.equal(res.status, 201);
  assert.equal(res.headers['x-method'], 'POST');
  assert.equal(res.body.toString(), 'POST payload yes');
  assert.equal(res.truncated, false);
});

test('loopback without the allow-list is refused before any request', async () => {
  const before = seen.length;
  await refused(closed.fetch(`${origin}/echo`), 'PORT');
  await refused(closed.fetch('http://127.0.0.1/echo'), 'ADDRESS');
  await refused(closed.fetch('http://127.1:8080/echo'), 'ADDRESS');
  await refused(closed.fetch('http://2130706433/'), 'ADDRESS');
  await refused(closed.fetch('http://[::1]/'), 'ADDRESS');
  await refused(closed.fetch('http://[::ffff:127.0.0.1]/'), 'ADDRESS');
  await refused(closed.fetch('http://localhost/'), 'ADDRESS');
  await refused(closed.fetch('http://api.localhost/'), 'ADDRESS');
  assert.equal(seen.length, before);
});

test('private, link-local, metadata, CGNAT, multicast, unspecified and reserved addresses are refused', async () => {
  for (const host of [
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[fe80::1]',
    '[ff02::1]',
    '[::]',
    '[::ffff:10.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[64:ff9b::a00:1]',
  ]) {
    const err = await refused(closed.fetch(`http://${host}/`), 'ADDRESS');
    assert.match(err.message, /only public addresses/);
  }
});

test('only http and https; only ports 80, 443, 8080, 8443; no credentials', async () => {
  await refused(closed.fetch('file:///etc/passwd'), 'SCHEME');
  await refused(closed.fetch('ftp://example.com/x'), 'SCHEME');
  await refused(closed.fetch('gopher://example.com:70/'), 'SCHEME');
  await refused(closed.fetch('data:text/plain,hi'), 'SCHEME');
  await refused(closed.fetch('http://example.com:22/'), 'PORT');
  await refused(closed.fetch('https://example.com:6379/'), 'PORT');
  await refused(closed.fetch('http://user:pw@example.com/'), 'URL');
  await refused(closed.fetch('not a url'), 'URL');
  for (const ok of ['http://example.com/', 'https://example.com/', 'http://example.com:8080/', 'https://example.com:8443/', 'https://93.184.216.34/']) {
    assert.equal(checkUrl(ok).toString(), ok);
  }
});

test('a redirect from an allowed host to a private address is refused', async () => {
  await refused(open.fetch(`${origin}/to-private`), 'ADDRESS');
  await refused(open.fetch(`${origin}/to-metadata`, { method: 'POST', body: 'x' }), 'ADDRESS');
  await refused(open.fetch(`${origin}/to-localhost`), 'ADDRESS');
  await refused(open.fetch(`${origin}/to-file`), 'SCHEME');
  await refused(open.fetch(`${origin}/loop`), 'REDIRECTS');
  // Without following, the redirect itself is the answer.
  assert.equal((await open.fetch(`${origin}/to-private`, { maxRedirects: 0 })).status, 302);
});

test('an allowed redirect is followed; 303 turns a POST into a GET', async () => {
  const res = await open.fetch(`${origin}/see-other`, { method: 'POST', body: 'dropped' });
  assert.equal(res.status, 201);
  assert.equal(res.body.toString(), 'GET  ');
  assert.equal(res.url, `${origin}/echo`);
});

test('the address a name resolves to is checked when connecting (DNS rebinding)', async () => {
  // Resolves like an attacker's name server: public at registration, loopback when called.
  const rebinding = new SafeFetcher({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  const mixed = new SafeFetcher({
    resolve: async () => [
      { address: '10.1.1.1', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ],
  });
  const trusted = new SafeFetcher({ allow: 'hooks.internal', resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  try {
    assert.equal(rebinding.check('http://rebind.example:8080/').hostname, 'rebind.example');
    const before = seen.length;
    const err = await refused(rebinding.fetch('http://rebind.example:8080/echo'), 'ADDRESS');
    assert.match(err.message, /rebind\.example resolves to a refused address/);
    await refused(mixed.fetch('https://internal.example/'), 'ADDRESS');
    assert.equal(seen.length, before);
    // A host name the operator allowed may resolve to loopback and use any port.
    const res = await trusted.fetch(`http://hooks.internal:${port}/echo`);
    assert.equal(res.status, 201);
  } finally {
    await rebinding.close();
    await mixed.close();
    await trusted.close();
  }
});

test('response size cap and timeout', async () => {
  await refused(open.fetch(`${origin}/big`, { maxBytes: 1000 }), 'TOO_LARGE');
  const cut = await open.fetch(`${origin}/big`, { maxBytes: 1000, onTooLarge: 'truncate' });
  assert.equal(cut.body.length, 1000);
  assert.equal(cut.truncated, true);
  assert.equal((await open.fetch(`${origin}/big`)).body.length, 100_000);
  await refused(open.fetch(`${origin}/hang`, { timeoutMs: 200 }), 'TIMEOUT');
});

test('GATEWAY_FETCH_ALLOW: hosts, addresses and CIDRs; a bad CIDR is refused', () => {
  const allow = parseAllowList(' 127.0.0.1 , 10.8.0.0/16,[::1], Hooks.Internal ');
  assert.deepEqual([...allow.hosts], ['hooks.internal']);
  assert.equal(allow.ranges.length, 3);
  assert.equal(checkUrl('http://10.8.3.4:9000/x', allow).port, '9000');
  assert.throws(() => checkUrl('http://10.9.0.1/', allow), SafeFetchError);
  assert.equal(checkUrl('http://[::1]:3000/', allow).port, '3000');
  assert.throws(() => parseAllowList('10.0.0.0/99'), /GATEWAY_FETCH_ALLOW/);
});

/**
 * IPv6 addresses that carry an IPv4 address reach it through a translator
 * (or, for the IPv4-compatible form, through stacks that still honour it):
 * each is judged by the IPv4 address(es) it carries.
 */
const CARRYING_REFUSED: [string, RegExp][] = [
  ['::127.0.0.1', /127\.0\.0\.1.*loopback/],
  ['::7f00:1', /IPv4-compatible form of 127\.0\.0\.1, a loopback/],
  ['::10.0.0.1', /10\.0\.0\.1.*private/],
  ['::a9fe:a9fe', /169\.254\.169\.254, a linkLocal/],
  ['::ffff:7f00:1', /127\.0\.0\.1 is a loopback/],
  ['::ffff:127.0.0.1', /127\.0\.0\.1 is a loopback/],
  ['::ffff:0:7f00:1', /IPv4-translated form of 127\.0\.0\.1/],
  ['64:ff9b::7f00:1', /NAT64 \(64:ff9b::\/96\) form of 127\.0\.0\.1/],
  ['64:ff9b::169.254.169.254', /NAT64 .* 169\.254\.169\.254/],
  ['64:ff9b:1::a00:1', /NAT64 local-use .* 10\.0\.0\.1, a private/],
  ['64:ff9b:1:a00:0:100::', /NAT64 local-use .* 10\.0\.0\.1, a private/], // a /48 prefix: 10.0.0.1 at bits 48-63 and 72-87
  ['64:ff9b:1::', /0\.0\.0\.0/],
  ['2002:7f00:1::', /6to4 form of 127\.0\.0\.1/],
  ['2002:a9fe:a9fe::1', /6to4 form of 169\.254\.169\.254/],
  ['2002:c0a8:101:1::1', /6to4 form of 192\.168\.1\.1, a private/],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', /Teredo address with client 127\.0\.0\.1/],
  ['2001:0:a00:1::f7f7:f7f7', /Teredo address with server 10\.0\.0\.1/],
  ['64:ff9b:7f00:1::', /outside the global unicast range/],
  ['1234::1', /outside the global unicast range/],
];
/** The same forms around public addresses (8.8.8.8, 65.54.227.120). */
const CARRYING_PUBLIC = [
  '::808:808',
  '::ffff:808:808',
  '::ffff:0:808:808',
  '64:ff9b::808:808',
  '64:ff9b:1::808:808',
  '64:ff9b:1:abcd::808:808',
  '64:ff9b:1:808:8:800::',
  '2002:808:808::1',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

test('the address policy judges IPv6 forms that carry an IPv4 address by that address', () => {
  for (const [address, why] of CARRYING_REFUSED) {
    const refusal = addressRefusal(address);
    assert.ok(refusal, `${address} passed`);
    assert.match(refusal, why, address);
  }
  for (const address of CARRYING_PUBLIC) assert.equal(addressRefusal(address), null, address);
  assert.equal(addressRefusal('2606:4700:4700::1111'), null);
});

test('URLs with such hosts: refused when the carried address is not public, accepted when it is', async () => {
  const before = seen.length;
  for (const [address] of CARRYING_REFUSED) {
    const host = `[${address}]`;
    assert.throws(
      () => checkUrl(`http://${host}/`),
      (err: unknown) => err instanceof SafeFetchError && err.code === 'ADDRESS' && /only public addresses/.test(err.message),
      host,
    );
    await refused(closed.fetch(`http://${host}/hook`), 'ADDRESS');
  }
  assert.equal(seen.length, before);
  for (const address of CARRYING_PUBLIC) assert.doesNotThrow(() => checkUrl(`https://[${address}]/hook`), address);
});

test('a name whose DNS answer is such a form is refused when connecting', async () => {
  for (const address of ['::7f00:1', '::127.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe']) {
    const fetcher = new SafeFetcher({ resolve: async () => [{ address, family: 6 }] });
    try {
      const before = seen.length;
      const err = await refused(fetcher.fetch('http://carrier.example/echo'), 'ADDRESS');
      assert.match(err.message, /carrier\.example resolves to a refused address/);
      assert.equal(seen.length, before);
    } finally {
      await fetcher.close();
    }
  }
});

test('webhook registration refuses URLs whose host carries a non-public IPv4 address', async () => {
  let gw: TestGateway | undefined;
  try {
    gw = await startGateway();
    const eve = await gw.customer();
    for (const [address] of CARRYING_REFUSED) {
      const res = await gw.call(eve.key, 'POST', '/webhooks', { url: `http://[${address}]/hook`, topics: ['message.status'] });
      assert.equal(res.status, 400, `${address}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.hasError, true);
      assert.match(res.body.errors[0], /^url: .*only public addresses may be called/, address);
    }
    assert.equal((await gw.call(eve.key, 'GET', '/webhooks')).body.totalRecords, 0);
    const ok = await gw.call(eve.key, 'POST', '/webhooks', { url: 'https://[2002:808:808::1]/hook', topics: ['message.status'] });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  } finally {
    await gw?.close();
  }
});
