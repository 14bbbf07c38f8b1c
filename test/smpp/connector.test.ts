import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, describe, it } from 'node:test';
import { canonicalId } from '../../src/carriers/smpp/receipt.ts';
import { harness, idsOf, sms, waitFor, type Harness } from './helpers.ts';

const hex = (b: Buffer | undefined): string => b?.toString('hex') ?? '';
const ucs2 = (s: string): string => Buffer.from(s, 'utf16le').swap16().toString('hex');

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe('SmppCarrier against the simulator', () => {
  it('binds and reports ready with free window and queue', async () => {
    h = await harness({}, { windowSize: 7 });
    assert.equal(h.carrier.ready(), true);
    assert.equal(h.carrier.capacity(), 7 + 14, 'the window and a queue of twice the window');
    assert.deepEqual(h.carrier.channels, ['SMS']);
    assert.equal(h.sim.stats.binds, 1);
  });

  it('sends a GSM message byte-exact with addresses and data_coding 0', async () => {
    h = await harness();
    const results = await h.send([sms('m1', '+491701234000', 'Hi {all} 5€ @home')]);
    const ids = idsOf(results.get('m1'));
    const [rec] = h.sim.stats.submits;
    assert.equal(rec?.receiver, '491701234000');
    assert.equal(rec?.sender, 'ACME');
    assert.equal(rec?.dataCoding, 0);
    assert.equal(rec?.esmClass, 0);
    assert.equal(rec?.registeredDelivery, 1);
    assert.equal(hex(rec?.bytes), '4869201b28616c6c1b2920351b6520' + '00686f6d65');
    assert.deepEqual(ids, [canonicalId(rec?.messageId ?? '', 'hex')]);
  });

  it('sends a long UCS-2 message as concatenated parts, byte-exact', async () => {
    h = await harness();
    const text = `${'Привет, мир! '.repeat(10)}абв😀 конец`; // 141 units, the emoji at units 133-134 spans the 2nd part's end
    const results = await h.send([sms('long-1', '+491701234000', text, '+4930123')]);
    const ids = idsOf(results.get('long-1'));
    const recs = h.sim.stats.submits;
    assert.equal(recs.length, 3);
    assert.deepEqual(
      ids,
      recs.map((r) => canonicalId(r.messageId, 'hex')),
    );
    const ref = recs[0]?.bytes[3] ?? -1;
    const units = [...text];
    const bodies = [units.slice(0, 67).join(''), units.slice(67, 133).join(''), units.slice(133).join('')];
    assert.equal(bodies[1]?.length, 67 - 1, 'second part ends before the surrogate pair');
    recs.forEach((rec, i) => {
      assert.equal(rec.dataCoding, 8);
      assert.equal(rec.esmClass, 0x40);
      assert.equal(rec.sender, '4930123');
      assert.equal(hex(rec.bytes), `050003${ref.toString(16).padStart(2, '0')}030${i + 1}${ucs2(bodies[i] ?? '')}`);
    });
    const [message] = h.sim.messages();
    assert.equal(message?.text, text);
    assert.equal(message?.complete, true);
  });

  it('emits receipts of every kind with the right status and ids', async () => {
    const t = await harness();
    h = t;
    const cases = {
      '0000': ['DELIVERED', 'stat:DELIVRD err:000'],
      '0001': ['UNDELIVERED', 'stat:UNDELIV err:001'],
      '0002': ['EXPIRED', 'stat:EXPIRED err:000'],
      '0004': ['FAILED', 'stat:REJECTD err:002'],
      '0005': ['FAILED', 'stat:DELETED err:000'],
      '0006': ['SENT', 'stat:UNKNOWN err:000'],
      '0007': ['SENT', 'stat:ACCEPTD err:000'],
      '0008': ['SENT', 'stat:ENROUTE err:000'],
    };
    const messages = Object.keys(cases).map((suffix) => sms(`r${suffix}`, `+4917012${suffix}`, `to ${suffix}`));
    const results = await t.send([...messages, sms('refused', '+491701230003', 'no')]);
    assert.deepEqual(results.get('refused'), { ok: false, retry: false, error: 'ESME_RSUBMITFAIL (0x45)' });
    await waitFor(() => t.receipts.length === messages.length, 'all receipts');
    for (const [suffix, [status, details]] of Object.entries(cases)) {
      const [id] = idsOf(results.get(`r${suffix}`));
      const receipt = t.receipts.find((r) => r.carrierId === id);
      assert.equal(receipt?.status, status, suffix);
      assert.equal(receipt?.details, details, suffix);
      assert.ok(receipt?.at instanceof Date);
    }
  });

  for (const variant of [
    { name: 'text only, decimal text ids', sim: { receiptTlvs: false, receiptIdBase: 'decimal' as const }, carrier: { receiptIdBase: 'decimal' as const } },
    { name: 'TLVs only', sim: { receiptText: false }, carrier: {} },
    { name: 'decimal ids throughout', sim: { idBase: 'decimal' as const, receiptTlvs: false }, carrier: { idBase: 'decimal' as const } },
  ]) {
    it(`matches receipt ids to submit ids (${variant.name})`, async () => {
      h = await harness(variant.sim, variant.carrier);
      const results = await h.send([sms('a', '+491700000000', 'a'), sms('b', '+491700000001', 'b')]);
      await waitFor(() => h?.receipts.length === 2, 'receipts');
      const byId = new Map(h.receipts.map((r) => [r.carrierId, r.status]));
      assert.equal(byId.get(idsOf(results.get('a'))[0] ?? ''), 'DELIVERED');
      assert.equal(byId.get(idsOf(results.get('b'))[0] ?? ''), 'UNDELIVERED');
    });
  }

  it('turns MO messages, single and multi-part, into inbound texts', async () => {
    h = await harness();
    const long = `Grüße ${'x'.repeat(150)} {€} ende`;
    const wide = `${'日本語のテキスト'.repeat(12)}😀`;
    await h.sim.injectMo({ from: '+491701111111', to: '4930123', text: 'Hello there' });
    await h.sim.injectMo({ from: '+491702222222', to: '4930123', text: 'Привет' });
    await h.sim.injectMo({ from: '+491703333333', to: '4930123', text: long });
    await h.sim.injectMo({ from: '+491704444444', to: '4930123', text: wide, ref16: true, reverse: true });
    await h.sim.injectMo({ from: '+491705555555', to: '4930123', text: '😀😀😀😀', parts: 3 }); // splits the pairs
    await waitFor(() => h?.inbound.length === 5, 'inbound');
    const texts = new Map(h.inbound.map((m) => [m.from, m.text]));
    assert.equal(texts.get('+491701111111'), 'Hello there');
    assert.equal(texts.get('+491702222222'), 'Привет');
    assert.equal(texts.get('+491703333333'), long);
    assert.equal(texts.get('+491704444444'), wide);
    assert.equal(texts.get('+491705555555'), '😀😀😀😀');
    assert.equal(h.inbound[0]?.to, '4930123');
    assert.equal(h.sim.pendingDeliveries(), 0, 'every deliver_sm was acknowledged');
  });

  it('answers the SMSC enquire_link, and rebinds after the SMSC unbinds', async () => {
    h = await harness();
    assert.deepEqual(await h.sim.requestAll('enquire_link'), [0]);
    assert.deepEqual(await h.sim.requestAll('unbind'), [0]);
    await waitFor(() => h?.sim.stats.binds === 2 && h.carrier.ready(), 'rebind');
  });

  it('unbinds on stop and does not come back', async () => {
    h = await harness({}, { reconnectMinMs: 10, reconnectMaxMs: 10 });
    await h.carrier.stop();
    assert.equal(h.sim.stats.unbinds, 1);
    assert.equal(h.carrier.ready(), false);
    assert.equal(h.carrier.capacity(), 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(h.sim.stats.binds, 1);
    const results = await h.send([sms('late', '+491700000000', 'x')]);
    assert.equal(results.get('late')?.ok, false);
  });

  it('stopped with a deadline, takes the answers that come before it and hands back the rest, closed by then', async () => {
    h = await harness({}, { reconnectMinMs: 10, reconnectMaxMs: 10 });
    const harnessed = h;
    harnessed.sim.setMode({ responseDelayMs: 200 });
    const sent = harnessed.send([sms('soon', '+491700000001', 'x')]);
    await waitFor(() => harnessed.sim.stats.submits.length === 1, 'the submit at the SMSC');
    await harnessed.carrier.stop({ withinMs: 2_000 });
    const answer = (await sent).get('soon');
    assert.equal(answer?.ok, true, `answered before the close: ${JSON.stringify(answer)}`);
    assert.equal(harnessed.sim.stats.unbinds, 1, 'unbound once the answer came');

    // An answer later than the deadline: the connection is closed by then and the message handed back for a retry.
    await harnessed.close();
    h = await harness({}, { reconnectMinMs: 10, reconnectMaxMs: 10 });
    const slow = h;
    slow.sim.setMode({ responseDelayMs: 5_000 });
    const late = slow.send([sms('late', '+491700000002', 'y')]);
    await waitFor(() => slow.sim.stats.submits.length === 1, 'the submit at the SMSC');
    await slow.carrier.stop({ withinMs: 100 });
    const handedBack = (await late).get('late');
    assert.ok(handedBack && !handedBack.ok && handedBack.retry, `handed back for a retry: ${JSON.stringify(handedBack)}`);
    assert.deepEqual(slow.duplicates, []);
  });

  it('works with separate transmitter and receiver binds', async () => {
    h = await harness({}, { bindMode: 'transmitter_receiver' });
    await waitFor(() => h?.sim.stats.binds === 2, 'both binds');
    const results = await h.send([sms('t1', '+491700000001', 'split binds')]);
    await h.sim.injectMo({ from: '+491709999999', to: 'ACME', text: 'reply' });
    await waitFor(() => h?.receipts.length === 1 && h.inbound.length === 1, 'receipt and MO');
    assert.equal(h.receipts[0]?.carrierId, idsOf(results.get('t1'))[0]);
    assert.equal(h.inbound[0]?.text, 'reply');
  });

  it('connects over TLS', async () => {
    // Self-signed test-only certificate for 127.0.0.1, valid until 2126.
    const cert = readFileSync(new URL('./fixtures/smsc-test.crt', import.meta.url));
    const key = readFileSync(new URL('./fixtures/smsc-test.key', import.meta.url));
    h = await harness({ tls: { key, cert } }, { tls: true, tlsOptions: { ca: cert } });
    assert.equal(h.carrier.ready(), true);
    const results = await h.send([sms('tls', '+491700000000', 'over TLS')]);
    assert.equal(results.get('tls')?.ok, true);
  });

  it('refuses RCS and does not bind with a wrong password', async () => {
    h = await harness({}, { password: 'wrong' });
    assert.equal(h.carrier.ready(), false);
    await waitFor(() => (h?.sim.stats.bindFailures ?? 0) >= 2, 'bind retried');
    const results = await h.send([sms('x', '+491700000000', 'x'), { ...sms('r', '+491700000000', 'x'), channel: 'RCS' }]);
    assert.deepEqual(results.get('x'), { ok: false, retry: true, error: 'SMPP bind not up' });
    assert.equal(results.get('r')?.ok, false);
  });
});
