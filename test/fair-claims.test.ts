import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../src/db/database.ts';
import { claimJob, type ClaimRequest, type ClaimResult } from '../src/dispatch/claim.ts';
import { ACCOUNTS_A_CLAIM, VISITS_A_CLAIM } from '../src/common/turns.ts';
import { acceptJob } from '../src/messaging/accept.ts';
import type { RouteRow } from '../src/db/tables.ts';
import { DIALECT, insertTestAccount, insertTestRoute, smsRequest, withFreshStore } from './helpers.ts';

/**
 * Accounts take turns behind a backlog (src/dispatch/claim.ts, fairShare;
 * src/common/turns.ts;
 * docs/architecture.md "One account's backlog"): a claim that cannot take
 * everything due gives each account with messages waiting its oldest in
 * turn, so that one account's bulk send holds back another's messages by
 * one claim, not by the whole backlog.
 */
let db: Db;
let phone = 5511940000000;
let connector = 0;

withFreshStore(async (opened) => {
  db = opened;
});

/** A route on a connector of its own: each test starts from an empty outbox. */
const newRoute = (): Promise<RouteRow> => insertTestRoute(db, `fair-${connector++}`);
const receivers = (n: number) => Array.from({ length: n }, () => String(phone++));

const request = (accountId: number, route: RouteRow, to: string[], scheduleAt: number | null = null) => smsRequest(accountId, route, to, { scheduleAt });

