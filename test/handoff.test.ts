import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { Db } from '../src/db/database.ts';
import { acceptJob, refusalError, type AcceptInput, type AcceptResult, type Handoff } from '../src/messaging/accept.ts';
import { claimJob, type ClaimResult } from '../src/dispatch/claim.ts';
import type { Job } from '../src/db/jobs.ts';
import type { RouteRow } from '../src/db/tables.ts';
import { DIALECT, insertTestAccount, insertTestRoute, smsRequest, withFreshStore, startGateway, type TestGateway } from './helpers.ts';

/**
 * Handoff (src/messaging/accept.ts, Dispatcher.reserve): an accept writes
 * messages due now already claimed by this process's dispatcher, which sends
 * them without a claim, but never one that would overtake an earlier message
 * of its receiver still waiting in the outbox.
 */
let db: Db;
let accountId: number;
let route: RouteRow;
let phone = 5511930000000;
withFreshStore(async (opened) => {
  db = opened;
  accountId = await insertTestAccount(db, 'Handoff');
});

const LEASE = 60_000;
const offer = (count: number, holdBack: string[] = []): Handoff => ({ owner: 'dispatcher-1', leaseMs: LEASE, count, holdBack });
const receivers = (n: number) => Array.from({ length: n }, () => String(phone++));

/** A route on a connector of its own, so that each test starts from an empty outbox. */
async function newRoute(): Promise<RouteRow> {
  return insertTestRoute(db, `c${phone++}`);
}

const request = (to: string[], handoff?: Handoff, scheduleAt: number | null = null): AcceptInput => smsRequest(accountId, route, to, { handoff, scheduleAt });

async function accept(...inputs: AcceptInput[]): Promise<AcceptResult[]> {
  const results = await db.run(acceptJob, inputs);
  return results.map((r) => {
    if ('refused' in r) throw refusalError(r);
    return r;
  });
}

const rowsOf = (requestId: string) =>
  db.kysely
    .selectFrom('messages')
    .select(['id', 'receiver', 'status', 'lease_owner', 'due_at', 'attempts'])
    .where('request_id', '=', requestId)
    .orderBy('id')
    .execute();

describe(`accept with a handoff offer (${DIALECT})`, () => {
  // Each test on a connector of its own: an empty outbox.
  beforeEach(async () => {
    route = await newRoute();
  });

  it('an idle outbox: the first `count` messages are written claimed by the owner, the others queued', async () => {
    const to = receivers(5);
    const started = Date.now();
    const [result] = await accept(request(to, offer(3)));
    const rows = await rowsOf(result?.requestId ?? '');
    const handed = rows.filter((r) => r.status === 'SENDING');
    assert.deepEqual(
      handed.map((r) => r.receiver),
      to.slice(0, 3),
    );
    for (const r of handed) {
      assert.equal(r.lease_owner, 'dispatcher-1');
      assert.equal(Number(r.attempts), 1);
      assert.ok(Number(r.due_at) >= started + LEASE, 'leased for a whole lease');
    }
    assert.deepEqual(
      rows.filter((r) => r.status === 'QUEUED').map((r) => r.receiver),
      to.slice(3),
    );
    assert.deepEqual(
      result?.handedOff,
      handed.map((r) => [to.indexOf(r.receiver), r.id]),
    );
  });

  it('nothing is handed off while the connector has due messages waiting for a claim', async () => {
    await accept(request(receivers(1)));
    const [result] = await accept(request(receivers(2), offer(10)));
    assert.deepEqual(result?.handedOff, []);
    assert.deepEqual(
      (await rowsOf(result?.requestId ?? '')).map((r) => r.status),
      ['QUEUED', 'QUEUED'],
    );
  });

  it('a receiver with a message waiting for a retry, or held back by the dispatcher, is not handed off; the others are', async () => {
    const [retrying, heldBack, free] = receivers(3) as [string, string, string];
    const [first] = await accept(request([retrying], offer(1)));
    // The carrier handed it back: queued again, due later.
    await db.kysely
      .updateTable('messages')
      .set({ status: 'QUEUED', due_at: Date.now() + 30_000, lease_owner: null })
      .where('request_id', '=', first?.requestId ?? '')
      .execute();
    const [result] = await accept(request([retrying, heldBack, free], offer(10, [heldBack])));
    const rows = await rowsOf(result?.requestId ?? '');
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.receiver, r.status])), { [retrying]: 'QUEUED', [heldBack]: 'QUEUED', [free]: 'SENDING' });
  });

  it('in one batch, a message left queued holds back later messages of its receiver', async () => {
    const [shared, other] = receivers(2) as [string, string];
    const [queued, offered] = await accept(request([shared]), request([shared, other], offer(10)));
    assert.deepEqual(
      (await rowsOf(queued?.requestId ?? '')).map((r) => r.status),
      ['QUEUED'],
    );
    const rows = await rowsOf(offered?.requestId ?? '');
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.receiver, r.status])), { [shared]: 'QUEUED', [other]: 'SENDING' });
  });

  it('scheduled requests and blocked receivers are never handed off', async () => {
    const [blocked, free] = receivers(2) as [string, string];
    await db.kysely.insertInto('blocklist').values({ account_id: accountId, phone: blocked, created_at: Date.now() }).execute();
    const [scheduled] = await accept(request(receivers(2), offer(10), Date.now() + 3_600_000));
    assert.deepEqual(scheduled?.handedOff, []);
    assert.deepEqual(
      (await rowsOf(scheduled?.requestId ?? '')).map((r) => r.status),
      ['SCHEDULED', 'SCHEDULED'],
    );
    const [now] = await accept(request([blocked, free], offer(10)));
    const rows = await rowsOf(now?.requestId ?? '');
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.receiver, r.status])), { [blocked]: 'BLOCKED', [free]: 'SENDING' });
  });
});

