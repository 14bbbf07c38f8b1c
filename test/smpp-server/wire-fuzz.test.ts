/**
 * The SMPP server against a customer that sends broken octets: frames too
 * short, too long, cut, with random bodies, fields longer than the PDU,
 * bit flips of good PDUs, before and after a bind. Whatever comes, the
 * server answers or closes that connection, and goes on serving everyone
 * else: a right bind and submit still work after each round, and no
 * message is made of a broken submit.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import smpp, { type PduParams } from '../../src/carriers/smpp/smpp-lib.ts';
import { seededRandom } from '../seeded-random.ts';
import { bound, smppGateway, type SmppGateway } from './helpers.ts';

const random = seededRandom(0x5111);
const int = (n: number) => Math.floor(random() * n);
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));

function pduBytes(command: string, params: PduParams, sequence = 1 + int(1000)): Buffer {
  const pdu = new smpp.PDU(command, params);
  pdu.sequence_number = sequence;
  return pdu.toBuffer();
}

function header(length: number, commandId: number, status = 0, sequence = 7): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(length >>> 0, 0);
  b.writeUInt32BE(commandId >>> 0, 4);
  b.writeUInt32BE(status >>> 0, 8);
  b.writeUInt32BE(sequence >>> 0, 12);
  return b;
}

const SUBMIT = { source_addr_ton: 5, source_addr: 'ACME', dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '5511999990700' };

/** Broken frames, each a list of writes. */
const frames: Array<[string, () => Buffer]> = [
  ['random octets', () => bytes(1 + int(300))],
  ['a length under a header', () => Buffer.concat([header(int(16), 0x00000004), bytes(int(20))])],
  ['a length of 2 GiB', () => Buffer.concat([header(0x7fffffff, 0x00000004), bytes(int(64))])],
  ['a length of 4 GiB - 1', () => header(0xffffffff, 0x00000009)],
  [
    'a submit_sm header, a random body',
    () => {
      const body = bytes(int(200));
      return Buffer.concat([header(16 + body.length, 0x00000004), body]);
    },
  ],
  [
    'a bind_transceiver header, a random body',
    () => {
      const body = bytes(int(80));
      return Buffer.concat([header(16 + body.length, 0x00000009), body]);
    },
  ],
  [
    'a submit_sm whose sm_length runs past the PDU',
    () => {
      const good = pduBytes('submit_sm', { ...SUBMIT, short_message: Buffer.from('hello') });
      // sm_length is the octet before the five of the text.
      good[good.length - 6] = 200;
      return good;
    },
  ],
  [
    'a submit_sm with UDHI set and a header longer than its text',
    () => pduBytes('submit_sm', { ...SUBMIT, esm_class: 0x40, short_message: Buffer.from([0x05 + int(200), 0x00, 0x03, 0x01]) }),
  ],
  ['a submit_sm with UDHI set and an empty text', () => pduBytes('submit_sm', { ...SUBMIT, esm_class: 0x40, short_message: Buffer.alloc(0) })],
  [
    'a part of 0 parts, part 3 of 2',
    () =>
      pduBytes('submit_sm', {
        ...SUBMIT,
        esm_class: 0x40,
        short_message: Buffer.concat([Buffer.from([0x05, 0x00, 0x03, int(256), int(3), 3]), Buffer.from('x')]),
      }),
  ],
  [
    'a TLV whose length runs past the PDU',
    () => {
      const good = pduBytes('submit_sm', { ...SUBMIT, short_message: Buffer.alloc(0) });
      const tlv = Buffer.from([0x04, 0x24, 0x01, 0x00, 0x41]); // message_payload, 256 octets said, one given
      const all = Buffer.concat([good, tlv]);
      all.writeUInt32BE(all.length, 0);
      return all;
    },
  ],
  [
    'a data_coding nobody defines and an odd UCS-2 text',
    () => pduBytes('submit_sm', { ...SUBMIT, data_coding: [0x08, 0x0f, 0xff, 0x42][int(4)], short_message: bytes(1 + 2 * int(20)) }),
  ],
  [
    'an address with no terminating NUL',
    () => {
      const body = Buffer.concat([Buffer.from([0, 5, 0]), Buffer.from('A'.repeat(40))]);
      return Buffer.concat([header(16 + body.length, 0x00000004), body]);
    },
  ],
  [
    'a good submit_sm with a flipped bit',
    () => {
      const good = pduBytes('submit_sm', { ...SUBMIT, registered_delivery: 1, short_message: Buffer.from('flip') });
      const at = 16 + int(good.length - 16);
      good[at] = (good[at] as number) ^ (1 << int(8));
      return good;
    },
  ],
  [
    'a good query_sm with a flipped bit',
    () => {
      const good = pduBytes('query_sm', { message_id: 'x'.repeat(int(70)), source_addr: 'ACME' });
      const at = int(good.length);
      good[at] = (good[at] as number) ^ (1 << int(8));
      return good;
    },
  ],
  ['a response nobody asked for', () => pduBytes('deliver_sm_resp', { message_id: '' }, 999_999)],
  ['a header cut in the middle', () => header(40, 0x00000004).subarray(0, 1 + int(14))],
];