/** One request of `accountId` to these receivers, queued (no handoff): its message ids, in order. */
async function queue(accountId: number, route: RouteRow, to: string[]): Promise<string[]> {
  const [result] = await db.run(acceptJob, [request(accountId, route, to)]);
  assert.ok(result && !('refused' in result), JSON.stringify(result));
  const rows = await db.kysely.selectFrom('messages').select('id').where('request_id', '=', result.requestId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function claim(route: RouteRow, limit: number, afterAccount?: number, owner = 'me'): Promise<ClaimResult> {
  const request: ClaimRequest = { connector: route.connector, limit, now: Date.now(), owner, leaseMs: 60_000, held: [], handedBack: [], afterAccount };
  const [result] = await db.run(claimJob, [request]);
  assert.ok(result);
  return result;
}

const accountOf = async (ids: string[]) =>
  new Map((await db.kysely.selectFrom('messages').select(['id', 'account_id']).where('id', 'in', ids).execute()).map((r) => [r.id, Number(r.account_id)]));

test(`behind one account's backlog, another account's message goes in the next claim (${DIALECT})`, async () => {
  const route = await newRoute();
  const bulk = await insertTestAccount(db, 'Bulk sender');
  const other = await insertTestAccount(db, 'One-time codes');
  const backlog = await queue(bulk, route, receivers(60));
  const [code] = await queue(other, route, receivers(1));
  const { rows } = await claim(route, 10);
  const ids = rows.map((r) => r.id);
  assert.equal(ids.length, 10);
  assert.ok(ids.includes(code as string), "the other account's message is in the first claim, not after 60 of the bulk");
  // The bulk's share is its oldest, in order.
  assert.deepEqual(
    ids.filter((id) => id !== code),
    backlog.slice(0, 9),
  );
});

test(`with no backlog a claim takes everything due, oldest first, whoever's it is (${DIALECT})`, async () => {
  const route = await newRoute();
  const first = await insertTestAccount(db, 'First');
  const second = await insertTestAccount(db, 'Second');
  const a = await queue(first, route, receivers(5));
  const b = await queue(second, route, receivers(3));
  const { rows, lastTurn } = await claim(route, 20);
  assert.deepEqual(
    rows.map((r) => r.id),
    [...a, ...b],
  );
  assert.equal(lastTurn, undefined, 'no turns without a backlog');
});

test(`more accounts than share one claim take turns across claims, each account's messages in order (${DIALECT})`, async () => {
  const route = await newRoute();
  const accounts: number[] = [];
  const queued = new Map<number, string[]>();
  for (let i = 0; i < ACCOUNTS_A_CLAIM + 4; i++) {
    const id = await insertTestAccount(db, `Campaign ${i}`);
    accounts.push(id);
    queued.set(id, await queue(id, route, receivers(20)));
  }
  const claimedBy = new Map<number, string[]>();
  let after: number | undefined;
  // Two claims of one message an account visited: every account has had a turn.
  for (let round = 0; round < 2; round++) {
    const { rows, lastTurn } = await claim(route, ACCOUNTS_A_CLAIM, after);
    after = lastTurn;
    const owners = await accountOf(rows.map((r) => r.id));
    for (const r of rows) {
      const account = owners.get(r.id) as number;
      claimedBy.set(account, [...(claimedBy.get(account) ?? []), r.id]);
    }
  }
  assert.deepEqual(
    [...claimedBy.keys()].sort((x, y) => x - y),
    accounts,
    'every account had a turn in two claims',
  );
  for (const [account, ids] of claimedBy) assert.deepEqual(ids, (queued.get(account) ?? []).slice(0, ids.length), `account ${account}: its oldest, in order`);
});

test(`behind a backlog a receiver's order holds within an account (${DIALECT})`, async () => {
  const route = await newRoute();
  const bulk = await insertTestAccount(db, 'Bulk');
  const other = await insertTestAccount(db, 'Other');
  await queue(bulk, route, receivers(40));
  const [receiver] = receivers(1);
  const [earlier, later] = await queue(other, route, [receiver as string, receiver as string]);
  // The earlier one is in flight with another dispatcher: the later one waits for its answer.
  await db.kysely
    .updateTable('messages')
    .set({ status: 'SENDING', lease_owner: 'another', due_at: Date.now() + 60_000 })
    .where('id', '=', earlier as string)
    .execute();
  const ids = (await claim(route, 10)).rows.map((r) => r.id);
  assert.ok(!ids.includes(later as string), 'not ahead of the earlier message in flight elsewhere');
  assert.equal(ids.length, 10, 'the bulk fills the claim');
  // Answered: the later one goes in the next claim, ahead of the bulk's backlog.
  await db.kysely
    .updateTable('messages')
    .set({ status: 'SENT', lease_owner: null })
    .where('id', '=', earlier as string)
    .execute();
  assert.ok((await claim(route, 10)).rows.some((r) => r.id === later));
});

test(`a campaign scheduled for later is no one's turn (${DIALECT})`, async () => {
  const route = await newRoute();
  const now = await insertTestAccount(db, 'Sends now');
  const later = await insertTestAccount(db, 'Sends tomorrow');
  const due = await queue(now, route, receivers(30));
  await db.run(acceptJob, [request(later, route, receivers(5), Date.now() + 86_400_000)]);
  const { rows } = await claim(route, 10);
  assert.deepEqual(
    rows.map((r) => r.id),
    due.slice(0, 10),
  );
});

test(`many accounts waiting only for later do not keep a due one from its turn (${DIALECT})`, async () => {
  const route = await newRoute();
  const bulk = await insertTestAccount(db, 'Bulk now');
  await queue(bulk, route, receivers(50));
  for (let i = 0; i < VISITS_A_CLAIM + 6; i++) {
    const account = await insertTestAccount(db, `Tomorrow ${i}`);
    await db.run(acceptJob, [request(account, route, receivers(1), Date.now() + 86_400_000)]);
  }
  const late = await insertTestAccount(db, 'Due, with the highest id');
  const [code] = await queue(late, route, receivers(1));
  let after: number | undefined;
  const seen: string[] = [];
  for (let i = 0; i < 3 && !seen.includes(code as string); i++) {
    const { rows, lastTurn } = await claim(route, 10, after);
    after = lastTurn;
    seen.push(...rows.map((r) => r.id));
  }
  assert.ok(seen.includes(code as string), 'claimed within three claims, past the accounts with nothing due');
});
