import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { concatUdh } from '../../src/carriers/smpp/udh.ts';
import { encodeGsm, encodeUcs2 } from '../../src/carriers/smpp/encoding.ts';
import { bodyText, bound, smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const RECEIVER = '5511999990100';

/** The account's messages as the sent report shows them (newest first). */
async function sent(g: SmppGateway) {
  const res = await g.gw.call(g.customer.key, 'GET', '/reports/messages/sent?limit=1000');
  return res.body.object as { id: string; receiver: string; content: string; status: string; requestId: string }[];
}

async function balance(g: SmppGateway): Promise<number> {
  const res = await g.gw.call(g.customer.key, 'GET', '/balance');
  return res.body.object.balance as number;
}

describe('submit_sm', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway();
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  test('a GSM text is accepted, charged one credit, answered with the message id, and its receipt arrives as deliver_sm', async () => {
    const client = await bound(g);
    const before = await balance(g);
    const resp = await client.submit({
      destination_addr: RECEIVER,
      registered_delivery: 1,
      data_coding: 0,
      short_message: encodeGsm('Hello {world} €5') as Buffer,
    });
    assert.equal(resp.command_status, 0);
    const id = resp.message_id as string;
    assert.match(id, /^[0-9a-f-]{36}$/);
    const messages = await sent(g);
    const message = messages.find((m) => m.id === id);
    assert.ok(message, 'the message is in the sent report under the id submit_sm_resp gave');
    assert.equal(message.content, 'Hello {world} €5');
    assert.equal(message.receiver, RECEIVER);
    assert.equal(Math.round((before - (await balance(g))) * 100), 10, 'one credit at the route price (0.10)');
    await waitFor(() => client.delivered.length > 0, 'the receipt');
    const receipt = client.delivered[0];
    assert.ok(receipt);
    assert.equal(receipt.esm_class, 0x04);
    assert.equal(receipt.receipted_message_id, id);
    assert.equal(receipt.message_state, 2);
    assert.equal(receipt.source_addr, RECEIVER);
    assert.equal(receipt.destination_addr, 'ACME');
    assert.match(
      bodyText(receipt),
      new RegExp(`^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:Hello \\{world\\} \\?5$`),
    );
    const view = await g.gw.admin('GET', `/admin/messages/${id}`);
    assert.equal(view.body.source, 'smpp', "the operator's view of the message says where it came from");
    client.close();
  });

  test('no receipt when registered_delivery does not ask for one; registered_delivery 2 sends failures only', async () => {
    const client = await bound(g);
    const quiet = await client.submit({ destination_addr: '5511999990101', registered_delivery: 0, short_message: Buffer.from('no receipt') });
    const delivered = await client.submit({ destination_addr: '5511999990102', registered_delivery: 2, short_message: Buffer.from('ok one') });
    const failed = await client.submit({ destination_addr: '5511999990001', registered_delivery: 2, short_message: Buffer.from('fails') });
    await waitFor(() => client.delivered.length > 0, 'the failure receipt');
    await g.gw.eventually(
      () => sent(g),
      (rows) => [quiet, delivered].every((r) => rows.find((m) => m.id === r.message_id)?.status === 'DELIVERED'),
      'both delivered',
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      client.delivered.map((p) => p.receipted_message_id),
      [failed.message_id],
    );
    assert.match(bodyText(client.delivered[0] as never), /stat:UNDELIV err:001/);
    assert.equal(client.delivered[0]?.message_state, 5);
    client.close();
  });

  test('Latin-1 and UCS-2 texts', async () => {
    const client = await bound(g, 'transmitter');
    const latin = await client.submit({ destination_addr: '5511999990103', data_coding: 3, short_message: Buffer.from('Olá, ação à vista', 'latin1') });
    const ucs2 = await client.submit({ destination_addr: '5511999990104', data_coding: 8, short_message: encodeUcs2('Привет 😀') });
    const rows = await sent(g);
    assert.equal(rows.find((m) => m.id === latin.message_id)?.content, 'Olá, ação à vista');
    assert.equal(rows.find((m) => m.id === ucs2.message_id)?.content, 'Привет 😀');
    client.close();
  });

  test('a text holding the NUL character (U+0000) is refused with ESME_RSUBMITFAIL on every database, nothing charged; the submits beside it go on', async () => {
    const client = await bound(g);
    const before = await balance(g);
    const half = encodeUcs2(`${'x'.repeat(60)}\u0000${'y'.repeat(60)}`);
    const [ucs2, latin, payload, fine, ...parts] = await Promise.all([
      client.submit({ destination_addr: '5511999990120', data_coding: 8, short_message: encodeUcs2('a\u0000b') }),
      client.submit({ destination_addr: '5511999990121', data_coding: 3, short_message: Buffer.from([0x61, 0, 0x62]) }),
      client.submit({ destination_addr: '5511999990122', data_coding: 3, message_payload: Buffer.from([0x61, 0, 0x62]) }),
      client.submit({ destination_addr: '5511999990123', data_coding: 0, short_message: encodeGsm('@ is GSM octet 0') as Buffer }),
      ...[half.subarray(0, 120), half.subarray(120)].map((chunk, i) =>
        client.submit({ destination_addr: '5511999990124', esm_class: 0x40, data_coding: 8, short_message: Buffer.concat([concatUdh(0x55, 2, i + 1), chunk]) }),
      ),
    ]);
    assert.deepEqual(
      [ucs2, latin, payload].map((r) => r?.command_status),
      [0x45, 0x45, 0x45],
    );
    assert.equal(fine?.command_status, 0);
    assert.deepEqual(parts.map((r) => r.command_status).sort(), [0, 0x45], 'the part that completes the text is refused');
    const rows = await sent(g);
    assert.equal(rows.find((m) => m.id === fine?.message_id)?.content, '@ is GSM octet 0');
    assert.equal(rows.filter((m) => m.receiver >= '5511999990120' && m.receiver <= '5511999990124').length, 1, 'only the GSM text is in the report');
    assert.equal(Math.round((before - (await balance(g))) * 100), 10, 'only the GSM text is charged');
    client.close();
  });

  test('a UCS-2 text with half of a surrogate pair alone is refused with ESME_RSUBMITFAIL, one of an odd number of octets or over 2,000 characters with ESME_RINVMSGLEN; a pair split across two parts is one character', async () => {
    const client = await bound(g);
    const before = await balance(g);
    const ucs2 = (units: number[]) => Buffer.from(units.flatMap((u) => [u >> 8, u & 0xff]));
    const lone = await client.submit({ destination_addr: '5511999990130', data_coding: 8, short_message: ucs2([0x61, 0xd83d, 0x62]) });
    assert.equal(lone.command_status, 0x45);
    // Longer than an HTTP send takes (2,000 characters): ESME_RINVMSGLEN, nothing kept (a carrier could not send it whole).
    const long = await client.submit({ destination_addr: '5511999990130', data_coding: 3, message_payload: Buffer.from('x'.repeat(2001), 'latin1') });
    assert.equal(long.command_status, 0x01);
    // An odd number of octets is no UCS-2 text (its last octet would be lost): ESME_RINVMSGLEN.
    const odd = await client.submit({ destination_addr: '5511999990130', data_coding: 8, short_message: Buffer.from([0, 0x61, 0]) });
    assert.equal(odd.command_status, 0x01);
    // 😀 is D83D DE00: the first part ends with its high half, the second starts with its low half.
    const parts = await Promise.all(
      [ucs2([0x61, 0xd83d]), ucs2([0xde00, 0x62])].map((chunk, i) =>
        client.submit({ destination_addr: '5511999990131', esm_class: 0x40, data_coding: 8, short_message: Buffer.concat([concatUdh(0x56, 2, i + 1), chunk]) }),
      ),
    );
    assert.deepEqual(
      parts.map((r) => r.command_status),
      [0, 0],
    );
    // Parts whose UCS-2 octets come to an odd number: the part that completes the text is refused.
    const oddParts = await Promise.all(
      [Buffer.from([0, 0x61, 0]), Buffer.from([0x62, 0])].map((chunk, i) =>
        client.submit({ destination_addr: '5511999990132', esm_class: 0x40, data_coding: 8, short_message: Buffer.concat([concatUdh(0x57, 2, i + 1), chunk]) }),
      ),
    );
    assert.deepEqual(oddParts.map((r) => r.command_status).sort(), [0, 0x01]);
    const rows = await sent(g);
    assert.equal(rows.filter((m) => m.receiver === '5511999990130' || m.receiver === '5511999990132').length, 0, 'nothing kept of the refused texts');
    assert.equal(rows.find((m) => m.receiver === '5511999990131')?.content, 'a😀b');
    assert.equal(Math.round((before - (await balance(g))) * 100), 10, 'only the whole text is charged');
    client.close();
  });

  for (const [coding, encode, unit] of [
    [0, (t: string) => encodeGsm(t) as Buffer, 'GSM'],
    [3, (t: string) => Buffer.from(t, 'latin1'), 'Latin-1'],
    [8, (t: string) => encodeUcs2(t), 'UCS-2'],
  ] as const) {
    test(`a long ${unit} text in message_payload is one message charged by the 160/153 rule`, async () => {
      const client = await bound(g);
      const text = `${'Long text in one payload. '.repeat(13)}end`; // 341 characters: 3 credits
      const before = await balance(g);
      const resp = await client.submit({ destination_addr: '5511999990105', data_coding: coding, message_payload: encode(text) });
      assert.equal(resp.command_status, 0);
      const row = (await sent(g)).find((m) => m.id === resp.message_id);
      assert.equal(row?.content, text);
      assert.equal(Math.round((before - (await balance(g))) * 100), 30);
      client.close();
    });

    for (const wide of [false, true]) {
      test(`a long ${unit} text in parts with a ${wide ? 16 : 8}-bit reference is re-assembled into one message`, async () => {
        const client = await bound(g);
        const text = `${'Parts of a long text, '.repeat(10)}fim`; // 223 characters: 2 credits
        const bytes = encode(text);
        const step = coding === 8 ? 134 : 153;
        const chunks: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += step) chunks.push(bytes.subarray(i, i + step));
        const reference = wide ? 0x1234 : 0x42;
        const udh = (seq: number) =>
          wide ? Buffer.from([0x06, 0x08, 0x04, reference >> 8, reference & 0xff, chunks.length, seq]) : concatUdh(reference, chunks.length, seq);
        const before = await balance(g);
        const ids: string[] = [];
        for (const [i, chunk] of chunks.entries()) {
          const resp = await client.submit({
            destination_addr: '5511999990106',
            esm_class: 0x40,
            data_coding: coding,
            registered_delivery: 1,
            short_message: Buffer.concat([udh(i + 1), chunk]),
          });
          assert.equal(resp.command_status, 0);
          ids.push(resp.message_id as string);
        }
        assert.equal(new Set(ids).size, 1, 'every part answered with the id of the whole message');
        const row = (await sent(g)).find((m) => m.id === ids[0]);
        assert.equal(row?.content, text);
        assert.equal(Math.round((before - (await balance(g))) * 100), 20);
        await waitFor(() => client.delivered.some((p) => p.receipted_message_id === ids[0]), 'one receipt for the whole text');
        client.close();
      });
    }
  }

  for (const [asking, what] of [
    [[1, 0], 'the first part only (as Kannel splits a text)'],
    [[0, 1], 'the last part only'],
  ] as const) {
    test(`a text in parts whose receipt is asked for on ${what}: the message gets it`, async () => {
      const client = await bound(g);
      const text = `${'Receipt on one part, '.repeat(10)}end`;
      const bytes = encodeGsm(text) as Buffer;
      const chunks = [bytes.subarray(0, 153), bytes.subarray(153)];
      const ids: string[] = [];
      for (const [i, chunk] of chunks.entries()) {
        const resp = await client.submit({
          destination_addr: `551199999011${asking[0]}`,
          esm_class: 0x40,
          registered_delivery: asking[i],
          short_message: Buffer.concat([concatUdh(0x77, 2, i + 1), chunk]),
        });
        assert.equal(resp.command_status, 0);
        ids.push(resp.message_id as string);
      }
      await waitFor(() => client.delivered.some((p) => p.receipted_message_id === ids[0]), 'the receipt of the whole text');
      client.close();
    });
  }
});
