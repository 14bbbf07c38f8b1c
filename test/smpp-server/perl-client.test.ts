/**
 * Net::SMPP, a Perl implementation (Debian's libnet-smpp-perl), as the
 * customer's client: a second SMPP stack written by others, beside Kannel
 * (kannel-client.test.ts), so that the server is not only right for the
 * `smpp` package it shares code with. The script
 * (fixtures/net-smpp-client.pl) submits on a transmitter bind and, once its
 * messages are delivered and a reply has come, reads what it is owed on a
 * receiver bind; the test checks its answers and what the gateway kept.
 * Skipped when Perl's Net::SMPP is not installed.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const installed = spawnSync('perl', ['-MNet::SMPP', '-e', '1']).status === 0;
const skip = installed ? false : "Perl's Net::SMPP is not installed: apt-get install -y libnet-smpp-perl";
const SCRIPT = join(import.meta.dirname, 'fixtures', 'net-smpp-client.pl');
const RECEIVER = '5511999990400';
const LONG = `${'A long text from Perl, in one payload. '.repeat(5)}end`;

type Line = Record<string, unknown> & { step: string };

async function perl(g: SmppGateway, ...args: string[]): Promise<Line[]> {
  const { stdout } = await promisify(execFile)('perl', [SCRIPT, String(g.server.port), g.systemId, g.password, ...args], { timeout: 60_000 });
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

describe('Net::SMPP (Perl) as an SMPP customer', { skip }, () => {
  let g: SmppGateway;
  let lines: Line[];
  /** The account's balance once its submits were accepted, before the reply (which has its own fare). */
  let afterSubmits: number;
  const one = (name: string): Line => {
    const found = lines.filter((l) => l.step === name);
    assert.equal(found.length, 1, `one "${name}" line in ${JSON.stringify(lines)}`);
    return found[0] as Line;
  };
  const sentRows = async () =>
    (await g.gw.call(g.customer.key, 'GET', '/reports/messages/sent?limit=100')).body.object as { id: string; content: string; status: string }[];

  before(async () => {
    g = await smppGateway({ balance: 10 });
    const submitted = await perl(g, 'submit', RECEIVER);
    afterSubmits = (await g.gw.call(g.customer.key, 'GET', '/balance')).body.object.balance as number;
    const ids = submitted.filter((l) => ['gsm', 'payload', 'ucs2'].includes(l.step)).map((l) => l.id);
    // Delivered while the customer has no receiver bind: its receipts wait for one.
    await waitFor(async () => (await sentRows()).filter((r) => ids.includes(r.id) && r.status === 'DELIVERED').length === 3, 'the three delivered');
    await g.gw.core.simulator.inbound(`+${RECEIVER}`, 'PERL', 'Reply from the handset');
    const received = await perl(g, 'receive', '3');
    lines = [...submitted, ...received];
  });
  after(async () => {
    await g?.close();
  });

  test('binds as transmitter and receiver, is refused with a wrong password, and unbinds', () => {
    assert.equal(one('bind').status, 0);
    assert.equal(one('bad bind').status, 0x0d, 'ESME_RBINDFAIL');
    assert.equal(one('enquire_link').status, 0);
    assert.equal(one('unbind').status, 0);
    assert.equal(one('receiver bind').status, 0);
    assert.equal(one('receiver unbind').status, 0);
  });

  test('its submits are messages of the account, charged by their text, with the id it was given', async () => {
    const gsm = one('gsm');
    const payload = one('payload');
    const ucs2 = one('ucs2');
    for (const s of [gsm, payload, ucs2]) {
      assert.equal(s.status, 0, JSON.stringify(s));
      assert.match(String(s.id), /^[0-9a-f-]{36}$/);
    }
    const rows = await sentRows();
    const content = (id: unknown) => rows.find((r) => r.id === id)?.content;
    assert.equal(content(gsm.id), 'Hello from Net::SMPP');
    assert.equal(content(payload.id), LONG);
    assert.equal(content(ucs2.id), 'Olá Привет');
    assert.equal((await g.gw.admin('GET', `/admin/messages/${String(gsm.id)}`)).body.source, 'smpp');
    // 1 + 2 (198 GSM characters: two parts of 153) + 1 credits at 0.10.
    assert.equal(Math.round((10 - afterSubmits) * 100), 40);
  });

  test('a bad number and an unknown id get their SMPP statuses', () => {
    assert.equal(one('bad number').status, 0x0b, 'ESME_RINVDSTADR');
    assert.equal(one('query unknown').status, 0x67, 'ESME_RQUERYFAIL');
  });

  test('on the receiver bind: the two receipts asked for, then the reply that came after them', () => {
    const delivered = lines.filter((l) => l.step === 'deliver_sm');
    assert.equal(delivered.length, 3, JSON.stringify(lines));
    const [first, second, reply] = delivered as [Line, Line, Line];
    // In the order the receipts came back from the carrier (about 200 ms after each submit, either first under load).
    assert.deepEqual([first.receipted_message_id, second.receipted_message_id].sort(), [one('gsm').id, one('payload').id].sort());
    for (const r of [first, second]) {
      assert.equal(r.esm_class, 0x04);
      assert.match(
        String(r.text),
        new RegExp(`^id:${String(r.receipted_message_id)} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:`),
      );
    }
    assert.equal(reply.esm_class, 0);
    assert.equal(reply.source_addr, RECEIVER);
    assert.equal(reply.text, 'Reply from the handset');
    assert.equal(reply.receipted_message_id, null);
  });
});
