import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { concatUdh } from '../../src/carriers/smpp/udh.ts';
import { decodeText } from '../../src/carriers/smpp/encoding.ts';
import type { Pdu } from '../../src/carriers/smpp/smpp-lib.ts';
import { Client, bodyText, bound, refuseWrites, smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const RQUERYFAIL = 0x67;
const RCANCELFAIL = 0x11;
const RX_T_APPN = 0x64;

const textOf = (pdu: Pdu) => {
  const b = Buffer.isBuffer(pdu.short_message) && pdu.short_message.length > 0 ? pdu.short_message : (pdu.message_payload as Buffer);
  return decodeText(b, Number(pdu.data_coding ?? 0));
};

describe('receipts and replies to the customer', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway();
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  test('on a transceiver: the receipt, then a reply (MO) from the number it sent to', async () => {
    const client = await bound(g, 'transceiver');
    const resp = await client.submit({ destination_addr: '5511999990200', registered_delivery: 1, short_message: Buffer.from('Are you there?') });
    await waitFor(() => client.delivered.length === 1, 'the receipt');
    await g.gw.core.simulator.inbound('+5511999990200', 'ACME', 'Yes, I am — ok ✓');
    await waitFor(() => client.delivered.length === 2, 'the reply');
    const reply = client.delivered[1];
    assert.ok(reply);
    assert.equal(reply.esm_class, 0);
    assert.equal(reply.source_addr, '5511999990200');
    assert.equal(reply.destination_addr, 'ACME');
    assert.equal(textOf(reply), 'Yes, I am — ok ✓');
    assert.equal(client.delivered[0]?.receipted_message_id, resp.message_id);
    // And it is the account's reply in the received report too.
    const received = await g.gw.call(g.customer.key, 'GET', '/reports/messages/received');
    assert.equal(received.body.object[0].content, 'Yes, I am — ok ✓');
  });

  test('on a separate receiver bind: receipts and a long reply (message_payload) of submits made on a transmitter', async () => {
    const transmitter = await bound(g, 'transmitter');
    const receiver = await bound(g, 'receiver');
    const resp = await transmitter.submit({ destination_addr: '5511999990201', registered_delivery: 1, short_message: Buffer.from('hi') });
    await waitFor(() => receiver.delivered.length === 1, 'the receipt on the receiver bind');
    assert.equal(receiver.delivered[0]?.receipted_message_id, resp.message_id);
    assert.equal(transmitter.delivered.length, 0, 'nothing on the transmitter');
    const long = 'A long answer. '.repeat(30);
    await g.gw.core.simulator.inbound('+5511999990201', null, long);
    await waitFor(() => receiver.delivered.length === 2, 'the reply');
    assert.equal(textOf(receiver.delivered[1] as Pdu), long);
  });

  test('a customer disconnected while receipts arrive gets them all after rebinding, in order, each answered once', async () => {
    const transmitter = await bound(g, 'transmitter');
    const first = await bound(g, 'receiver');
    let answered = 0;
    // The first session answers two receipts, leaves the third unanswered and goes away.
    first.answerWith = () => (++answered <= 2 ? 0 : null);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await transmitter.submit({
        destination_addr: `55119999903${String(i).padStart(2, '0')}`,
        registered_delivery: 1,
        short_message: Buffer.from(`m${i}`),
      });
      ids.push(r.message_id as string);
    }
    await waitFor(() => first.delivered.length >= 3, 'three receipts on the first session');
    first.close();
    const db = g.gw.core.db.kysely;
    // Every receipt is queued for the customer while it is away: all eight written (each with its
    // message's final state, in one transaction), the two answered ones deleted.
    await waitFor(
      async () => (await db.selectFrom('messages').select('id').where('id', 'in', ids).where('status', '=', 'DELIVERED').execute()).length === 8,
      'every message delivered',
    );
    await waitFor(
      async () => (await db.selectFrom('smpp_deliveries').select('id').where('system_id', '=', g.systemId).execute()).length === 6,
      'six receipts waiting',
    );
    const view = await g.gw.admin('GET', `/admin/accounts/${g.customer.accountId}/smpp-deliveries`);
    assert.equal(view.status, 200);
    assert.equal(view.body.pending, 6);
    assert.equal(view.body.credentials[0].systemId, g.systemId);
    const queued = await db.selectFrom('smpp_deliveries').select(['message_id']).where('system_id', '=', g.systemId).orderBy('id').execute();
    const second = await bound(g, 'receiver');
    await waitFor(() => second.delivered.length >= 6, 'the rest after the rebind');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      second.delivered.map((p) => p.receipted_message_id),
      queued.map((q) => q.message_id),
      'in the order they were queued',
    );
    const answeredIds = [...first.delivered.slice(0, 2), ...second.delivered].map((p) => p.receipted_message_id);
    assert.deepEqual([...answeredIds].sort(), [...ids].sort(), 'every receipt answered once');
    await waitFor(async () => (await db.selectFrom('smpp_deliveries').select('id').execute()).length === 0, 'the outbox empty');
  });

  test('a deliver_sm answered with an error is sent again later; the operator sees it waiting with the error', async () => {
    const client = await bound(g, 'transceiver');
    let refusals = 0;
    client.answerWith = () => (++refusals <= 2 ? RX_T_APPN : 0);
    const resp = await client.submit({ destination_addr: '5511999990210', registered_delivery: 1, short_message: Buffer.from('retry me') });
    // While it waits, the operator sees the refusal (written once the answer is in; the receipt is gone once accepted).
    const seen = await g.gw.eventually(
      () => g.gw.admin('GET', `/admin/accounts/${g.customer.accountId}/smpp-deliveries`),
      (view) => refusals >= 3 || view.body.credentials[0]?.lastError != null,
      'the refusal shown',
    );
    if (refusals < 3) {
      assert.equal(seen.body.pending, 1);
      assert.match(seen.body.credentials[0].lastError, /ESME_RX_T_APPN/);
    }
    await waitFor(() => refusals >= 3, 'accepted on the third attempt');
    assert.ok(client.delivered.every((p) => p.receipted_message_id === resp.message_id));
    await waitFor(async () => (await g.gw.admin('GET', `/admin/accounts/${g.customer.accountId}/smpp-deliveries`)).body.pending === 0, 'nothing waiting');
  });
});

