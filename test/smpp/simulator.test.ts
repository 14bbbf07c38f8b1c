import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import smpp, { type Pdu, type PduParams, type Session } from '../../src/carriers/smpp/smpp-lib.ts';
import { startSmscSimulator, type SmscSimulator } from '../../tools/smsc-sim/server.ts';
import { assemble, type SubmitRecord } from '../../tools/smsc-sim/checks.ts';
import { encodeMessage } from '../../src/carriers/smpp/encoding.ts';
import { CREDENTIALS } from './helpers.ts';

/** A bare ESME session on the simulator, to send what the connector never would. */
async function rawSession(port: number): Promise<Session> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise((resolve) => socket.once('connect', resolve));
  const session = new smpp.Session({ socket });
  session.on('error', () => undefined);
  return session;
}

function request(session: Session, command: string, params: PduParams): Promise<Pdu> {
  return new Promise((resolve, reject) => {
    if (!session.send(new smpp.PDU(command, params), resolve)) reject(new Error('not writable'));
  });
}

const submit = (session: Session, dataCoding: number, esmClass: number, body: Buffer): Promise<Pdu> =>
  request(session, 'submit_sm', { destination_addr: '491700000000', source_addr: 'T', data_coding: dataCoding, esm_class: esmClass, short_message: body });

describe('SMSC simulator protocol checks', () => {
  let sim: SmscSimulator;
  let session: Session;
  before(async () => {
    sim = await startSmscSimulator(CREDENTIALS);
    session = await rawSession(sim.port);
  });
  after(async () => {
    session.destroy();
    await sim.close();
  });

  it('refuses wrong credentials', async () => {
    const other = await rawSession(sim.port);
    const badId = await request(other, 'bind_transceiver', { system_id: 'nobody', password: CREDENTIALS.password });
    assert.equal(badId.command_status, 0x0d, 'ESME_RBINDFAIL');
    const other2 = await rawSession(sim.port);
    const badPassword = await request(other2, 'bind_transceiver', { system_id: CREDENTIALS.systemId, password: 'nope' });
    assert.equal(badPassword.command_status, 0x0e, 'ESME_RINVPASWD');
    other.destroy();
    other2.destroy();
  });

  it('refuses submits before bind', async () => {
    assert.equal((await submit(session, 0, 0, Buffer.from('hi'))).command_status, 0x04, 'ESME_RINVBNDSTS');
  });

  it('binds and checks data_coding, length and UDH', async () => {
    const bound = await request(session, 'bind_transceiver', { system_id: CREDENTIALS.systemId, password: CREDENTIALS.password });
    assert.equal(bound.command_status, 0);
    const udh = Buffer.from([5, 0, 3, 1, 2, 1]);
    const cases: Array<[string, number, number, Buffer, number]> = [
      ['160 septets', 0, 0, Buffer.alloc(160, 0x61), 0],
      ['161 septets', 0, 0, Buffer.alloc(161, 0x61), 0x01],
      ['UDH + 153 septets', 0, 0x40, Buffer.concat([udh, Buffer.alloc(153, 0x61)]), 0],
      ['UDH + 154 septets', 0, 0x40, Buffer.concat([udh, Buffer.alloc(154, 0x61)]), 0x01],
      ['octet above 0x7F under GSM', 0, 0, Buffer.from([0x61, 0x80]), 0x08],
      ['140 UCS-2 octets', 8, 0, Buffer.alloc(140, 0x20), 0],
      ['141 octets', 8, 0, Buffer.alloc(141, 0x20), 0x01],
      ['UDH + 134 UCS-2 octets', 8, 0x40, Buffer.concat([udh, Buffer.alloc(134, 0x20)]), 0],
      ['UDH longer than body', 8, 0x40, Buffer.from([9, 0, 3, 1, 2, 1]), 0x08],
      ['concat sequence 0', 8, 0x40, Buffer.from([5, 0, 3, 1, 2, 0, 0, 0x41]), 0x08],
      ['data_coding 0x05', 5, 0, Buffer.from('x'), 0x104],
      ['Latin-1', 3, 0, Buffer.from('café', 'latin1'), 0],
    ];
    for (const [name, dataCoding, esmClass, body, expected] of cases) {
      assert.equal((await submit(session, dataCoding, esmClass, body)).command_status, expected, name);
    }
    const accepted = sim.stats.submits;
    assert.equal(accepted.length, 5);
    assert.deepEqual(accepted[4]?.bytes, Buffer.from('café', 'latin1'));
    assert.equal(sim.messages()[4]?.text, 'café');
  });

  it('answers enquire_link and unknown commands', async () => {
    assert.equal((await request(session, 'enquire_link', {})).command_status, 0);
    const nack = await request(session, 'query_sm', { message_id: '1' });
    assert.equal(nack.command_status, 0x03, 'ESME_RINVCMDID');
  });
});

describe('the simulator puts parts together as a handset does', () => {
  const LONG = (n: number) => `run ${n} ${'long text '.repeat(20)}`;
  const records = (text: string, reference: number, only?: number[]): SubmitRecord[] =>
    encodeMessage(text, reference)
      .segments.map((s, i) => ({
        messageId: `${text.slice(0, 6)}-${i}`,
        receiver: '5511900000001',
        sender: 'ACME',
        dataCoding: s.dataCoding,
        esmClass: s.esmClass,
        registeredDelivery: 1,
        bytes: s.shortMessage,
      }))
      .filter((_, i) => !only || only.includes(i));

  it('a part left over from a message cut off does not take the part of a later message with the same reference', () => {
    // Message 17 lost its second part in a dropped connection; message 38 shares its 8-bit reference.
    const out = assemble([...records(LONG(17), 42, [0]), ...records(LONG(38), 42)]);
    assert.deepEqual(
      out.map((m) => [m.text, m.complete]),
      [
        [LONG(17).slice(0, 153), false],
        [LONG(38), true],
      ],
    );
  });

  it('a resent message completes in its own group; the first attempt stays incomplete', () => {
    const out = assemble([...records(LONG(5), 7, [0]), ...records(LONG(5), 7)]);
    assert.deepEqual(
      out.map((m) => m.complete),
      [false, true],
    );
    assert.equal(out[1]?.text, LONG(5));
  });
});