/** Sends the octets on a new connection, bound first when asked, and waits for an answer, the close, or a short pause. */
async function throwAt(port: number, frame: Buffer, bind: { systemId: string; password: string } | null): Promise<void> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  if (bind) {
    const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write(pduBytes('bind_transceiver', { system_id: bind.systemId, password: bind.password, interface_version: 0x34 }));
    await answered;
  }
  const done = new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    // A pause, not a deadline: nothing below depends on what came back by then.
    setTimeout(resolve, 100);
  });
  socket.write(frame);
  await done;
  socket.destroy();
}

/** On a bound connection: the octets, then the command_status of the first answer. */
async function statusOf(port: number, frame: Buffer, bind: { systemId: string; password: string }): Promise<number> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const answers: Buffer[] = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 16 && pending.length >= pending.readUInt32BE(0)) {
      answers.push(pending.subarray(0, pending.readUInt32BE(0)));
      pending = pending.subarray(pending.readUInt32BE(0));
    }
  });
  socket.write(pduBytes('bind_transceiver', { system_id: bind.systemId, password: bind.password, interface_version: 0x34 }));
  while (answers.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  socket.write(frame);
  while (answers.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  socket.destroy();
  assert.equal(answers[0]?.readUInt32BE(8), 0, 'bound');
  return (answers[1] as Buffer).readUInt32BE(8);
}

describe('SMPP server: broken octets from a customer', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway({ credential: { maxBinds: 50 } });
  });
  after(async () => {
    await g.close();
  });

  test('a field running past the end of the PDU is refused, never read cut: ESME_RINVMSGLEN for the text, ESME_RINVCMDLEN for another', async () => {
    const credential = { systemId: g.systemId, password: g.password };
    const text = pduBytes('submit_sm', { ...SUBMIT, short_message: Buffer.from('hello') });
    text[text.length - 6] = 200; // sm_length: 200 octets said, 5 there
    assert.equal(await statusOf(g.server.port, text, credential), 0x01);
    const payload = pduBytes('submit_sm', { ...SUBMIT, short_message: Buffer.alloc(0) });
    const withTlv = Buffer.concat([payload, Buffer.from([0x04, 0x24, 0x01, 0x00, 0x41])]); // message_payload: 256 said, 1 there
    withTlv.writeUInt32BE(withTlv.length, 0);
    assert.equal(await statusOf(g.server.port, withTlv, credential), 0x01);
    const address = pduBytes('submit_sm', { ...SUBMIT, destination_addr: '5511999990701', short_message: Buffer.from('x') });
    const cut = Buffer.concat([header(16 + 3 + 'ACME'.length, 0x00000004), Buffer.from([0, 5, 0]), Buffer.from('ACME')]); // source_addr without its NUL
    assert.equal(await statusOf(g.server.port, cut, credential), 0x02);
    // The same submit whole is taken.
    assert.equal(await statusOf(g.server.port, address, credential), 0);
  });

  test('each kind of broken frame, before and after a bind: the server goes on serving, and accepts nothing of it', async () => {
    const messages = async () =>
      (await g.gw.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', g.customer.accountId).execute()).length;
    // What a flipped bit or an unknown coding left valid may have been accepted; anything else is refused.
    const mayBeValid = (name: string) => name.includes('flipped') || name.includes('data_coding');
    for (let round = 0; round < 2; round++) {
      for (const [name, make] of frames) {
        const before = await messages();
        const credential = { systemId: g.systemId, password: g.password };
        await throwAt(g.server.port, make(), round % 2 === 0 ? credential : null);
        if (!mayBeValid(name)) assert.equal(await messages(), before, `${name}: nothing accepted`);
      }
      // Still serving: a right bind and submit, answered ESME_ROK.
      const client = await bound(g);
      const resp = await client.submit({ destination_addr: `55119999907${String(10 + round)}`, short_message: Buffer.from('still here') });
      assert.equal(resp.command_status, 0, `round ${round}: a good submit after the broken ones`);
      client.close();
    }
  });
});
