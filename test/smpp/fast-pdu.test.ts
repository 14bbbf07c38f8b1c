import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { decodePdu, encodePdu } from '../../src/carriers/smpp/fast-pdu.ts';
import smpp, { type Pdu } from '../../src/carriers/smpp/smpp-lib.ts';
import { seededRandom } from '../seeded-random.ts';

// Every case is compared with the package itself: same objects from the same bytes, same bytes from the same objects.

type Options = Record<string, unknown>;
type Rng = () => number;

const rng = (seed: number): Rng => seededRandom(seed);
const int = (r: Rng, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rng, items: readonly T[]): T => items[int(r, items.length)] as T;
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function bytes(r: Rng, length: number): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = int(r, 256);
  return b;
}

/** A C-string of 0..max characters, often exactly 0 or max; `wide` also draws NULs and non-Latin-1 UTF-16 units. */
function cstring(r: Rng, max: number, wide = false): string {
  const length = pick(r, [0, max, int(r, max + 1)]);
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(wide && r() < 0.1 ? int(r, 0x10000) : 1 + int(r, 255));
  return s;
}

/** schedule_delivery_time / validity_period: empty, absolute, relative, or short (padded to relative by the package). */
function time(r: Rng): string {
  switch (int(r, 4)) {
    case 0:
      return '';
    case 1:
      return `${pad(int(r, 100))}${pad(1 + int(r, 12))}${pad(1 + int(r, 28))}${pad(int(r, 24))}${pad(int(r, 60))}${pad(int(r, 60))}${int(r, 10)}${pad(int(r, 49))}${pick(r, ['+', '-'])}`;
    case 2:
      return `${pad(int(r, 3))}${pad(int(r, 12))}${pad(int(r, 28))}${pad(int(r, 24))}${pad(int(r, 60))}${pad(int(r, 60))}000R`;
    default:
      return String(1 + int(r, 999999));
  }
}

const SM_INT8 = [
  'source_addr_ton',
  'source_addr_npi',
  'dest_addr_ton',
  'dest_addr_npi',
  'esm_class',
  'protocol_id',
  'priority_flag',
  'registered_delivery',
  'replace_if_present_flag',
  'data_coding',
  'sm_default_msg_id',
];

/** TLVs the gateway meets, each with a value generator. */
const TLVS: Record<string, (r: Rng, wide: boolean) => unknown> = {
  message_payload: (r) => bytes(r, pick(r, [0, 1, 300, int(r, 2000)])),
  receipted_message_id: (r, wide) => cstring(r, 65, wide),
  message_state: (r) => int(r, 256),
  sar_msg_ref_num: (r) => int(r, 0x10000),
  sar_total_segments: (r) => int(r, 256),
  sar_segment_seqnum: (r) => int(r, 256),
  user_message_reference: (r) => int(r, 0x10000),
  network_error_code: (r) => bytes(r, 3),
};

/** submit_sm / deliver_sm options: any param may be left to its default, TLVs in any order. */
function smOptions(r: Rng, wide = false): Options {
  const o: Options = { sequence_number: int(r, 2 ** 32) };
  const maybe = (name: string, value: () => unknown): void => {
    if (r() < 0.9) o[name] = value();
  };
  maybe('service_type', () => cstring(r, 6, wide));
  maybe('source_addr', () => cstring(r, 21, wide));
  maybe('destination_addr', () => cstring(r, 21, wide));
  for (const name of SM_INT8) maybe(name, () => int(r, 256));
  maybe('schedule_delivery_time', () => time(r));
  maybe('validity_period', () => time(r));
  maybe('short_message', () => bytes(r, pick(r, [0, 1, 254, 255, int(r, 256)])));
  const names = Object.keys(TLVS).filter(() => r() < 0.3);
  names.sort(() => r() - 0.5);
  for (const name of names) o[name] = TLVS[name]?.(r, wide);
  return o;
}

function respOptions(r: Rng, wide = false): Options {
  const o: Options = { sequence_number: int(r, 2 ** 32), message_id: cstring(r, 65, wide) };
  if (r() < 0.3) o.command_status = 1 + int(r, 0x500);
  return o;
}

const make = (command: string, options: Options): smpp.PDU => new smpp.PDU(command, { ...(options as smpp.PduParams) });

