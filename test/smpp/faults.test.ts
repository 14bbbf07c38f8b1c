import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { canonicalId } from '../../src/carriers/smpp/receipt.ts';
import { failureOf, harness, idsOf, sms, waitFor, type Harness } from './helpers.ts';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** Texts the simulator accepted for a receiver, in arrival order. */
function acceptedTexts(harness: Harness, receiver: string): string[] {
  return harness.sim
    .messages()
    .filter((m) => m.receiver === receiver)
    .map((m) => m.text);
}

describe('SmppCarrier under SMSC trouble', () => {
  it('rides out a throttling storm: all accepted, in order per receiver', async () => {
    h = await harness({}, { windowSize: 10 });
    h.sim.setMode({ throttleNext: 25, queueFullNext: 10 });
    const receivers = ['+491710000010', '+491710000020', '+491710000030', '+491710000040'];
    const long = (n: number): string => `long ${n} ${'y'.repeat(200)}`;
    const messages = receivers.flatMap((r, ri) => Array.from({ length: 10 }, (_, i) => sms(`${ri}-${i}`, r, i === 5 ? long(i) : `msg ${i}`)));
    const results = await h.send(messages);
    assert.equal(results.size, messages.length);
    for (const m of messages) assert.equal(results.get(m.id)?.ok, true, m.id);
    assert.equal(h.sim.stats.throttled, 35);
    for (const r of receivers) {
      const expected = Array.from({ length: 10 }, (_, i) => (i === 5 ? long(i) : `msg ${i}`));
      assert.deepEqual(acceptedTexts(h, r.slice(1)), expected, r);
    }
  });

  it('keeps order through a timed throttle period too', async () => {
    h = await harness({}, { windowSize: 5 });
    h.sim.setMode({ throttleForMs: 150 });
    const messages = Array.from({ length: 12 }, (_, i) => sms(`t${i}`, '+491710000050', `timed ${i}`));
    const results = await h.send(messages);
    for (const m of messages) assert.equal(results.get(m.id)?.ok, true, m.id);
    assert.deepEqual(
      acceptedTexts(h, '491710000050'),
      messages.map((m) => m.content),
    );
  });

  it('hands a message back with retry when throttling never ends', async () => {
    h = await harness({}, { maxThrottleRetries: 2 });
    h.sim.setMode({ throttleNext: 1000 });
    const results = await h.send([sms('stuck', '+491710000060', 'x')]);
    const failure = failureOf(results.get('stuck'));
    assert.equal(failure.retry, true);
    assert.match(failure.error, /ESME_RTHROTTLED \(0x58\)/);
  });

  it("hands back the receiver's later messages with a message throttled too often", async () => {
    h = await harness({}, { maxThrottleRetries: 1 });
    h.sim.setMode({ throttleNext: 3 }); // h1 and other, then h1 again
    const messages = [sms('h1', '+491710000061', 'first'), sms('h2', '+491710000061', 'second'), sms('other', '+491710000062', 'other')];
    const results = await h.send(messages);
    assert.match(failureOf(results.get('h1')).error, /ESME_RTHROTTLED \(0x58\) after 2 tries/);
    const behind = failureOf(results.get('h2'));
    assert.equal(behind.retry, true);
    assert.match(behind.error, /behind a message handed back/);
    assert.equal(results.get('other')?.ok, true, 'other receivers go on');
    assert.deepEqual(acceptedTexts(h, '491710000061'), [], 'the later message did not overtake the first');
  });

  it('answers in-flight submits with retry when the connection drops, reconnects, loses nothing', async () => {
    h = await harness({}, { windowSize: 3 });
    h.sim.setMode({ dropAfterSubmits: 8 });
    const messages = Array.from({ length: 20 }, (_, i) => sms(`d${i}`, `+4917200${String(i).padStart(2, '0')}100`, `drop ${i}`));
    const results = await h.send(messages);
    assert.deepEqual(h.duplicates, []);
    assert.equal(results.size, messages.length, 'every message has a result');
    const accepted = new Set(h.sim.stats.submits.map((s) => canonicalId(s.messageId, 'hex')));
    const retry: string[] = [];
    for (const m of messages) {
      const r = results.get(m.id);
      if (r?.ok) {
        for (const id of r.carrierIds) assert.ok(accepted.has(id), `ok result ${m.id} was accepted`);
      } else {
        assert.equal(r?.retry, true, `${m.id} failed for good: ${JSON.stringify(r)}`);
        retry.push(m.id);
      }
    }
    assert.ok(retry.length >= 1 && retry.length <= 15, `retry count ${retry.length}`);
    await waitFor(() => h?.sim.stats.binds === 2 && h.carrier.ready(), 'reconnect');
    const again = await h.send(messages.filter((m) => retry.includes(m.id)));
    for (const id of retry) assert.equal(again.get(id)?.ok, true, id);
    const delivered = new Set(h.sim.messages().map((m) => m.text));
    for (const m of messages) assert.ok(delivered.has(m.content), `${m.id} reached the SMSC`);
  });

  it('emits a receipt that arrives before its submit_sm_resp', async () => {
    h = await harness();
    h.sim.setMode({ receiptBeforeResp: true });
    const results = await h.send([sms('early', '+491710000070', 'quick')]);
    await waitFor(() => h?.receipts.length === 1, 'receipt');
    const [id] = idsOf(results.get('early'));
    assert.equal(h.receipts[0]?.carrierId, id);
    assert.equal(h.receipts[0]?.status, 'DELIVERED');
    assert.match(h.timeline[0] ?? '', /^receipt /, 'receipt came first');
  });

  it('detects a dead peer by enquire_link and reconnects', async () => {
    h = await harness({}, { enquireLinkMs: 30, responseTimeoutMs: 200 });
    h.sim.setMode({ ignoreEnquireLink: true });
    await waitFor(() => (h?.sim.stats.connections ?? 0) >= 2, 'reconnect after dead peer');
    h.sim.setMode({ ignoreEnquireLink: false });
    await waitFor(() => h?.carrier.ready() === true, 'ready again');
    const results = await h.send([sms('alive', '+491710000080', 'x')]);
    assert.equal(results.get('alive')?.ok, true);
  });

  it('treats an unanswered submit as retry and rebinds', async () => {
    h = await harness({}, { responseTimeoutMs: 200 });
    h.sim.setMode({ ignoreSubmits: true });
    const results = await h.send([sms('lost-1', '+491710000090', 'x'), sms('lost-2', '+491710000091', 'y')]);
    for (const id of ['lost-1', 'lost-2']) {
      const failure = failureOf(results.get(id));
      assert.equal(failure.retry, true, id);
      assert.match(failure.error, /unanswered/);
    }
    h.sim.setMode({ ignoreSubmits: false });
    await waitFor(() => (h?.sim.stats.binds ?? 0) >= 2 && h?.carrier.ready() === true, 'rebind');
    assert.equal((await h.send([sms('ok', '+491710000092', 'z')])).get('ok')?.ok, true);
  });

  it('sends everything under a submit rate limit', async () => {
    h = await harness({}, { maxSubmitsPerSecond: 50 });
    const messages = Array.from({ length: 70 }, (_, i) => sms(`rate${i}`, `+4917400${String(i).padStart(2, '0')}100`, `r ${i}`));
    const results = await h.send(messages);
    for (const m of messages) assert.equal(results.get(m.id)?.ok, true, m.id);
  });

  it('applies back-pressure: capacity shrinks while the window and the queue are full', async () => {
    h = await harness({}, { windowSize: 2, queueSize: 3 });
    h.sim.setMode({ responseDelayMs: 50 });
    const messages = Array.from({ length: 5 }, (_, i) => sms(`w${i}`, `+491730${i}0100`, `w ${i}`));
    const pending = h.send(messages);
    assert.equal(h.carrier.capacity(), 0, '2 in the window, 3 queued');
    const results = await pending;
    for (const m of messages) assert.equal(results.get(m.id)?.ok, true);
    assert.equal(h.carrier.capacity(), 5);
  });

  it('holds no more than a second of submits under a rate limit', async () => {
    h = await harness({}, { windowSize: 100, maxSubmitsPerSecond: 5 });
    assert.equal(h.carrier.capacity(), 5);
    const messages = Array.from({ length: 10 }, (_, i) => sms(`q${i}`, `+491731${i}0100`, `q ${i}`));
    const pending = h.send(messages);
    assert.equal(h.carrier.capacity(), 0, 'a second of burst sent, a second of submits queued');
    const results = await pending;
    for (const m of messages) assert.equal(results.get(m.id)?.ok, true);
    assert.equal(h.carrier.capacity(), 5);
  });
});
