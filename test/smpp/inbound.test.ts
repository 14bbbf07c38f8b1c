import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Inbound, Receipt } from '../../src/carriers/carrier.ts';
import { DeliverHandler } from '../../src/carriers/smpp/inbound.ts';
import smpp, { silentLogger, type PduParams } from '../../src/carriers/smpp/smpp-lib.ts';

function handler(): { h: DeliverHandler; receipts: Receipt[]; inbound: Inbound[] } {
  const receipts: Receipt[] = [];
  const inbound: Inbound[] = [];
  const h = new DeliverHandler({ receipt: async (r) => void receipts.push(r), inbound: async (m) => void inbound.push(m) }, { idBase: 'hex' }, silentLogger);
  return { h, receipts, inbound };
}

const mo = (params: PduParams) => new smpp.PDU('deliver_sm', { source_addr: '491700000001', source_addr_ton: 1, destination_addr: '4930', ...params });

describe('DeliverHandler', () => {
  it('reads a data_sm receipt from TLVs and an intermediate notification', () => {
    const { h, receipts, inbound } = handler();
    h.handle(new smpp.PDU('data_sm', { esm_class: 0x04, receipted_message_id: '00FF', message_state: 2 }));
    h.handle(mo({ esm_class: 0x20, short_message: Buffer.from('id:100 stat:ENROUTE') }));
    assert.deepEqual(
      receipts.map((r) => [r.carrierId, r.status, r.details]),
      [
        ['ff', 'DELIVERED', 'stat:DELIVRD'],
        ['100', 'SENT', 'stat:ENROUTE'],
      ],
    );
    assert.equal(inbound.length, 0);
  });

  it('ignores SME acknowledgements', () => {
    const { h, receipts, inbound } = handler();
    h.handle(mo({ esm_class: 0x08, short_message: Buffer.from('ack') }));
    assert.equal(receipts.length + inbound.length, 0);
  });

  it('takes message_payload when short_message is empty', () => {
    const { h, inbound } = handler();
    h.handle(new smpp.PDU('data_sm', { source_addr: '123', data_coding: 3, message_payload: Buffer.from('Grüße', 'latin1') }));
    assert.deepEqual(
      inbound.map((m) => [m.from, m.to, m.text]),
      [['123', null, 'Grüße']],
    );
  });

  it('joins parts given by SAR TLVs', () => {
    const { h, inbound } = handler();
    h.handle(mo({ short_message: Buffer.from(' world'), sar_msg_ref_num: 513, sar_total_segments: 2, sar_segment_seqnum: 2 }));
    assert.equal(inbound.length, 0);
    h.handle(mo({ short_message: Buffer.from('Hello'), sar_msg_ref_num: 513, sar_total_segments: 2, sar_segment_seqnum: 1 }));
    assert.deepEqual(
      inbound.map((m) => [m.from, m.text]),
      [['+491700000001', 'Hello world']],
    );
  });

  it('joins a GSM escape split between parts', () => {
    const { h, inbound } = handler();
    h.handle(mo({ esm_class: 0x40, short_message: Buffer.from([5, 0, 3, 9, 2, 1, 0x61, 0x1b]) }));
    h.handle(mo({ esm_class: 0x40, short_message: Buffer.from([5, 0, 3, 9, 2, 2, 0x65, 0x62]) }));
    assert.equal(inbound[0]?.text, 'a€b');
  });

  it('keeps parts of different senders apart and emits incomplete ones on flush', () => {
    const { h, inbound } = handler();
    h.handle(mo({ esm_class: 0x40, short_message: Buffer.from([5, 0, 3, 1, 2, 1, 0x61]) }));
    h.handle(mo({ source_addr: '491700000002', esm_class: 0x40, short_message: Buffer.from([5, 0, 3, 1, 2, 2, 0x62]) }));
    assert.equal(inbound.length, 0);
    h.flush();
    assert.deepEqual(inbound.map((m) => m.text).sort(), ['a', 'b']);
  });

  it('treats a malformed UDH as plain text rather than dropping the message', () => {
    const { h, inbound } = handler();
    h.handle(mo({ esm_class: 0x40, data_coding: 3, short_message: Buffer.from([0x20, 0x41]) }));
    assert.equal(inbound[0]?.text, ' A');
  });
});