/** Calls `seen` with the results of each claim the gateway's dispatcher runs. */
function watchClaims(gw: TestGateway, seen: (results: unknown[]) => void): void {
  const run = gw.core.db.run;
  gw.core.db.run = (async (job: Job<unknown, unknown>, items: unknown[]) => {
    const results = await run(job, items);
    if (job === claimJob) seen(results);
    return results;
  }) as typeof run;
}

/** A customer, once the simulator connection is held: the dispatcher offers a hand-off only for a connection with its bind up (on a busy machine, a moment after the start). */
async function readyCustomer(gw: TestGateway) {
  const customer = await gw.customer({ balance: 10 });
  await gw.eventually(
    () => gw.app.inject({ url: '/readyz' }),
    (r) => r.statusCode === 200,
    'the simulator connection held',
  );
  return customer;
}

describe(`the gateway hands accepted messages to an idle carrier without a claim (${DIALECT})`, () => {
  it('messages go out and are delivered, and no claim ever returns them', async () => {
    const gw = await startGateway({}, {}, undefined);
    try {
      const claimed = new Set<string>();
      watchClaims(gw, (results) => {
        for (const result of results) for (const r of (result as ClaimResult).rows) claimed.add(r.id);
      });
      const customer = await readyCustomer(gw);
      const res = await gw.call(customer.key, 'POST', '/messages/sms/send', { receivers: receivers(3).map(Number), message: 'straight out' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const report = await gw.eventually(
        () => gw.call(customer.key, 'GET', `/reports/messages/sent?requestId=${String(res.headers['x-request-id'])}`),
        (r) => r.body.object?.length === 3 && r.body.object.every((m: { status: string }) => m.status === 'DELIVERED'),
        'all three DELIVERED',
      );
      const ids = report.body.object.map((m: { id: string }) => m.id);
      assert.deepEqual(
        ids.filter((id: string) => claimed.has(id)),
        [],
      );
    } finally {
      await gw.close();
    }
  });

  it("the carrier's accepted answers lead to no claim while every message is handed off (only the poll claims)", async () => {
    const POLL_MS = 1000;
    const gw = await startGateway({ DISPATCH_POLL_MS: String(POLL_MS) }, {}, undefined);
    try {
      const claims: number[] = [];
      watchClaims(gw, () => claims.push(Date.now()));
      const customer = await readyCustomer(gw);
      // One message at a time, each sent and answered before the next: every one handed off, the outbox empty.
      const REQUESTS = 30;
      const started = Date.now();
      for (let i = 0; i < REQUESTS; i++) {
        const res = await gw.call(customer.key, 'POST', '/messages/sms/send', { receivers: receivers(1).map(Number), message: `one at a time ${i}` });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        await gw.eventually(
          () => gw.call(customer.key, 'GET', `/reports/messages/sent?requestId=${String(res.headers['x-request-id'])}`),
          (r) => r.body.object?.[0]?.status === 'SENT' || r.body.object?.[0]?.status === 'DELIVERED',
          `message ${i} sent`,
        );
      }
      const during = claims.filter((t) => t >= started).length;
      // Before: a claim after each answer written (at least REQUESTS). Now: the poll's, one a POLL_MS, and one after a wake at most.
      const bound = Math.ceil((Date.now() - started) / POLL_MS) + 2;
      assert.ok(during <= bound, `${during} claims for ${REQUESTS} messages handed off (at most ${bound} expected)`);
    } finally {
      await gw.close();
    }
  });
});
