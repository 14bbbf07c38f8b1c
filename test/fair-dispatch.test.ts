import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers.ts';
import { HoldingCarrier, holdingCustomer } from './dispatch-helpers.ts';

/**
 * One account's backlog does not hold back another's messages
 * (docs/architecture.md "One account's backlog"), through the running
 * dispatcher: a carrier with a window of 10 that answers when told to, a
 * bulk send of 90 queued behind it, then another account's single message.
 */
test("another account's message leaves in the next window, not behind a bulk send's backlog", async () => {
  const carrier = new HoldingCarrier(10);
  const gw = await startGateway({ DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrier] });
  try {
    const bulk = await holdingCustomer(gw, 'Campaign');
    const codes = await holdingCustomer(gw, 'One-time codes');
    const campaign = Array.from({ length: 90 }, (_, i) => 5511970000000 + i);
    const sent = await gw.call(bulk.key, 'POST', '/messages/sms/send', { receivers: campaign, message: 'sale', route: bulk.route });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await gw.eventually(
      async () => carrier.held().length,
      (n) => n === 10,
      'the carrier window full of the campaign',
    );
    const code = '5511988887777';
    const one = await gw.call(codes.key, 'POST', '/messages/sms/send', { receivers: [Number(code)], message: 'your code is 1234', route: codes.route });
    assert.equal(one.status, 200, JSON.stringify(one.body));

    // The carrier answers what it holds, window after window, until the code is submitted.
    while (!carrier.submitted.includes(code)) {
      const before = carrier.submitted.length;
      for (const id of carrier.held()) carrier.answer(id);
      await gw.eventually(
        async () => carrier.submitted.length,
        (n) => n > before,
        'the next window submitted',
      );
    }
    const position = carrier.submitted.indexOf(code) + 1;
    assert.ok(position <= 20, `the code was submitted ${position}th: after at most the window that held the carrier and one more, not after the campaign's 90`);
    // And the campaign still goes out whole, in order.
    while (carrier.submitted.length < 91) {
      const before = carrier.submitted.length;
      for (const id of carrier.held()) carrier.answer(id);
      await gw.eventually(
        async () => carrier.submitted.length,
        (n) => n > before || n === 91,
        'the rest of the campaign',
      );
    }
    assert.deepEqual(
      carrier.submitted.filter((r) => r !== code),
      campaign.map(String),
    );
  } finally {
    for (const id of carrier.held()) carrier.answer(id);
    await gw.close();
  }
});