function packageDecode(bytes: Buffer): Pdu | 'throws' {
  try {
    return new smpp.PDU(bytes);
  } catch {
    return 'throws';
  }
}

/**
 * The own fields, with invalid Dates (a time field holding garbage) made comparable:
 * deepStrictEqual never finds two of them equal.
 */
function comparable(pdu: Pdu): Options {
  const fields: Options = {};
  for (const [key, value] of Object.entries(pdu)) {
    fields[key] = value instanceof Date && Number.isNaN(value.getTime()) ? 'Invalid Date' : value;
  }
  return fields;
}

/** decodePdu gives the package's object (prototype, keys in order, values) or null; null only where the package throws. */
function checkDecode(bytes: Buffer): 'ok' | 'null' {
  const expected = packageDecode(bytes);
  const actual = decodePdu(bytes);
  if (actual === null) {
    assert.equal(expected, 'throws', `decodePdu gave up on ${bytes.toString('hex')}`);
    return 'null';
  }
  assert.notEqual(expected, 'throws', `the package throws on ${bytes.toString('hex')}`);
  assert.equal(Object.getPrototypeOf(actual), smpp.PDU.prototype);
  assert.deepEqual(Object.keys(actual), Object.keys(expected));
  assert.deepEqual(comparable(actual), comparable(expected as Pdu));
  return 'ok';
}

/** encodePdu on one pdu gives what toBuffer gives on a twin, and leaves its pdu as it was but for command_length. */
function checkEncode(build: () => Pdu): 'ok' | 'null' | 'null, the package throws' {
  const pdu = build();
  const twin = build() as smpp.PDU;
  let expected: Buffer | 'throws';
  try {
    expected = twin.toBuffer();
  } catch {
    expected = 'throws';
  }
  const before = { ...pdu };
  const actual = encodePdu(pdu);
  if (actual === null) return expected === 'throws' ? 'null, the package throws' : 'null';
  assert.notEqual(expected, 'throws');
  assert.equal(actual.toString('hex'), (expected as Buffer).toString('hex'));
  assert.equal(pdu.command_length, actual.length);
  assert.deepEqual({ ...pdu, command_length: 0 }, { ...before, command_length: 0 });
  return 'ok';
}

/** Both directions and the round trip for one pdu built from options; none of these may fall back. */
function checkBuilt(command: string, options: Options): Buffer {
  assert.equal(
    checkEncode(() => make(command, options)),
    'ok',
  );
  const bytes = make(command, options).toBuffer();
  assert.equal(checkDecode(bytes), 'ok');
  assert.equal(
    checkEncode(() => decodePdu(bytes) as Pdu),
    'ok',
  );
  // What was decoded encodes back to the same bytes, save for times (they decode to Dates) and
  // C-string octets over 0x7f (the package reads them as ASCII, dropping the high bit).
  const again = encodePdu(decodePdu(bytes) as Pdu);
  const decodedTimes = [options.schedule_delivery_time, options.validity_period].some((t) => typeof t === 'string' && t !== '');
  const highBits = Object.values(options).some((v) => typeof v === 'string' && [...v].some((c) => c.charCodeAt(0) > 0x7f));
  if (!decodedTimes && !highBits) assert.equal(again?.toString('hex'), bytes.toString('hex'));
  return bytes;
}

/** The PDU with its body cut to `length` bytes, its command_length saying so. */
function truncated(bytes: Buffer, length: number): Buffer {
  const cut = Buffer.from(bytes.subarray(0, length));
  cut.writeUInt32BE(length, 0);
  return cut;
}

function withTlv(bytes: Buffer, id: number, value: Buffer, declared = value.length): Buffer {
  const tlv = Buffer.alloc(4);
  tlv.writeUInt16BE(id, 0);
  tlv.writeUInt16BE(declared, 2);
  const all = Buffer.concat([bytes, tlv, value]);
  all.writeUInt32BE(all.length, 0);
  return all;
}

function rawPdu(commandId: number, body: Buffer, status = 0, sequence = 1): Buffer {
  const head = Buffer.alloc(16);
  head.writeUInt32BE(16 + body.length, 0);
  head.writeUInt32BE(commandId, 4);
  head.writeUInt32BE(status, 8);
  head.writeUInt32BE(sequence, 12);
  return Buffer.concat([head, body]);
}

