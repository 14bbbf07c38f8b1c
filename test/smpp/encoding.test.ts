import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeText, encodeMessage, gsmSeptets, messageReference, DATA_CODING_GSM, DATA_CODING_UCS2, ESM_UDHI } from '../../src/carriers/smpp/encoding.ts';
import { parseUdh } from '../../src/carriers/smpp/udh.ts';

const hex = (b: Buffer): string => b.toString('hex');
const udh = (ref: number, total: number, seq: number): string => hex(Buffer.from([5, 0, 3, ref, total, seq]));
const ucs2 = (s: string): string => hex(Buffer.from(s, 'utf16le').swap16());

describe('GSM 03.38 encoding', () => {
  it('maps the basic table to unpacked septets with data_coding 0', () => {
    const m = encodeMessage('@£$¥ Hello\nÄÖÑÜ§¿äöñüàΔ_', 7);
    assert.equal(m.encoding, 'GSM');
    assert.equal(m.segments.length, 1);
    const [s] = m.segments;
    assert.equal(s?.dataCoding, DATA_CODING_GSM);
    assert.equal(s?.esmClass, 0);
    assert.equal(hex(s?.shortMessage ?? Buffer.alloc(0)), '000102032048656c6c6f0a5b5c5d5e5f607b7c7d7e7f1011');
  });

  it('escapes the extension table, two septets each', () => {
    const m = encodeMessage('^{}\\[~]|€\f', 0);
    assert.equal(hex(m.segments[0]?.shortMessage ?? Buffer.alloc(0)), '1b141b281b291b2f1b3c1b3d1b3e1b401b651b0a');
    assert.equal(m.units, 20);
    assert.equal(gsmSeptets('a€'), 3);
    assert.equal(gsmSeptets('ç'), null, 'lower-case c cedilla is not in the default alphabet');
  });

  it('keeps 160 septets in one part and splits 161 into 153 + 8', () => {
    const one = encodeMessage('a'.repeat(160), 1);
    assert.equal(one.segments.length, 1);
    assert.equal(one.segments[0]?.shortMessage.length, 160);

    const two = encodeMessage('a'.repeat(161), 0x42);
    assert.equal(two.segments.length, 2);
    const [first, second] = two.segments;
    assert.equal(hex(first?.shortMessage.subarray(0, 6) ?? Buffer.alloc(0)), udh(0x42, 2, 1));
    assert.equal(hex(second?.shortMessage.subarray(0, 6) ?? Buffer.alloc(0)), udh(0x42, 2, 2));
    assert.equal(first?.shortMessage.length, 6 + 153);
    assert.equal(second?.shortMessage.length, 6 + 8);
    assert.equal(first?.esmClass, ESM_UDHI);
  });

  it("a long text encodes with each message's own reference, also when the same text was encoded before", () => {
    const text = 'b'.repeat(200);
    const [a, b] = [encodeMessage(text, 7), encodeMessage(text, 9)];
    assert.equal(hex(a.segments[0]?.shortMessage.subarray(0, 6) ?? Buffer.alloc(0)), udh(7, 2, 1));
    assert.equal(hex(b.segments[0]?.shortMessage.subarray(0, 6) ?? Buffer.alloc(0)), udh(9, 2, 1));
    // One segment has no reference: the same text encodes to the same bytes for every receiver.
    assert.deepEqual(encodeMessage('same text', 1), encodeMessage('same text', 2));
  });

  it('counts extension characters as two septets at the boundary', () => {
    assert.equal(encodeMessage('€'.repeat(80), 0).segments.length, 1);
    assert.equal(encodeMessage(`${'a'.repeat(159)}€`, 0).segments.length, 2);
  });

  it('never splits an escape sequence across parts', () => {
    const m = encodeMessage(`${'a'.repeat(152)}€${'b'.repeat(10)}`, 9);
    assert.equal(m.segments.length, 2);
    const body1 = m.segments[0]?.shortMessage.subarray(6) ?? Buffer.alloc(0);
    const body2 = m.segments[1]?.shortMessage.subarray(6) ?? Buffer.alloc(0);
    assert.equal(body1.length, 152);
    assert.notEqual(body1.at(-1), 0x1b);
    assert.equal(hex(body2), `1b65${'62'.repeat(10)}`);
  });
});

