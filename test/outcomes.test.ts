import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from '../src/db/database.ts';
import { acceptJob, type AcceptInput } from '../src/messaging/accept.ts';
import { outcomesJob, packOutcomes, type Outcome } from '../src/messaging/outcomes.ts';
import type { ReceiptStatus } from '../src/carriers/carrier.ts';
import type { RouteRow } from '../src/db/tables.ts';
import { DIALECT, insertTestAccount, insertTestRoute, oneSms, untilOneWaitsOn, withFreshStore } from './helpers.ts';

/**
 * Outcomes written in one batch (src/messaging/outcomes.ts): a submit answer
 * and the final receipt of the same message meeting in one batch are written
 * in one step; what a reader sees (status, status log, carrier id link) is
 * what two steps would have left, and every case the one step does not
 * cover (receipts that overtook their answer, two receipts of one id, a
 * message sent in parts, a message no longer being sent) goes the usual way.
 */
let db: Db;
let accountId: number;
let route: RouteRow;
let phone = 5511940000000;
let carrierSeq = 1;
const CONNECTOR = 'outcomes-test';

withFreshStore(async (opened) => {
  db = opened;
  accountId = await insertTestAccount(db, 'Outcomes');
  // A status callback: status changes of the account are logged (status_log), as webhooks need them.
  await db.kysely
    .withTables<{ account_callbacks: { account_id: number; reply_url: string | null; status_url: string | null; updated_at: number } }>()
    .insertInto('account_callbacks')
    .values({ account_id: accountId, reply_url: null, status_url: 'https://example.com/status', updated_at: Date.now() })
    .execute();
  route = await insertTestRoute(db, CONNECTOR);
});

/** A message being sent (SENDING, as the dispatcher leaves it): its id. */
async function sending(account = accountId): Promise<string> {
  const input: AcceptInput = { ...oneSms(account, route, String(phone++)), handoff: { owner: 'dispatcher-1', leaseMs: 60_000, count: 1, holdBack: [] } };
  const [result] = await db.run(acceptJob, [input]);
  assert.ok(result && !('refused' in result) && result.handedOff.length === 1);
  return result.handedOff[0]?.[1] as string;
}

const answer = (messageId: string, carrierIds: string[]): Outcome => ({
  kind: 'result',
  connector: CONNECTOR,
  messageId,
  result: { ok: true, carrierIds },
  attempts: 1,
});
const receipt = (carrierId: string, status: ReceiptStatus, at = Date.now()): Outcome => ({
  kind: 'receipt',
  connector: CONNECTOR,
  receipt: { carrierId, status, details: `stat:${status}`, at: new Date(at) },
});
const write = (...batches: Outcome[][]) => db.run(outcomesJob, batches.map(packOutcomes));
const newCarrierId = () => `c-${carrierSeq++}`;

async function stateOf(messageId: string) {
  const message = await db.kysely
    .selectFrom('messages')
    .select(['status', 'status_details', 'carrier_id', 'sent_at', 'status_at', 'lease_owner'])
    .where('id', '=', messageId)
    .executeTakeFirstOrThrow();
  const log = await db.kysely.selectFrom('status_log').select(['status', 'details', 'at']).where('message_id', '=', messageId).orderBy('id').execute();
  const links = await db.kysely.selectFrom('carrier_ids').select('carrier_id').where('message_id', '=', messageId).orderBy('carrier_id').execute();
  return { message, log: log.map((l) => l.status), links: links.map((l) => l.carrier_id) };
}

