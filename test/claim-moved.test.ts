import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { Db } from '../src/db/database.ts';
import { claimJob, type ClaimRequest } from '../src/dispatch/claim.ts';
import { acceptJob } from '../src/messaging/accept.ts';
import type { RouteRow } from '../src/db/tables.ts';
import { insertTestAccount, insertTestRoute, oneSms, withFreshStore } from './helpers.ts';

/**
 * A receiver's order across the legs of a route (src/dispatch/claim.ts,
 * docs/carriers.md "Failover"): a claim on one connection holds back a
 * message whose receiver has an earlier one that must go first on another
 * connection; another account's messages never hold one back.
 */
let db: Db;
let accountId: number;
let otherAccountId: number;
let route: RouteRow;
let phone = 5511930000000;

withFreshStore(async (opened) => {
  db = opened;
  accountId = await insertTestAccount(db, 'Claim order');
  otherAccountId = await insertTestAccount(db, 'Someone else');
  route = await insertTestRoute(db, 'primary');
});
beforeEach(() => {
  phone += 10;
});

/** Queued messages to one receiver, in this order, on the route's connection (primary): their ids. */
async function queue(receiver: string, count: number, account = accountId): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const [result] = await db.run(acceptJob, [oneSms(account, route, receiver, `m${i}`)]);
    assert.ok(result && !('refused' in result));
    const row = await db.kysely
      .selectFrom('messages')
      .select('id')
      .where('receiver', '=', receiver)
      .where('content', '=', `m${i}`)
      .where('account_id', '=', account)
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}

const set = (
  id: string,
  values: { connector?: string; moved?: number; status?: 'QUEUED' | 'SENDING' | 'SENT'; lease_owner?: string | null; due_at?: number },
) => db.kysely.updateTable('messages').set(values).where('id', '=', id).execute();

/** A claim on `connector`: the ids it took of this receiver's messages (each test has its own receiver). */
async function claim(connector: string): Promise<string[]> {
  const request: ClaimRequest = { connector, limit: 100, now: Date.now(), owner: 'me', leaseMs: 60_000, held: [], handedBack: [] };
  const [claimed] = await db.run(claimJob, [request]);
  return (claimed?.rows ?? []).filter((m) => m.receiver === String(phone)).map((m) => m.id);
}

test('a moved message waits while an earlier one of its receiver is in flight on the leg it came from', async () => {
  const receiver = String(phone);
  const [a, b] = await queue(receiver, 2);
  // a is in flight on primary (leased by another dispatcher); b was moved to backup meanwhile.
  await set(a as string, { status: 'SENDING', lease_owner: 'other', due_at: Date.now() + 60_000 });
  await set(b as string, { connector: 'backup', moved: 1 });
  assert.deepEqual(await claim('backup'), []);
  // a answered: b goes.
  await set(a as string, { status: 'SENT', lease_owner: null });
  assert.deepEqual(await claim('backup'), [b]);
});

test('a moved message waits while an earlier one of its receiver still waits to move', async () => {
  const receiver = String(phone);
  const [a, b, c] = await queue(receiver, 3);
  await set(b as string, { connector: 'backup', moved: 1 });
  await set(c as string, { connector: 'backup', moved: 1 });
  assert.deepEqual(await claim('backup'), []);
  // a moves after them: all three go, in order.
  await set(a as string, { connector: 'backup', moved: 1 });
  assert.deepEqual(await claim('backup'), [a, b, c]);
});

test("the leg a receiver's messages came from holds back its later ones while a moved one waits", async () => {
  const receiver = String(phone);
  const [a, b] = await queue(receiver, 2);
  await set(a as string, { connector: 'backup', moved: 1 });
  assert.deepEqual(await claim('primary'), []);
  await set(a as string, { status: 'SENT' });
  assert.deepEqual(await claim('primary'), [b]);
});

test("another account's messages to the same number never hold one back", async () => {
  const receiver = String(phone);
  const [theirs] = await queue(receiver, 1, otherAccountId);
  const [movedTheirs] = await queue(receiver, 1, otherAccountId);
  const [mine] = await queue(receiver, 1);
  // Theirs: one stuck on primary, one moved and waiting on a third connection; mine moved to backup.
  await set(theirs as string, { status: 'SENDING', lease_owner: 'other', due_at: Date.now() + 60_000 });
  await set(movedTheirs as string, { connector: 'third', moved: 1 });
  await set(mine as string, { connector: 'backup', moved: 1 });
  assert.deepEqual(await claim('backup'), [mine]);
});

test('an earlier message of the receiver on another connection does not hold back one that was never moved', async () => {
  const receiver = String(phone);
  const [a, b] = await queue(receiver, 2);
  // An operator's change of legs (not failover): a waits on another connection, unmarked.
  await set(a as string, { connector: 'old', status: 'SENDING', lease_owner: 'other', due_at: Date.now() + 60_000 });
  assert.deepEqual(await claim('primary'), [b]);
});
