import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimJob, type ClaimRequest } from '../src/dispatch/claim.ts';
import { freshDatabase, startGateway, type TestGateway } from './helpers.ts';
import { HoldingCarrier, holdingCustomer, recordClaims } from './dispatch-helpers.ts';

test("a message the carrier keeps past its lease (not renewed) is not sent again, and holds back its receiver's next message", async () => {
  const carrier = new HoldingCarrier();
  const gw = await startGateway({ DISPATCH_LEASE_MS: '1000', DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrier] });
  try {
    const claims = recordClaims(gw, { refuseRenewals: true });
    const { key, route } = await holdingCustomer(gw, 'Lease');
    const send = (message: string) => gw.call(key, 'POST', '/messages/sms/send', { receivers: [5511999990001], message, route });

    assert.equal((await send('first')).status, 200);
    const [first] = await gw.eventually(
      async () => carrier.held(),
      (ids) => ids.length === 1,
      'the first message at the carrier',
    );
    const leaseEnd = Date.now() + 1000; // no earlier than the real end: it was claimed before now
    // Claims made after its lease ran out: it is due again, but still with the carrier.
    await gw.eventually(
      async () => claims.filter((c) => c.now > leaseEnd).length,
      (n) => n >= 3,
      'claims after the lease ran out',
    );
    assert.deepEqual(carrier.submitted, ['5511999990001'], 'sent once');

    // The receiver's next message waits for the one the carrier still holds.
    assert.equal((await send('second')).status, 200);
    const before = claims.length;
    await gw.eventually(
      async () => claims.length,
      (n) => n >= before + 3,
      'claims after the second send',
    );
    assert.equal(carrier.submitted.length, 1, 'the second message waits behind the first');

    carrier.answer(first ?? '');
    await gw.eventually(
      async () => carrier.submitted.length,
      (n) => n === 2,
      'the second message sent once the first is answered',
    );
    const sent = await gw.eventually(
      async () => (await gw.call(key, 'GET', '/reports/messages/sent')).body.object as { status: string }[],
      (rows) => rows.some((r) => r.status === 'SENT'),
      'the first message SENT',
    );
    assert.equal(sent.length, 2);
  } finally {
    // The dispatcher stops once the carrier has answered what it holds.
    for (const id of carrier.held()) carrier.answer(id);
    await gw.close();
  }
});

test('a message a carrier keeps for several leases is not taken by another dispatcher on the same database', async () => {
  const db = await freshDatabase();
  const keeping = new HoldingCarrier();
  const other = new HoldingCarrier();
  const env = { DISPATCH_LEASE_MS: '1000', DISPATCH_POLL_MS: '10' };
  const a = await startGateway(env, { extraCarriers: [keeping] }, db);
  const b = await startGateway(env, { extraCarriers: [other] }, db);
  try {
    const claims = recordClaims(b);
    const { key, route } = await holdingCustomer(a, 'Renew');
    assert.equal((await a.call(key, 'POST', '/messages/sms/send', { receivers: [5511999990002], message: 'kept', route })).status, 200);
    // Whichever dispatcher claimed it keeps it; the other polls on.
    const [kept] = await a.eventually(
      async () => [...keeping.held(), ...other.held()],
      (ids) => ids.length === 1,
      'the message at a carrier',
    );
    const [holder, waiter, waiterClaims] = keeping.held().length === 1 ? [keeping, other, claims] : [other, keeping, recordClaims(a)];
    const threeLeases = Date.now() + 3000;
    await a.eventually(
      async () => waiterClaims.filter((c) => c.now > threeLeases).length,
      (n) => n >= 3,
      'claims three leases later',
    );
    assert.deepEqual(waiter.submitted, [], 'the other dispatcher did not take it');
    assert.deepEqual(holder.submitted, ['5511999990002'], 'sent once');

    holder.answer(kept ?? '');
    await a.eventually(
      async () => (await a.call(key, 'GET', '/reports/messages/sent')).body.object as { status: string }[],
      (rows) => rows.length === 1 && rows[0]?.status === 'SENT',
      'the message SENT',
    );
    assert.deepEqual(waiter.submitted, []);
  } finally {
    for (const c of [keeping, other]) for (const id of c.held()) c.answer(id);
    await b.close();
    await a.close();
    await db.drop();
  }
});

test("a message another dispatcher holds leased holds back its receiver's later messages in this one's claims", async () => {
  const db = await freshDatabase();
  // A can carry one message at a time; B's connection is down at first, so that A takes the first message.
  const carrierA = new HoldingCarrier(1);
  const carrierB = new HoldingCarrier();
  carrierB.up = false;
  const a = await startGateway({ DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrierA] }, db);
  const b = await startGateway({ DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrierB] }, db);
  try {
    const { key, route } = await holdingCustomer(a, 'Two');
    const send = (gw: TestGateway, message: string) => gw.call(key, 'POST', '/messages/sms/send', { receivers: [5511999990007], message, route });

    assert.equal((await send(a, 'first')).status, 200);
    const [first] = await a.eventually(
      async () => carrierA.held(),
      (ids) => ids.length === 1,
      "the first message at A's carrier",
    );
    carrierB.up = true;
    const claims = recordClaims(b);
    assert.equal((await send(b, 'second')).status, 200);
    await b.eventually(
      async () => claims.length,
      (n) => n >= 5,
      'claims by B after the second send',
    );
    assert.deepEqual(carrierB.submitted, [], 'B sent the second message while A still held the first');
    assert.deepEqual(carrierA.submitted, ['5511999990007']);

    carrierA.answer(first ?? '');
    await b.eventually(
      async () => carrierA.submitted.length + carrierB.submitted.length,
      (n) => n === 2,
      'the second message sent once the first is answered',
    );
  } finally {
    // Nothing left unanswered, or closing would wait for it.
    for (const carrier of [carrierA, carrierB]) for (const id of carrier.held()) carrier.answer(id);
    await b.close();
    await a.close();
    await db.drop();
  }
});

test('a connection let go by its watchdog (renewals late: the event loop stalled) and taken again runs one dispatch loop, not two', async () => {
  const carrier = new HoldingCarrier();
  const gw = await startGateway({ CONNECTION_LEASE_MS: '1000', DISPATCH_POLL_MS: '10' }, { extraCarriers: [carrier] });
  try {
    // Claims on the connection running at once: one loop never has two.
    let running = 0;
    let most = 0;
    let claims = 0;
    const run = gw.core.db.run.bind(gw.core.db);
    gw.core.db.run = ((job, items) => {
      if ((job as unknown) !== claimJob || (items as ClaimRequest[])[0]?.connector !== 'holding') return run(job, items);
      running++;
      claims++;
      most = Math.max(most, running);
      return run(job, items).finally(() => running--);
    }) as typeof run;
    await gw.eventually(
      async () => claims,
      (n) => n >= 5,
      'the loop claiming',
    );
    // No renewal for longer than the lease: the watchdog lets the connection go, a later tick takes it again.
    const until = Date.now() + 1200;
    while (Date.now() < until);
    const after = claims;
    await gw.eventually(
      async () => (gw.core.dispatcher.holds('holding') ? claims : 0),
      (n) => n >= after + 200,
      'claims again after the connection was taken again',
    );
    assert.equal(most, 1, 'one claim at a time');
  } finally {
    await gw.close();
  }
});