describe('an answered delivery that cannot be deleted', () => {
  test('is not sent again when its lease ends; it is deleted once the database can write', async () => {
    // Leases far shorter than the wait below: without the care, the receipt would go out again.
    const g = await smppGateway({ server: { deliveryLeaseMs: 400 } });
    const db = g.gw.core.db.kysely;
    try {
      const allow = await refuseWrites(db, 'smpp_deliveries', 'delete');
      const client = await bound(g, 'transceiver');
      const first = await client.submit({ destination_addr: '5511999990220', registered_delivery: 1, short_message: Buffer.from('once') });
      await waitFor(() => client.delivered.length === 1, 'the receipt');
      // Answered ESME_ROK, its row kept by the failing delete, for several leases.
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(client.delivered.length, 1, 'the answered receipt was not sent again');
      await allow();
      await waitFor(async () => (await db.selectFrom('smpp_deliveries').select('id').execute()).length === 0, 'the answered row deleted');
      // And deliveries go on.
      const second = await client.submit({ destination_addr: '5511999990221', registered_delivery: 1, short_message: Buffer.from('next') });
      await waitFor(() => client.delivered.length === 2, 'the next receipt');
      assert.deepEqual(
        client.delivered.map((p) => p.receipted_message_id),
        [first.message_id, second.message_id],
      );
    } finally {
      await g.close();
    }
  });
});