describe('UCS-2 encoding', () => {
  it('falls back to UCS-2 for any character outside GSM', () => {
    const m = encodeMessage('Hello ç', 0);
    assert.equal(m.encoding, 'UCS2');
    assert.equal(m.segments[0]?.dataCoding, DATA_CODING_UCS2);
    assert.equal(hex(m.segments[0]?.shortMessage ?? Buffer.alloc(0)), ucs2('Hello ç'));
  });

  it('keeps 70 units in one part and splits 71 into 67 + 4', () => {
    assert.equal(encodeMessage('Ж'.repeat(70), 0).segments.length, 1);
    const m = encodeMessage('Ж'.repeat(71), 3);
    assert.deepEqual(
      m.segments.map((s) => s.shortMessage.length),
      [6 + 134, 6 + 8],
    );
    assert.equal(hex(m.segments[1]?.shortMessage ?? Buffer.alloc(0)), udh(3, 2, 2) + ucs2('ЖЖЖЖ'));
  });

  it('counts surrogate pairs as two units and never splits them', () => {
    assert.equal(encodeMessage('😀'.repeat(35), 0).segments.length, 1);
    const m = encodeMessage(`${'Ж'.repeat(66)}😀xxxxx`, 5);
    assert.equal(m.segments.length, 2);
    assert.equal(hex(m.segments[0]?.shortMessage.subarray(6) ?? Buffer.alloc(0)), ucs2('Ж'.repeat(66)));
    assert.equal(hex(m.segments[1]?.shortMessage.subarray(6) ?? Buffer.alloc(0)), ucs2('😀xxxxx'));
    const many = encodeMessage('😀'.repeat(36), 0);
    assert.deepEqual(
      many.segments.map((s) => s.shortMessage.length - 6),
      [132, 12],
    );
  });

  it('refuses more than 255 parts', () => {
    assert.equal(encodeMessage('a'.repeat(255 * 153), 0).segments.length, 255);
    assert.throws(() => encodeMessage('a'.repeat(255 * 153 + 1), 0), RangeError);
  });
});

describe('decoding and UDH', () => {
  it('decodes each data_coding', () => {
    assert.equal(decodeText(Buffer.from('001b65611b3c', 'hex'), 0), '@€a[');
    assert.equal(decodeText(Buffer.from('Hi!', 'ascii'), 1), 'Hi!');
    assert.equal(decodeText(Buffer.from('e9e8', 'hex'), 3), 'éè');
    assert.equal(decodeText(Buffer.from(ucs2('Жx😀'), 'hex'), 8), 'Жx😀');
    assert.equal(decodeText(Buffer.from('48', 'hex'), 0xf0), 'H');
  });

  it('round-trips what it encodes', () => {
    for (const text of ['{[~]}|^€\f', 'Grüße, Åsa!', 'emoji 😀 ok', '']) {
      const m = encodeMessage(text, 0);
      assert.equal(decodeText(m.segments[0]?.shortMessage ?? Buffer.alloc(0), m.dataCoding), text);
    }
  });

  it('parses 8- and 16-bit concatenation headers and rejects malformed ones', () => {
    assert.deepEqual(parseUdh(Buffer.from('050003aa0302ff', 'hex'))?.concat, { reference: 0xaa, total: 3, sequence: 2 });
    const wide = parseUdh(Buffer.from('060804beef020161', 'hex'));
    assert.deepEqual(wide?.concat, { reference: 0xbeef, total: 2, sequence: 1 });
    assert.equal(hex(wide?.body ?? Buffer.alloc(0)), '61');
    assert.equal(parseUdh(Buffer.from('0a0003aa0302', 'hex')), null, 'header longer than body');
    assert.equal(parseUdh(Buffer.from('050004aa0302', 'hex')), null, 'element overruns header');
    assert.equal(parseUdh(Buffer.from('050003aa0203', 'hex')), null, 'sequence above total');
  });

  it('derives a stable 8-bit reference from the message id', () => {
    assert.equal(messageReference('msg-1'), messageReference('msg-1'));
    assert.ok(messageReference('msg-1') >= 0 && messageReference('msg-1') <= 255);
  });
});
