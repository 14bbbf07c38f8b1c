/**
 * Kannel 1.4.5 (bearerbox + smsbox) as a customer of the SMPP server: its
 * SMSC connection (`smsc = smpp`, transceiver) binds to the gateway with
 * the customer's credential. Texts go in through Kannel's own HTTP
 * sendsms; the gateway sends them through its simulator, and its receipts
 * and replies go back to Kannel as deliver_sm, which Kannel hands to the
 * test's HTTP server (the dlr-url of a send, the get-url of the default
 * sms-service). Skipped when Kannel is not installed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePorts, start, until, which, type Proc } from '../../bench/kannel/proc.ts';
import { smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const programs = { bearerbox: which('bearerbox'), smsbox: which('smsbox') };
const skip = programs.bearerbox && programs.smsbox ? false : 'Kannel is not installed: apt-get install -y kannel';

/** Kannel's waits are in seconds (its SMSC reconnects, its HTTP client): a minute is generous. */
const LONG = 60_000;

interface KannelPorts {
  admin: number;
  smsbox: number;
  sendsms: number;
  smpp: number;
  http: number;
}

/**
 * One bearerbox with one SMPP transceiver bind to the gateway, one smsbox
 * with a sendsms user and a default service. Debug logs (every PDU) in
 * `dir`; no message store (the test never restarts Kannel); receipts matched
 * in memory. msg-id-type is left unset: Kannel then keeps the message id of
 * submit_sm_resp and of the receipt as the strings they are, which the
 * gateway's UUIDs need (any msg-id-type reads them as numbers).
 */
function kannelConf(dir: string, ports: KannelPorts, systemId: string, password: string): string {
  return `
group = core
admin-port = ${ports.admin}
admin-interface = 127.0.0.1
admin-password = test
admin-allow-ip = "127.0.0.1"
smsbox-port = ${ports.smsbox}
smsbox-interface = 127.0.0.1
box-allow-ip = "127.0.0.1"
log-file = "${dir}/bearerbox.log"
log-level = 0
access-log = "${dir}/access.log"
dlr-storage = internal

group = smsc
smsc = smpp
smsc-id = gateway
host = 127.0.0.1
port = ${ports.smpp}
transceiver-mode = true
smsc-username = "${systemId}"
smsc-password = "${password}"
system-type = ""
interface-version = 34
dest-addr-ton = 1
dest-addr-npi = 1
enquire-link-interval = 30
reconnect-delay = 1
log-file = "${dir}/smsc.log"
log-level = 0

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${ports.smsbox}
sendsms-port = ${ports.sendsms}
sendsms-interface = 127.0.0.1
log-file = "${dir}/smsbox.log"
log-level = 0
access-log = "${dir}/smsbox-access.log"

group = sendsms-user
username = kannel
password = kannelpw
user-allow-ip = "127.0.0.1"
max-messages = 10
concatenation = true

# Replies (MO) go to the test's HTTP server; max-messages = 0: Kannel sends no answer of its own back.
group = sms-service
keyword = default
catch-all = true
get-url = "http://127.0.0.1:${ports.http}/mo?from=%p&to=%P&text=%a&coding=%c"
max-messages = 0
`;
}

/** 300 GSM characters: two parts of 153 and 147 with a concatenation UDH. */
const longText = (): string => 'Kannel splits this long text into concatenated parts. '.repeat(6).slice(0, 300);

