import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalId, convertId, messageStateStatus, parseReceipt, parseReceiptText, scanReceiptText, statStatus } from '../../src/carriers/smpp/receipt.ts';
import { seededRandom } from '../seeded-random.ts';
import { SubmitRate } from '../../src/carriers/smpp/submit-rate.ts';

// SMPP 3.4 Appendix B: "id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E Text: ..."
const APPENDIX_B = 'id:0123456789 sub:001 dlvrd:001 submit date:0610191018 done date:0610191019 stat:DELIVRD err:000 Text:Hello World';

describe('receipt text', () => {
  it('parses the Appendix B format', () => {
    const r = parseReceiptText(APPENDIX_B);
    assert.equal(r.id, '0123456789');
    assert.equal(r.sub, '001');
    assert.equal(r.dlvrd, '001');
    assert.deepEqual(r.submitDate, new Date(Date.UTC(2006, 9, 19, 10, 18)));
    assert.deepEqual(r.doneDate, new Date(Date.UTC(2006, 9, 19, 10, 19)));
    assert.equal(r.stat, 'DELIVRD');
    assert.equal(r.err, '000');
    assert.equal(r.text, 'Hello World');
  });

  it('takes dates with seconds, keys in any case, and missing fields', () => {
    const r = parseReceiptText('ID:42 SUBMIT DATE:240229235959 Done_Date:2403010000 STAT:undeliv');
    assert.equal(r.id, '42');
    assert.deepEqual(r.submitDate, new Date(Date.UTC(2024, 1, 29, 23, 59, 59)));
    assert.deepEqual(r.doneDate, new Date(Date.UTC(2024, 2, 1, 0, 0)));
    assert.equal(r.stat, 'undeliv');
    assert.equal(r.err, undefined);
    assert.equal(r.text, undefined);
  });

  it('lets text: run to the end even if it looks like keys', () => {
    const r = parseReceiptText('id:7 stat:EXPIRED err:5 text:id:9 stat:DELIVRD');
    assert.equal(r.id, '7');
    assert.equal(r.stat, 'EXPIRED');
    assert.equal(r.text, 'id:9 stat:DELIVRD');
  });

  it('ignores malformed dates', () => {
    assert.equal(parseReceiptText('id:1 done date:2413011200').doneDate, undefined);
    assert.equal(parseReceiptText('id:1 done date:24010112').doneDate, undefined);
  });

  it('reads the usual form (its fast path) exactly as the general scan does, and any variant of it too', () => {
    const random = seededRandom(0x5eed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
    const value = () => pick(['', digits(3), digits(10), 'A1b2C3', 'x-y_z', 'text:1', 'id:9', '\u00e9']);
    const date = () => pick([digits(10), digits(12), '2402292359', '2413011200', '24010112', '240101120060', '24O1011200', '', '+123456789', '٠١٢٣٤٥٦٧٨٩']);
    const text = () => pick(['', 'Hello World', ' two  spaces ', 'id:9 stat:DELIVRD err:1', 'line\nbreak', 'tab\there']);
    const variants: ((s: string) => string)[] = [
      (s) => s,
      (s) => s.toUpperCase(),
      (s) => s.replace('submit date', 'submit_date'),
      (s) => s.replace(' stat:', '  stat:'),
      (s) => s.replace(' err:', '\terr:'),
      (s) => s.replace(/ sub:\S*/, ''),
      (s) => `${s} `,
      (s) => ` ${s}`,
      (s) => s.replace('stat:', 'stat :'),
    ];
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
      const withText = random() < 0.7 ? ` ${pick(['text', 'Text', 'TEXT'])}:${text()}` : '';
      const standard = `id:${value()} sub:${value()} dlvrd:${value()} submit date:${date()} done date:${date()} stat:${pick(['DELIVRD', 'UNDELIV', 'x', ''])} err:${value()}${withText}`;
      const input = pick(variants)(standard);
      if (input === standard) fast++;
      assert.deepEqual(parseReceiptText(input), scanReceiptText(input), input);
    }
    assert.ok(fast > 300, 'the usual form itself was among the inputs');
  });
});

describe('receipt status', () => {
  it('maps every Appendix B stat word', () => {
    const expected = {
      DELIVRD: 'DELIVERED',
      UNDELIV: 'UNDELIVERED',
      EXPIRED: 'EXPIRED',
      REJECTD: 'FAILED',
      DELETED: 'FAILED',
      ACCEPTD: 'SENT',
      UNKNOWN: 'SENT',
      ENROUTE: 'SENT',
    };
    for (const [stat, status] of Object.entries(expected)) assert.equal(statStatus(stat), status, stat);
    assert.equal(statStatus('delivrd'), 'DELIVERED');
    assert.equal(statStatus('BOGUS'), null);
  });

  it('maps message_state 1..8 (SMPP 3.4 §5.2.28)', () => {
    const expected = [null, 'SENT', 'DELIVERED', 'EXPIRED', 'FAILED', 'UNDELIVERED', 'SENT', 'SENT', 'FAILED', null];
    for (const [state, status] of expected.entries()) assert.equal(messageStateStatus(state), status, `state ${state}`);
  });
});

