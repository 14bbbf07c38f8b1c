import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import smpp, { type Pdu, type Session } from '../../src/carriers/smpp/smpp-lib.ts';
import { fastSession } from '../../src/carriers/smpp/fast-session.ts';

/** A loopback pair: the gateway's side wrapped by fastSession, the peer a raw socket writing whatever bytes the test chooses. */
async function pair(): Promise<{ session: Session; peer: net.Socket; close: () => Promise<void> }> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as net.AddressInfo;
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const peer = net.connect(address.port, '127.0.0.1');
  const [socket] = await accepted;
  const session = fastSession(new smpp.Session({ socket }));
  return {
    session,
    peer,
    close: async () => {
      peer.destroy();
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Waits for `done`, failing after 10 s (a lost or stuck PDU). */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const submit = (n: number) =>
  new smpp.PDU('submit_sm', {
    sequence_number: n,
    source_addr: 'ACME',
    destination_addr: `55119876${String(n).padStart(5, '0')}`,
    registered_delivery: 1,
    short_message: Buffer.from(`message ${n}`),
  });

test('PDUs cut across reads, several to a read, a byte at a time: all arrive whole, in order, as the package decodes them', async () => {
  const { session, peer, close } = await pair();
  const received: Pdu[] = [];
  session.on('pdu', (pdu: Pdu) => received.push(pdu));
  const bytes = Buffer.concat([
    ...Array.from({ length: 20 }, (_, i) => submit(i + 1).toBuffer()),
    new smpp.PDU('bind_transceiver', { sequence_number: 21, system_id: 'x', password: 'y' }).toBuffer(), // not a hot PDU: the package decodes it
  ]);
  // The first half in one write, the rest a byte at a time.
  const half = Math.floor(bytes.length / 2) + 7;
  peer.write(bytes.subarray(0, half));
  for (let i = half; i < bytes.length; i++) {
    peer.write(bytes.subarray(i, i + 1));
    if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await until(() => received.length >= 21, 'the 21 PDUs');
  assert.deepEqual(
    received.map((p) => p.sequence_number),
    Array.from({ length: 21 }, (_, i) => i + 1),
  );
  for (let i = 0; i < 20; i++) {
    const expected = new smpp.PDU(submit(i + 1).toBuffer());
    assert.deepEqual({ ...received[i] }, { ...expected });
    assert.equal(Object.getPrototypeOf(received[i]), smpp.PDU.prototype);
  }
  assert.equal(received[20]?.command, 'bind_transceiver');
  assert.equal(received[20]?.system_id, 'x');
  await close();
});

test('sending: requests get the next sequence numbers, answers reach their callbacks, and the bytes are what the package writes', async () => {
  const { session, peer, close } = await pair();
  const chunks: Buffer[] = [];
  peer.on('data', (chunk: Buffer) => chunks.push(chunk));
  const answers: string[] = [];
  for (let i = 0; i < 3; i++) {
    session.send(new smpp.PDU('deliver_sm', { source_addr: '5511987650000', short_message: Buffer.from('hi') }), (resp) =>
      answers.push(`${resp.sequence_number}:${String(resp.message_id)}`),
    );
  }
  await until(() => Buffer.concat(chunks).length >= 3 * 16, 'the three deliver_sm');
  await new Promise((resolve) => setTimeout(resolve, 20));
  const written = Buffer.concat(chunks);
  const expected = Buffer.concat(
    [1, 2, 3].map((n) => new smpp.PDU('deliver_sm', { sequence_number: n, source_addr: '5511987650000', short_message: Buffer.from('hi') }).toBuffer()),
  );
  assert.deepEqual(written, expected);
  // The peer answers out of order; each answer reaches its own callback once.
  for (const n of [2, 3, 1, 2]) peer.write(new smpp.PDU('deliver_sm_resp', { sequence_number: n, message_id: `m${n}` }).toBuffer());
  await until(() => answers.length >= 3, 'the three answers');
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(answers, ['2:m2', '3:m3', '1:m1']);
  await close();
});

test('a length the package refuses (too large, shorter than a header) is an error on the session, not a stall or a crash', async () => {
  for (const length of [16_385, 0xffffffff, 0, 8]) {
    const { session, peer, close } = await pair();
    const errored = once(session, 'error') as Promise<[Error]>;
    const header = Buffer.alloc(16);
    header.writeUInt32BE(length, 0);
    header.writeUInt32BE(0x00000004, 4);
    peer.write(header);
    const [err] = await errored;
    assert.match(err.message, length > 16 ? /too large/ : /too small/);
    await close();
  }
});