describe('query_sm and cancel_sm', () => {
  let g: SmppGateway;
  let otherId: string;
  before(async () => {
    g = await smppGateway();
    // Another account's message, by HTTP.
    const other = await g.gw.customer();
    const sent = await g.gw.call(other.key, 'POST', '/messages/sms/send', { receivers: [5511999990299], message: 'not yours', route: other.routeId });
    assert.equal(sent.status, 200);
    const row = await g.gw.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', other.accountId).executeTakeFirstOrThrow();
    otherId = row.id;
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  test("query_sm: the state of the account's own messages only", async () => {
    const client = await bound(g);
    const resp = await client.submit({ destination_addr: '5511999990220', short_message: Buffer.from('query me') });
    await g.gw.eventually(
      () => client.request('query_sm', { message_id: resp.message_id as string, source_addr: 'ACME' }),
      (q) => q.message_state === 2,
      'DELIVERED',
    );
    const q = await client.request('query_sm', { message_id: resp.message_id as string, source_addr: 'ACME' });
    assert.equal(q.command_status, 0);
    assert.equal(q.message_id, resp.message_id);
    assert.match(String(q.final_date), /^\d{12}000\+$/);
    assert.equal((await client.request('query_sm', { message_id: otherId })).command_status, RQUERYFAIL);
    assert.equal((await client.request('query_sm', { message_id: 'no-such-id' })).command_status, RQUERYFAIL);
  });

  test("cancel_sm: a scheduled message is cancelled and refunded, with a DELETED receipt; a sent one or another account's cannot be", async () => {
    const client = await bound(g);
    const scheduled = await client.submit({
      destination_addr: '5511999990221',
      registered_delivery: 1,
      schedule_delivery_time: '000001000000000R',
      short_message: Buffer.from('cancel me'),
    });
    assert.equal((await client.request('cancel_sm', { message_id: scheduled.message_id as string })).command_status, 0);
    const row = await g.gw.core.db.kysely
      .selectFrom('messages')
      .select(['status'])
      .where('id', '=', scheduled.message_id as string)
      .executeTakeFirst();
    assert.equal(row?.status, 'CANCELLED');
    await waitFor(() => client.delivered.some((p) => p.receipted_message_id === scheduled.message_id), 'the receipt');
    assert.match(bodyText(client.delivered.find((p) => p.receipted_message_id === scheduled.message_id) as never), /stat:DELETED/);
    assert.equal((await client.request('cancel_sm', { message_id: scheduled.message_id as string })).command_status, RCANCELFAIL, 'not twice');
    assert.equal((await client.request('cancel_sm', { message_id: otherId })).command_status, RCANCELFAIL);
    assert.equal((await client.request('cancel_sm', { message_id: '' })).command_status, RCANCELFAIL);
  });

  test('a long text whose parts have not all come: query_sm says ENROUTE, cancel_sm drops its parts', async () => {
    const client = await bound(g);
    const part = await client.submit({
      destination_addr: '5511999990222',
      esm_class: 0x40,
      short_message: Buffer.concat([concatUdh(7, 3, 1), Buffer.from('first part of three')]),
    });
    assert.equal(part.command_status, 0);
    const q = await client.request('query_sm', { message_id: part.message_id as string });
    assert.equal(q.command_status, 0);
    assert.equal(q.message_state, 1);
    assert.equal((await client.request('cancel_sm', { message_id: part.message_id as string })).command_status, 0);
    const left = await g.gw.core.db.kysely.selectFrom('smpp_parts').select('id').execute();
    assert.equal(left.length, 0);
  });
});

describe('parts that never complete', () => {
  test('are dropped after the part timeout, nothing charged, with a REJECTD receipt', async () => {
    const g = await smppGateway({ server: { partTimeoutMs: 300 } });
    try {
      const client = await bound(g);
      const part = await client.submit({
        destination_addr: '5511999990230',
        esm_class: 0x40,
        registered_delivery: 1,
        short_message: Buffer.concat([concatUdh(9, 2, 2), Buffer.from('second part only')]),
      });
      assert.equal(part.command_status, 0);
      await waitFor(() => client.delivered.length === 1, 'the REJECTD receipt');
      assert.equal(client.delivered[0]?.receipted_message_id, part.message_id);
      assert.match(bodyText(client.delivered[0] as never), /stat:REJECTD/);
      const messages = await g.gw.core.db.kysely.selectFrom('messages').select('id').execute();
      assert.equal(messages.length, 0);
    } finally {
      await g.close();
    }
  });
});

describe('TLS', () => {
  test('with SMPP_TLS_CERT and SMPP_TLS_KEY the server speaks TLS', async (t) => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'smpp-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          '/CN=localhost',
          '-days',
          '1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        {
          stdio: 'ignore',
        },
      );
    } catch {
      t.skip('openssl not available');
      return;
    }
    const g = await smppGateway({ server: { tls: { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) } } });
    try {
      const client = await Client.connect(g.server.port, true);
      g.clients.push(client);
      assert.equal((await client.bind('transceiver', g.systemId, g.password)).command_status, 0);
      assert.equal((await client.submit({ destination_addr: '5511999990240', short_message: Buffer.from('over TLS') })).command_status, 0);
    } finally {
      await g.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