const id = (command: string): number => (smpp as unknown as { commands: Record<string, { id: number }> }).commands[command]?.id as number;
const tlvsById = (smpp as unknown as { tlvsById: Record<number, unknown> }).tlvsById;

/** A TLV id the package does not know. */
function unknownTlvId(r: Rng): number {
  for (;;) {
    const candidate = 0x1400 + int(r, 0x2c00);
    if (!tlvsById[candidate]) return candidate;
  }
}

const CASES = 2000;
/** Known TLVs of each value type and filter (int8, int16, int32, cstring, string, buffer, time, multiple), and an unknown one. */
const TLV_IDS = [0x0427, 0x0204, 0x0017, 0x001e, 0x0602, 0x0424, 0x0423, 0x060b, 0x0381, 0x0302, 0x0609, undefined];

describe('fast PDU codec', () => {
  // Relative times decode against the clock; a fixed clock makes both decoders see the same now.
  before(() => mock.timers.enable({ apis: ['Date'], now: Date.UTC(2025, 4, 6, 7, 8, 9, 123) }));
  after(() => mock.timers.reset());

  for (const command of ['submit_sm', 'deliver_sm']) {
    it(`${command}: matches the package both ways over generated PDUs`, () => {
      const r = rng(command === 'submit_sm' ? 1 : 2);
      for (let i = 0; i < CASES; i++) checkBuilt(command, smOptions(r));
    });

    it(`${command}: encodes strings with NULs and non-Latin-1 units as the package does`, () => {
      const r = rng(command === 'submit_sm' ? 3 : 4);
      for (let i = 0; i < CASES; i++) {
        const options = smOptions(r, true);
        assert.equal(
          checkEncode(() => make(command, options)),
          'ok',
        );
        assert.equal(checkDecode(make(command, options).toBuffer()), 'ok');
      }
    });

    it(`${command}: every int8 field takes 0..255`, () => {
      const r = rng(5);
      for (const field of SM_INT8) {
        for (let v = 0; v < 256; v++) checkBuilt(command, { ...smOptions(r), [field]: v });
      }
    });

    it(`${command}: max-length strings, message sizes 0, 1, 254, timed and relative validity`, () => {
      const r = rng(6);
      for (const size of [0, 1, 254]) {
        checkBuilt(command, {
          service_type: 'CMT\xff\x80!',
          source_addr: '1'.repeat(21),
          destination_addr: 'x'.repeat(21),
          schedule_delivery_time: '250506070809148+',
          validity_period: '000001000000000R',
          short_message: bytes(r, size),
          receipted_message_id: 'm'.repeat(65),
          message_state: 2,
          sar_msg_ref_num: 0xffff,
          sar_total_segments: 255,
          sar_segment_seqnum: 1,
        });
      }
    });

    it(`${command}: decodes unknown TLVs, repeated TLVs and truncated bodies as the package does`, () => {
      const r = rng(command === 'submit_sm' ? 7 : 8);
      let nulls = 0;
      let throws = 0;
      for (let i = 0; i < CASES; i++) {
        let bytes = make(command, smOptions(r)).toBuffer();
        if (r() < 0.5) bytes = withTlv(bytes, unknownTlvId(r), bytes.subarray(0, int(r, 40)));
        if (r() < 0.3) bytes = withTlv(bytes, 0x0427, Buffer.from([int(r, 256)])); // message_state again: the last one wins
        assert.equal(checkDecode(bytes), 'ok');
        const cut = truncated(bytes, 16 + int(r, bytes.length - 15));
        if (packageDecode(cut) === 'throws') throws++;
        if (checkDecode(cut) === 'null') nulls++;
        const decoded = decodePdu(cut);
        // Cut params leave the package nothing to encode: null there, the same bytes elsewhere.
        if (decoded)
          assert.notEqual(
            checkEncode(() => decodePdu(cut) as Pdu),
            'null',
          );
      }
      assert.equal(nulls, throws, 'null exactly where the package throws');
    });
  }

  for (const command of ['submit_sm_resp', 'deliver_sm_resp', 'data_sm_resp']) {
    it(`${command}: matches the package both ways, errors write the header only`, () => {
      const r = rng(command.length);
      for (let i = 0; i < CASES; i++) {
        const options = respOptions(r);
        checkBuilt(command, options);
        const answer = (): Pdu => make(command.replace('_resp', ''), options).response({ message_id: options.message_id as string });
        assert.equal(checkEncode(answer), 'ok');
        const wide = respOptions(r, true);
        assert.equal(
          checkEncode(() => make(command, wide)),
          'ok',
        );
        // Some SMSCs send a message_id with an error status; the package reads it.
        const body = Buffer.concat([Buffer.from(cstring(r, 65), 'latin1'), Buffer.from(r() < 0.8 ? [0] : [])]);
        const raw = rawPdu(id(command), body, int(r, 3) === 0 ? 0 : 1 + int(r, 0x500), int(r, 2 ** 32));
        assert.equal(checkDecode(raw), 'ok');
        // Without a message_id (an empty body) the package cannot encode it either.
        assert.notEqual(
          checkEncode(() => decodePdu(raw) as Pdu),
          'null',
        );
      }
    });
  }

  for (const command of ['enquire_link', 'enquire_link_resp', 'generic_nack']) {
    it(`${command}: matches the package both ways`, () => {
      const r = rng(command.length + 100);
      for (let i = 0; i < 200; i++) {
        const options = { sequence_number: int(r, 2 ** 32), command_status: r() < 0.5 ? 0 : int(r, 0x500) };
        checkBuilt(command, options);
      }
      assert.equal(
        checkEncode(() => make('enquire_link', { sequence_number: 9 }).response()),
        'ok',
      );
      // A body where there should be none: the package reads it as TLVs.
      assert.equal(checkDecode(withTlv(rawPdu(id(command), Buffer.alloc(0)), 0x0427, Buffer.from([3]))), 'ok');
    });
  }

  it('decodes random bodies of every command exactly, or leaves them to the package where it throws', () => {
    const r = rng(9);
    const commands = ['submit_sm', 'deliver_sm', 'submit_sm_resp', 'deliver_sm_resp', 'data_sm_resp', 'enquire_link', 'enquire_link_resp', 'generic_nack'];
    let nulls = 0;
    let throws = 0;
    for (let i = 0; i < 20 * CASES; i++) {
      let raw = rawPdu(id(pick(r, commands)), bytes(r, int(r, 60)), pick(r, [0, 0, 8]));
      // TLVs of every value type, declared lengths true or not, and a cut anywhere.
      for (let n = int(r, 4); n > 0; n--) raw = withTlv(raw, pick(r, TLV_IDS) ?? unknownTlvId(r), bytes(r, int(r, 6)), int(r, 6));
      if (r() < 0.5) raw = truncated(raw, 16 + int(r, raw.length - 15));
      if (packageDecode(raw) === 'throws') throws++;
      if (checkDecode(raw) === 'null') nulls++;
    }
    assert.ok(throws > 0, 'some random bodies make the package throw');
    assert.equal(nulls, throws);
  });

  it('applies the package filters of other TLVs, single and multiple', () => {
    const base = make('deliver_sm', { source_addr: '1234', short_message: Buffer.from('hi') }).toBuffer();
    // callback_num (multiple, filtered) twice, billing_identification, callback_num_pres_ind (multiple), broadcast_end_time (time filter).
    let bytes = withTlv(base, 0x0381, Buffer.from([1, 1, 1, 0x34, 0x35]));
    bytes = withTlv(bytes, 0x0381, Buffer.from([0, 2, 9, 0x36]));
    bytes = withTlv(bytes, 0x060b, Buffer.from([7, 1, 2]));
    bytes = withTlv(bytes, 0x0302, Buffer.from([1]));
    bytes = withTlv(bytes, 0x0302, Buffer.from([2]));
    bytes = withTlv(bytes, 0x0609, Buffer.from('250101000000000+'));
    assert.equal(checkDecode(bytes), 'ok');
    assert.deepEqual((decodePdu(bytes) as Pdu).callback_num, [
      { digit_mode: 1, ton: 1, npi: 1, number: '45' },
      { digit_mode: 0, ton: 2, npi: 9, number: '6' },
    ]);
    // Decoded filter values are objects: encoding them is left to the package.
    assert.equal(encodePdu(decodePdu(bytes) as Pdu), null);
  });

  it('reads C-strings and messages past their end as the package does', () => {
    const submitResp = id('submit_sm_resp');
    // No NUL: the string runs to the end of the PDU.
    assert.equal(checkDecode(rawPdu(submitResp, Buffer.from('abc'))), 'ok');
    assert.equal((decodePdu(rawPdu(submitResp, Buffer.from('abc'))) as Pdu).message_id, 'abc');
    // A cstring TLV read runs past its declared length, to the next NUL.
    const sm = make('deliver_sm', {}).toBuffer();
    assert.equal(checkDecode(withTlv(withTlv(sm, 0x001e, Buffer.from('ab')), 0x0427, Buffer.from('c\0'))), 'ok');
    // sm_length longer than what remains.
    const deliver = make('deliver_sm', { short_message: Buffer.from('hello') }).toBuffer();
    deliver[deliver.length - 6] = 200;
    assert.equal(checkDecode(deliver), 'ok');
    // An integer TLV whose declared length is short reads the octets after it.
    assert.equal(checkDecode(withTlv(withTlv(sm, 0x0204, Buffer.alloc(0)), 0x0427, Buffer.from([5]))), 'ok');
  });

  describe('falls back (null) rather than answer wrong', () => {
    it('for other commands, lengths that disagree, and too-long PDUs', () => {
      const bind = make('bind_transmitter_resp', { system_id: 'x' }).toBuffer();
      assert.equal(decodePdu(bind), null);
      assert.equal(encodePdu(make('bind_transmitter', { system_id: 'x' })), null);
      const link = make('enquire_link', { sequence_number: 3 }).toBuffer();
      assert.equal(decodePdu(Buffer.concat([link, Buffer.alloc(1)])), null, 'command_length below the buffer');
      assert.equal(decodePdu(link.subarray(0, 12)), null, 'shorter than a header');
      const long = rawPdu(id('submit_sm_resp'), Buffer.alloc(smpp.PDU.maxLength));
      assert.equal(decodePdu(long), null);
      assert.equal(packageDecode(long), 'throws');
    });

    it('where the package throws while decoding', () => {
      const sm = make('deliver_sm', {}).toBuffer();
      const intAtEnd = withTlv(sm, 0x0427, Buffer.alloc(0)); // int8 read past the end
      assert.equal(packageDecode(intAtEnd), 'throws');
      assert.equal(decodePdu(intAtEnd), null);
      const emptyBilling = withTlv(sm, 0x060b, Buffer.alloc(0)); // its filter reads an octet that is not there
      assert.equal(packageDecode(emptyBilling), 'throws');
      assert.equal(decodePdu(emptyBilling), null);
    });

    it('for values only the package encode filters or checks handle', () => {
      const cases: Record<string, () => Pdu> = {
        'text message': () => make('submit_sm', { short_message: 'hello' }),
        'message with UDH': () => make('submit_sm', { short_message: { udh: Buffer.from([5, 0, 3, 1, 2, 1]), message: 'hi' } as never }),
        'text payload': () => make('submit_sm', { message_payload: 'hello' }),
        'message of 256 octets': () => make('submit_sm', { short_message: Buffer.alloc(256) }),
        'int8 out of range': () => make('submit_sm', { esm_class: 300 }),
        'int8 undefined': () => make('submit_sm', { esm_class: undefined }),
        'param missing': () => {
          const pdu = make('submit_sm', {});
          delete pdu.source_addr;
          return pdu;
        },
        'sequence number out of range': () => make('enquire_link', { sequence_number: 2 ** 32 }),
        'TLV over 65535 octets': () => make('submit_sm', { message_payload: Buffer.alloc(0x10000) }),
        'TLV as an object': () => make('submit_sm', { callback_num: [{ digit_mode: 0, ton: 1, npi: 1, number: '1' }] as never }),
      };
      for (const [name, build] of Object.entries(cases)) {
        const pdu = build();
        const before = { ...pdu };
        assert.equal(encodePdu(pdu), null, name);
        assert.deepEqual({ ...pdu }, before, `${name}: left as it was`);
      }
      // The text message is one the package can encode: the fallback is not a failure.
      const text = (make('submit_sm', { short_message: 'hello' }) as smpp.PDU).toBuffer();
      assert.equal(text.subarray(-6).toString('latin1'), '\x05hello');
    });
  });
});
