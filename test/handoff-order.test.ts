import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptJob } from '../src/messaging/accept.ts';
import { oneSms, startGateway } from './helpers.ts';
import { HoldingCarrier, holdingCustomer, recordClaims } from './dispatch-helpers.ts';

/**
 * The race a handoff must not lose (Dispatcher.reserve/adopt, InFlight): an
 * accept reads the outbox before the receiver's earlier message, in the
 * carrier, is handed back for a retry, so it writes the later message
 * claimed; the earlier one's QUEUED row is written and a claim runs before
 * the accept's messages are adopted. The later message must still wait for
 * the earlier one, not go out ahead of it. On PostgreSQL, where an accept
 * and a carrier answer are written side by side, this happened; here it is
 * played step by step, on every database.
 */
test("a message handed off by an accept waits for its receiver's earlier message handed back meanwhile", async () => {
  const carrier = new HoldingCarrier();
  const gw = await startGateway({ DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrier] });
  try {
    const claims = recordClaims(gw);
    const { accountId, key, route: routeId } = await holdingCustomer(gw, 'Order');
    const receiver = '5511999990001';

    assert.equal((await gw.call(key, 'POST', '/messages/sms/send', { receivers: [Number(receiver)], message: 'first', route: routeId })).status, 200);
    const [first = ''] = await gw.eventually(
      async () => carrier.held(),
      (ids) => ids.length === 1,
      'the first message at the carrier',
    );

    // An accept of the receiver's second message, offered a handoff and written while the first is still at the carrier.
    const handoff = gw.core.dispatcher.reserve('holding', 1);
    assert.ok(handoff, 'the dispatcher offers a handoff');
    const route = await gw.core.db.kysely.selectFrom('routes').selectAll().where('id', '=', routeId).executeTakeFirstOrThrow();
    const [accepted] = await gw.core.db.run(acceptJob, [{ ...oneSms(accountId, route, receiver, 'second'), handoff }]);
    assert.ok(accepted && !('refused' in accepted));
    const [[, second = ''] = []] = accepted.handedOff;
    assert.ok(second, 'the second message was written claimed, to be sent straight away');

    // The carrier hands the first back; its QUEUED row is written, and a claim starts after that.
    carrier.answer(first, { ok: false, retry: true, error: 'throttled' });
    await gw.eventually(
      async () => (await gw.core.db.kysely.selectFrom('messages').select('status').where('id', '=', first).executeTakeFirstOrThrow()).status,
      (status) => status === 'QUEUED',
      'the first message queued for a retry',
    );
    const written = claims.length;
    await gw.eventually(
      async () => claims.length,
      (n) => n >= written + 2,
      'claims after the first message was written back',
    );

    // Now the accept's message is adopted: it goes out only after the first one.
    gw.core.dispatcher.adopt(handoff, [
      { id: second, receiver, content: 'second', channel: 'SMS', payload: null, attempts: 1, schedule_at: accepted.scheduleAt },
    ]);
    // The carrier accepts whatever it is given, until both are SENT.
    await gw.eventually(
      async () => {
        for (const id of carrier.held()) carrier.answer(id);
        return gw.core.db.kysely.selectFrom('messages').select('status').where('id', 'in', [first, second]).execute();
      },
      (rows) => rows.length === 2 && rows.every((r) => r.status === 'SENT'),
      'both messages sent',
    );
    assert.deepEqual(carrier.submittedIds, [first, first, second], 'the first message, again, and only then the second');
  } finally {
    for (const id of carrier.held()) carrier.answer(id);
    await gw.close();
  }
});