describe('receipt ids', () => {
  it('canonicalises ids in their base', () => {
    assert.equal(canonicalId('00B2D05E00', 'hex'), 'b2d05e00');
    assert.equal(canonicalId('0000000042', 'decimal'), '42');
    assert.equal(canonicalId(' msg-abc ', 'hex'), 'msg-abc');
    assert.equal(canonicalId('0', 'decimal'), '0');
  });

  it('converts receipt-text ids between bases', () => {
    assert.equal(convertId('3000000000', 'decimal', 'hex'), 'b2d05e00');
    assert.equal(convertId('B2D05E00', 'hex', 'decimal'), '3000000000');
    assert.equal(convertId('xyz', 'decimal', 'hex'), 'xyz');
  });
});

describe('parseReceipt', () => {
  const ids = { idBase: 'hex' as const };

  it('reads the text when there are no TLVs', () => {
    const r = parseReceipt({ text: 'id:00B2D05E00 sub:001 dlvrd:000 stat:UNDELIV err:001 text:x' }, ids);
    assert.deepEqual(r, { carrierId: 'b2d05e00', status: 'UNDELIVERED', details: 'stat:UNDELIV err:001' });
  });

  it('converts a decimal text id to the hex id of submit_sm_resp', () => {
    const r = parseReceipt({ text: APPENDIX_B.replace('0123456789', '3000000000') }, { idBase: 'hex', receiptIdBase: 'decimal' });
    assert.equal(r?.carrierId, 'b2d05e00');
    assert.equal(r?.status, 'DELIVERED');
    assert.deepEqual(r?.doneDate, new Date(Date.UTC(2006, 9, 19, 10, 19)));
  });

  it('prefers receipted_message_id and message_state over the text', () => {
    const r = parseReceipt(
      { text: 'id:3000000000 stat:DELIVRD err:000', receiptedMessageId: '00B2D05E00', messageState: 3 },
      { idBase: 'hex', receiptIdBase: 'decimal' },
    );
    assert.deepEqual(r, { carrierId: 'b2d05e00', status: 'EXPIRED', details: 'stat:EXPIRED err:000' });
  });

  it('works from TLVs alone, taking err from network_error_code', () => {
    const r = parseReceipt({ text: '', receiptedMessageId: '1A', messageState: 5, networkErrorCode: Buffer.from([3, 0, 1]) }, ids);
    assert.deepEqual(r, { carrierId: '1a', status: 'UNDELIVERED', details: 'stat:UNDELIV err:001' });
  });

  it('keeps unknown stat words as SENT and returns null without any id', () => {
    assert.deepEqual(parseReceipt({ text: 'id:5 stat:WEIRD' }, ids), { carrierId: '5', status: 'SENT', details: 'stat:WEIRD' });
    assert.equal(parseReceipt({ text: 'stat:DELIVRD' }, ids), null);
  });
});

describe('SubmitRate', () => {
  it('allows at most the rate in any second, however the seconds are cut', () => {
    let now = 0;
    const rate = new SubmitRate(2, () => now);
    assert.equal(rate.take(), true);
    assert.equal(rate.take(), true);
    assert.equal(rate.take(), false);
    // A second and 5% (see SLACK).
    assert.equal(rate.wait(), 1050);
    now = 1049;
    assert.equal(rate.take(), false);
    now = 1050;
    assert.equal(rate.take(), true);
    assert.equal(rate.take(), true);
    assert.equal(rate.take(), false);
  });

  it('spreads a rate below one a second', () => {
    let now = 0;
    const rate = new SubmitRate(0.5, () => now);
    assert.equal(rate.take(), true);
    assert.equal(rate.wait(), 2100);
    now = 2100;
    assert.equal(rate.take(), true);
  });

  it('keeps any one-second window at or under the rate over a long run', () => {
    let now = 0;
    const rate = new SubmitRate(7, () => now);
    const sent: number[] = [];
    for (now = 0; now < 10_000; now += 13) while (rate.take()) sent.push(now);
    for (const start of sent) assert.ok(sent.filter((t) => t >= start && t < start + 1000).length <= 7);
    assert.ok(sent.length >= 62, String(sent.length));
  });

  it('does not limit with a rate of 0', () => {
    const rate = new SubmitRate(0);
    for (let i = 0; i < 1000; i++) assert.equal(rate.take(), true);
  });
});

it('SubmitRate.fill: a new bind waits one window before its first submit', () => {
  let now = 5000;
  const rate = new SubmitRate(10, () => now);
  rate.fill();
  assert.equal(rate.take(), false);
  assert.equal(rate.wait(), 1050);
  now = 6050;
  assert.equal(rate.take(), true);
});