/** The test's HTTP server: every request Kannel makes to it (dlr-url, get-url), as URLs. */
async function recorder(): Promise<{ hits: URL[]; port: number; close(): Promise<void> }> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hits,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Kannel 1.4.5 as an SMPP customer of the gateway', { skip }, () => {
  let g: SmppGateway;
  let dir: string;
  let web: Awaited<ReturnType<typeof recorder>>;
  let bearerbox: Proc | undefined;
  let smsbox: Proc | undefined;
  let sendsmsUrl: string;
  let failed = false;

  before(async () => {
    try {
      g = await smppGateway();
      web = await recorder();
      dir = mkdtempSync(join(tmpdir(), 'kannel-client-'));
      const [adminPort, smsboxPort, sendsmsPort] = (await freePorts(3)) as [number, number, number];
      const ports: KannelPorts = { admin: adminPort, smsbox: smsboxPort, sendsms: sendsmsPort, smpp: g.server.port, http: web.port };
      const conf = join(dir, 'kannel.conf');
      writeFileSync(conf, kannelConf(dir, ports, g.systemId, g.password));
      const status = async (): Promise<string> => (await fetch(`http://127.0.0.1:${ports.admin}/status.xml?password=test`)).text();
      bearerbox = start('bearerbox', programs.bearerbox as string, [conf], { cwd: dir, log: join(dir, 'bearerbox.out') });
      // The SMSC is "online" once its bind_transceiver is answered ESME_ROK.
      await until('the bearerbox SMPP bind to the gateway', async () => (/<status>online/.test(await status()) ? true : undefined), LONG, bearerbox);
      smsbox = start('smsbox', programs.smsbox as string, [conf], { cwd: dir, log: join(dir, 'smsbox.out') });
      sendsmsUrl = `http://127.0.0.1:${ports.sendsms}/cgi-bin/sendsms`;
      await until('the smsbox sendsms port', async () => ((await fetch(sendsmsUrl)).status > 0 ? true : undefined), LONG, smsbox);
      await until('smsbox connected to bearerbox', async () => (/<box>[\s\S]*?<type>smsbox<\/type>/.test(await status()) ? true : undefined), LONG, smsbox);
    } catch (error) {
      failed = true;
      throw error;
    }
  });

  after(async () => {
    await smsbox?.stop(10_000);
    await bearerbox?.stop(10_000);
    await web?.close();
    await g?.close();
    // Kannel's debug logs (every PDU) stay for a failed run.
    if (failed) console.log(`Kannel's logs: ${dir}`);
    else if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A test whose failure keeps Kannel's logs. */
  const kannelTest = (name: string, fn: () => Promise<void>) =>
    test(name, async () => {
      try {
        await fn();
      } catch (error) {
        failed = true;
        throw error;
      }
    });

  /** A send through Kannel's HTTP sendsms; fails unless Kannel accepts it. */
  async function sendsms(params: Record<string, string>): Promise<void> {
    const query = new URLSearchParams({ username: 'kannel', password: 'kannelpw', from: 'ACME', ...params });
    const res = await fetch(`${sendsmsUrl}?${query}`);
    const body = await res.text();
    assert.equal(res.status, 202, `sendsms answered ${res.status}: ${body}`);
  }

  /** The customer's messages to `receiver` (digits, as the gateway stores them). */
  const messagesTo = (receiver: string) =>
    g.gw.core.db.kysely
      .selectFrom('messages')
      .select(['id', 'content', 'status', 'sender', 'segments'])
      .where('account_id', '=', g.customer.accountId)
      .where('receiver', '=', receiver)
      .execute();

  const smscLog = () => (existsSync(join(dir, 'smsc.log')) ? readFileSync(join(dir, 'smsc.log'), 'utf8') : '');

  kannelTest("a text sent through Kannel's sendsms is accepted, delivered, and its receipt reaches Kannel's dlr-url as delivered", async () => {
    const receiver = '5511999990500';
    const dlrUrl = `http://127.0.0.1:${web.port}/dlr?tag=first&status=%d&smsc_id=%F&answer=%A`;
    await sendsms({ to: receiver, text: 'Hello from Kannel', 'dlr-mask': '31', 'dlr-url': dlrUrl });
    await waitFor(async () => (await messagesTo(receiver)).some((m) => m.status === 'DELIVERED'), 'the message DELIVERED at the gateway', LONG);
    const [message] = await messagesTo(receiver);
    assert.ok(message);
    assert.equal(message.content, 'Hello from Kannel');
    assert.equal(message.sender, 'ACME');
    const dlrs = () => web.hits.filter((u) => u.pathname === '/dlr' && u.searchParams.get('tag') === 'first');
    // %d: 8 when the gateway's submit_sm_resp came (SMSC success), 1 when the receipt says DELIVRD.
    await waitFor(() => dlrs().some((u) => u.searchParams.get('status') === '1'), 'the delivered receipt at the dlr-url', LONG);
    const delivered = dlrs().find((u) => u.searchParams.get('status') === '1');
    assert.equal(delivered?.searchParams.get('smsc_id'), message.id, "Kannel's SMSC message id is the gateway's message id");
    assert.match(delivered?.searchParams.get('answer') ?? '', new RegExp(`id:${message.id} .*stat:DELIVRD`));
    assert.ok(
      dlrs().some((u) => u.searchParams.get('status') === '8'),
      'the SMSC success (submit_sm_resp) at the dlr-url',
    );
    assert.ok(!/got DLR but could not find message|DLR from SMSC<[^>]*> for DST<[^>]*> not found/.test(smscLog()), 'every receipt matched a message of Kannel');
  });

  kannelTest('a long text Kannel splits into parts (UDH) is one message at the gateway, its text joined', async () => {
    const receiver = '5511999990501';
    const text = longText();
    await sendsms({ to: receiver, text });
    await waitFor(async () => (await messagesTo(receiver)).length > 0, 'the joined message at the gateway', LONG);
    const messages = await messagesTo(receiver);
    assert.equal(messages.length, 1, 'one message, not one a part');
    assert.equal(messages[0]?.content, text);
    assert.equal(messages[0]?.segments, 2);
    // Kannel did send it as parts: submit_sm with a UDH (esm_class 0x43: UDHI and store-and-forward mode).
    assert.ok(/esm_class: 67 = 0x00000043/.test(smscLog()), 'submit_sm with a UDH in smsc.log');
    const parts = await g.gw.core.db.kysely.selectFrom('smpp_parts').select('id').execute();
    assert.equal(parts.length, 0, 'no part left waiting');
  });

  kannelTest("a long text's receipt, asked for on its first part only, reaches Kannel's dlr-url as delivered", async () => {
    const receiver = '5511999990504';
    const text = longText();
    const dlrUrl = `http://127.0.0.1:${web.port}/dlr?tag=long&status=%d&smsc_id=%F`;
    await sendsms({ to: receiver, text, 'dlr-mask': '31', 'dlr-url': dlrUrl });
    await waitFor(async () => (await messagesTo(receiver)).some((m) => m.status === 'DELIVERED'), 'the joined message DELIVERED at the gateway', LONG);
    const [message] = await messagesTo(receiver);
    assert.ok(message);
    assert.equal(message.content, text);
    // Kannel splits a text that asks for a receipt so that only its first part asks (registered_delivery
    // 0x11 on part 1, 0 on part 2): the message made of the parts keeps the request.
    const kept = await g.gw.core.db.kysely.selectFrom('smpp_submits').select('registered_delivery').where('message_id', '=', message.id).executeTakeFirst();
    assert.equal(Number(kept?.registered_delivery ?? 0) & 0x03, 1, 'the receipt asked for on the first part is kept for the message');
    const dlrs = () => web.hits.filter((u) => u.pathname === '/dlr' && u.searchParams.get('tag') === 'long');
    await waitFor(() => dlrs().some((u) => u.searchParams.get('status') === '1'), 'the delivered receipt at the dlr-url', LONG);
    assert.equal(
      dlrs()
        .find((u) => u.searchParams.get('status') === '1')
        ?.searchParams.get('smsc_id'),
      message.id,
    );
  });

  kannelTest('a UCS-2 text (coding=2, UTF-8 in the HTTP request) arrives intact', async () => {
    const receiver = '5511999990502';
    await sendsms({ to: receiver, text: 'Olá, ação ✓', coding: '2', charset: 'UTF-8' });
    await waitFor(async () => (await messagesTo(receiver)).length > 0, 'the message at the gateway', LONG);
    assert.equal((await messagesTo(receiver))[0]?.content, 'Olá, ação ✓');
    assert.ok(/data_coding: 8 = 0x00000008/.test(smscLog()), 'Kannel sent it as UCS-2 (data_coding 8)');
  });

  kannelTest("a reply (MO) to a number Kannel sent to reaches Kannel's default sms-service with the right sender", async () => {
    const receiver = '5511999990503';
    await sendsms({ to: receiver, text: 'Will you come?' });
    await waitFor(async () => (await messagesTo(receiver)).some((m) => m.status === 'DELIVERED'), 'the message DELIVERED', LONG);
    await g.gw.core.simulator.inbound(`+${receiver}`, 'ACME', 'Yes, at 5 o clock');
    await waitFor(() => web.hits.some((u) => u.pathname === '/mo'), 'the reply at the get-url', LONG);
    const mo = web.hits.filter((u) => u.pathname === '/mo');
    assert.equal(mo.length, 1);
    assert.equal(mo[0]?.searchParams.get('text'), 'Yes, at 5 o clock');
    // The deliver_sm comes from the handset's international number (TON 1): Kannel writes it with a '+'.
    assert.equal(mo[0]?.searchParams.get('from'), `+${receiver}`);
    assert.equal(mo[0]?.searchParams.get('to'), 'ACME');
  });
});