describe(`outcomes written in one batch (${DIALECT})`, () => {
  it('an answer and its final receipt in one batch: the final state at once, the log shows SENT then it, the carrier id is linked', async () => {
    for (const status of ['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED'] as const) {
      const id = await sending();
      const carrierId = newCarrierId();
      const at = Date.now() + 5;
      await write([answer(id, [carrierId]), receipt(carrierId, status, at)]);
      const state = await stateOf(id);
      assert.equal(state.message.status, status);
      assert.equal(state.message.status_details, `stat:${status}`);
      assert.equal(state.message.carrier_id, carrierId);
      assert.equal(Number(state.message.status_at), at);
      assert.ok(Number(state.message.sent_at) > 0);
      assert.equal(state.message.lease_owner, null);
      assert.deepEqual(state.log, ['SENT', status]);
      assert.deepEqual(state.links, [carrierId]);
    }
  });

  it('the same outcomes in two batches leave the same state (the usual way)', async () => {
    const id = await sending();
    const carrierId = newCarrierId();
    await write([answer(id, [carrierId])]);
    await write([receipt(carrierId, 'DELIVERED')]);
    const state = await stateOf(id);
    assert.equal(state.message.status, 'DELIVERED');
    assert.deepEqual(state.log, ['SENT', 'DELIVERED']);
  });

  it('an intermediate receipt (SENT) with the answer: the message stays SENT', async () => {
    const id = await sending();
    const carrierId = newCarrierId();
    await write([answer(id, [carrierId]), receipt(carrierId, 'SENT')]);
    const state = await stateOf(id);
    assert.equal(state.message.status, 'SENT');
    assert.deepEqual(state.log, ['SENT']);
  });

  it('two receipts of one id in the batch: applied in order, a failure outweighing a delivery', async () => {
    const id = await sending();
    const carrierId = newCarrierId();
    await write([answer(id, [carrierId]), receipt(carrierId, 'DELIVERED'), receipt(carrierId, 'UNDELIVERED')]);
    const state = await stateOf(id);
    assert.equal(state.message.status, 'UNDELIVERED');
    assert.deepEqual(state.log, ['SENT', 'DELIVERED', 'UNDELIVERED']);
  });

  it('a message sent in parts: its receipts go the usual way, a failed part outweighing a delivered one', async () => {
    const id = await sending();
    const [a, b] = [newCarrierId(), newCarrierId()];
    await write([answer(id, [a, b]), receipt(a, 'UNDELIVERED'), receipt(b, 'DELIVERED')]);
    const state = await stateOf(id);
    assert.equal(state.message.status, 'UNDELIVERED');
    assert.deepEqual(state.links, [a, b].sort());
  });

  it('a receipt that overtook its answer waits; a later batch with the answer and another receipt applies them in the order they came', async () => {
    const id = await sending();
    const carrierId = newCarrierId();
    await write([receipt(carrierId, 'UNDELIVERED', Date.now() - 10)]);
    assert.equal((await stateOf(id)).message.status, 'SENDING');
    await write([answer(id, [carrierId]), receipt(carrierId, 'DELIVERED')]);
    const state = await stateOf(id);
    // The early failure first, then the delivery, which does not move a final failure.
    assert.equal(state.message.status, 'UNDELIVERED');
    assert.deepEqual(state.log, ['SENT', 'UNDELIVERED']);
    const pending = await db.kysely.selectFrom('pending_receipts').select('carrier_id').where('carrier_id', '=', carrierId).execute();
    assert.deepEqual(pending, []);
  });

  it('a message no longer being sent (cancelled meanwhile) is not moved by its answer or its receipt', async () => {
    const id = await sending();
    await db.kysely.updateTable('messages').set({ status: 'CANCELLED', lease_owner: null }).where('id', '=', id).execute();
    const carrierId = newCarrierId();
    await write([answer(id, [carrierId]), receipt(carrierId, 'DELIVERED')]);
    const state = await stateOf(id);
    assert.equal(state.message.status, 'CANCELLED');
    assert.deepEqual(state.log, []);
  });

  it('a batch of many: answers with and without their receipts, in any order, each message where it should be', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, () => sending()));
    const carrierIds = ids.map(() => newCarrierId());
    const batch: Outcome[] = ids.map((id, i) => answer(id, [carrierIds[i] as string]));
    // Receipts for the even ones only, in reverse order.
    for (let i = ids.length - 1; i >= 0; i--) if (i % 2 === 0) batch.push(receipt(carrierIds[i] as string, i % 4 === 0 ? 'DELIVERED' : 'EXPIRED'));
    await write(batch);
    for (const [i, id] of ids.entries()) {
      const state = await stateOf(id);
      const expected = i % 2 === 1 ? 'SENT' : i % 4 === 0 ? 'DELIVERED' : 'EXPIRED';
      assert.equal(state.message.status, expected, `message ${i}`);
      assert.deepEqual(state.log, expected === 'SENT' ? ['SENT'] : ['SENT', expected]);
    }
  });

  it('refunds of several accounts take the accounts in id order, as the accept batch does: no deadlock with it', {
    skip: DIALECT !== 'postgres' && 'row locks are PostgreSQL only',
  }, async () => {
    const low = await insertTestAccount(db, 'Refund low');
    const high = await insertTestAccount(db, 'Refund high');
    const [ofHigh, ofLow] = [await sending(high), await sending(low)];
    const refusal = (messageId: string): Outcome => ({
      kind: 'result',
      connector: CONNECTOR,
      messageId,
      result: { ok: false, retry: false, error: 'rejected' },
      attempts: 1,
    });
    const balance = async (id: number) => (await db.kysely.selectFrom('accounts').select('balance').where('id', '=', id).executeTakeFirstOrThrow()).balance;
    const [lowBefore, highBefore] = [await balance(low), await balance(high)];
    let written: Promise<unknown> | undefined;
    // Stands in for an accept batch: it has locked the lower account and goes on to the higher one.
    await db.kysely.transaction().execute(async (accept) => {
      await accept.selectFrom('accounts').select('id').where('id', '=', low).forUpdate().execute();
      written = write([refusal(ofHigh), refusal(ofLow)]);
      await untilOneWaitsOn(db.kysely, accept);
      await accept.selectFrom('accounts').select('id').where('id', '=', high).forUpdate().execute();
    });
    await written;
    assert.equal((await stateOf(ofHigh)).message.status, 'FAILED');
    assert.equal((await stateOf(ofLow)).message.status, 'FAILED');
    assert.deepEqual([await balance(low), await balance(high)], [lowBefore + 1000, highBefore + 1000]);
  });
});
