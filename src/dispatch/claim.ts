import { sql, type Transaction } from 'kysely';
import type { Database, MessageRow } from '../db/tables.ts';
import type { Dialect } from '../db/database.ts';
import { defineJob } from '../db/jobs.ts';
import { sizedChunks } from '../db/bulk.ts';
import { takeTurns } from '../common/turns.ts';

/**
 * What a claim reads back of each message: what the carrier is handed and
 * what keeps order. Not the whole row: SQLite's RETURNING * measured about
 * 20 µs more per message than no RETURNING, a third of the claim's cost.
 */
const CLAIMED_COLUMNS = ['id', 'receiver', 'content', 'channel', 'payload', 'attempts', 'schedule_at'] as const;
export type Claimed = Pick<MessageRow, (typeof CLAIMED_COLUMNS)[number]>;

/** A claim's messages, in send order, and behind a backlog the account whose turn came last (the next claim's afterAccount). */
export interface ClaimResult {
  rows: Claimed[];
  lastTurn: number | undefined;
}

export interface Position {
  schedule_at: number;
  id: string;
}

/** True when `a` goes out before `b`: schedule time, then id (UUIDv7, so acceptance order). */
export function before(a: Position, b: Position): boolean {
  return a.schedule_at < b.schedule_at || (a.schedule_at === b.schedule_at && a.id < b.id);
}

/** A claim, as plain data (a job, src/db/jobs.ts): the dispatcher's state it depends on travels with it. */
export interface ClaimRequest {
  connector: string;
  limit: number;
  now: number;
  owner: string;
  leaseMs: number;
  /** Messages the dispatcher still holds past their lease (see InFlight in in-flight.ts): due again, but not to be claimed. */
  held: string[];
  /** Per receiver, its earliest message handed back and not written yet. */
  handedBack: [string, Position][];
  /** Behind a backlog, the account whose turn came last in the previous claim: this one starts after it (see fairShare). */
  afterAccount?: number;
}

/**
 * Claims up to `limit` due messages of one connector (one request; the job
 * shape takes a list), oldest first by (schedule_at, id), keeping each
 * receiver's messages in that order: a message is not claimed while an
 * earlier one of the same receiver on the same connector is waiting for a
 * retry (QUEUED, due later, or handed back and not written yet). A message
 * the dispatcher still holds is not claimed again when its lease runs out,
 * and holds back its receiver's later messages like one in flight. See
 * Dispatcher.claim for why. Behind a backlog, accounts take turns
 * (fairShare).
 */
export async function claimDue(tx: Transaction<Database>, dialect: Dialect, requests: ClaimRequest[]): Promise<ClaimResult[]> {
  const out: ClaimResult[] = [];
  for (const r of requests) out.push(await claimOne(tx, dialect, r));
  return out;
}

async function claimOne(tx: Transaction<Database>, dialect: Dialect, r: ClaimRequest): Promise<ClaimResult> {
  // PostgreSQL: claims of one connector (processes sharing its binds) one at a time. Otherwise a claim
  // skipping the rows another claim has locked could take a receiver's later message while the other
  // takes the earlier one; this way each claim sees the rows the one before it leased.
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`claim:${r.connector}`}))`.execute(tx);
  const held = new Set(r.held);
  const firstWaiting = new Map<string, Position>(r.handedBack);
  // Few rows: what waits for a retry. Literal, so that the partial index messages_waiting_idx (migration 007) serves it.
  const waiting = await tx
    .selectFrom('messages')
    .select(['receiver', 'schedule_at', 'id'])
    .where('connector', '=', r.connector)
    .where(sql<boolean>`status = 'QUEUED'`)
    .where('due_at', '>', r.now)
    .execute();
  for (const w of waiting) {
    const known = firstWaiting.get(w.receiver);
    if (!known || before(w, known)) firstWaiting.set(w.receiver, w);
  }
  const fetch = r.limit + held.size;
  const due = await dueRows(tx, dialect, r, fetch);
  // Everything due was seen: it all fits in this claim, whoever's it is.
  const { candidates, lastTurn } =
    due.length < fetch
      ? { candidates: eligible(due, new Map(firstWaiting), held, r.limit, r.now), lastTurn: undefined }
      : await fairShare(tx, dialect, r, due, firstWaiting, held);
  const chosen = await notBehindMoved(tx, r.connector, candidates);
  if (chosen.length === 0) return { rows: [], lastTurn };
  const rows: Claimed[] = [];
  // In chunks of a few sizes: a statement per number of ids would be prepared and kept for each (see sizedChunks).
  for (const chunk of sizedChunks(chosen, 512))
    rows.push(
      ...(await tx
        .updateTable('messages')
        .set({ status: 'SENDING', lease_owner: r.owner, due_at: r.now + r.leaseMs, attempts: sql`attempts + 1`, status_at: r.now })
        .where('id', 'in', chunk)
        .returning(CLAIMED_COLUMNS)
        .execute()),
    );
  return { rows: rows.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)), lastTurn };
}

/**
 * Due messages of the connector, oldest first, and the messages other
 * dispatchers hold leased (alive, or gone and not recovered yet): those are
 * not due but hold back their receivers' later messages, which must not
 * overtake them. Such rows eat into the limit: with another dispatcher's
 * window of them ahead, a claim may take fewer messages than it could.
 */
function dueRows(tx: Transaction<Database>, dialect: Dialect, r: ClaimRequest, limit: number): Promise<Candidate[]> {
  return (
    tx
      .selectFrom('messages')
      .select(['id', 'account_id', 'receiver', 'schedule_at', 'due_at', 'moved'])
      .where('connector', '=', r.connector)
      // Literal, so that the partial index messages_claim_idx (migration 005) serves it in order.
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
      .where((eb) => eb.or([eb('due_at', '<=', r.now), eb.and([eb('status', '=', 'SENDING'), eb('lease_owner', '!=', r.owner)])]))
      .orderBy('schedule_at')
      .orderBy('id')
      .limit(limit)
      .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked())
      .execute()
  );
}

/**
 * One account's messages waiting on the connector that are due, oldest
 * first. Only what was due to go by now is read: a campaign scheduled for
 * later is not walked at every claim.
 */
function queuedRows(tx: Transaction<Database>, dialect: Dialect, r: ClaimRequest, account: number, limit: number): Promise<Candidate[]> {
  return (
    tx
      .selectFrom('messages')
      .select(['id', 'account_id', 'receiver', 'schedule_at', 'due_at', 'moved'])
      .where('connector', '=', r.connector)
      // Literal, so that the partial index messages_account_claim_idx (migration 018) serves it in order.
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED')`)
      .where('account_id', '=', account)
      .where('schedule_at', '<=', r.now)
      .where('due_at', '<=', r.now)
      .orderBy('schedule_at')
      .orderBy('id')
      .limit(limit)
      .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked())
      .execute()
  );
}

/**
 * The rows a claim may take, in order, at most `max`: not behind an
 * earlier message of their receiver that waits (for a retry, handed back,
 * leased to another dispatcher, or ours past its lease: see
 * Dispatcher.claim). `firstWaiting` is the claim's own copy: it learns the
 * receivers the rows hold back.
 */
function eligible(rows: Candidate[], firstWaiting: Map<string, Position>, held: Set<string>, max: number, now: number): Candidate[] {
  const out: Candidate[] = [];
  for (const m of rows) {
    const first = firstWaiting.get(m.receiver);
    if (first && first.id !== m.id && !before(m, first)) continue;
    if (m.due_at > now) {
      // Leased to another dispatcher: waits like a message in flight, and holds its receiver back.
      firstWaiting.set(m.receiver, m);
      continue;
    }
    if (held.has(m.id)) {
      // Ours still, past its lease: not again, and it holds back its receiver's later messages like one in flight.
      firstWaiting.set(m.receiver, m);
      continue;
    }
    if (out.length < max) out.push(m);
  }
  return out;
}

/**
 * A claim behind a backlog (more due than it can take): the connector's
 * accounts take turns (takeTurns, src/common/turns.ts), each giving its
 * oldest due messages up to its share, from the account after
 * `r.afterAccount`; what their turns leave of the limit goes to the oldest
 * messages of all (from `due`, the claim's first read). A receiver's order
 * is kept within each account; across accounts, messages to one number may
 * leave in another order than they were accepted in.
 */
async function fairShare(
  tx: Transaction<Database>,
  dialect: Dialect,
  r: ClaimRequest,
  due: Candidate[],
  firstWaiting: Map<string, Position>,
  held: Set<string>,
): Promise<{ candidates: Candidate[]; lastTurn: number | undefined }> {
  // Every message of the first read that nothing holds back (eligible without a limit).
  const free = eligible(due, new Map(firstWaiting), held, Number.POSITIVE_INFINITY, r.now);
  const next = async (from: number) => {
    const row = await tx
      .selectFrom('messages')
      .select('account_id')
      .where('connector', '=', r.connector)
      // Literal, so that the partial index messages_account_claim_idx (migration 018) serves it: one seek.
      .where(sql<boolean>`status in ('QUEUED', 'SCHEDULED')`)
      .where('account_id', '>', from)
      .orderBy('account_id')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.account_id);
  };
  // One account's backlog alone (a bulk send, the common case): its oldest are the oldest of all, two seeks say so.
  const only = Number(due[0]?.account_id);
  if (due.every((m) => Number(m.account_id) === only) && (await next(0)) === only && (await next(only)) === undefined)
    return { candidates: free.slice(0, r.limit), lastTurn: only };
  const { rows, last } = await takeTurns<Candidate>(
    {
      next,
      take: async (account, count) => eligible(await queuedRows(tx, dialect, r, account, count), new Map(firstWaiting), held, count, r.now),
    },
    r.afterAccount ?? 0,
    r.limit,
  );
  const taken = new Map((await notBehindInFlight(tx, r, rows, due, free)).map((m) => [m.id, m]));
  for (const m of free) if (taken.size < r.limit && !taken.has(m.id)) taken.set(m.id, m);
  return { candidates: [...taken.values()], lastTurn: last };
}

/**
 * The turns' messages that may go: those of the first read (`due`) if
 * nothing held them back there (`free`); the others, past it, were not
 * compared with the messages in flight, read here by their receivers (an
 * earlier one leased to another dispatcher, or ours past its lease, holds
 * them back, as in eligible).
 */
async function notBehindInFlight(tx: Transaction<Database>, r: ClaimRequest, rows: Candidate[], due: Candidate[], free: Candidate[]): Promise<Candidate[]> {
  const read = new Set(due.map((m) => m.id));
  const ok = new Set(free.map((m) => m.id));
  const past = rows.filter((m) => !read.has(m.id));
  const inFlight =
    past.length === 0
      ? []
      : await tx
          .selectFrom('messages')
          .select(['receiver', 'schedule_at', 'id'])
          .where('receiver', 'in', [...new Set(past.map((m) => m.receiver))])
          .where('connector', '=', r.connector)
          .where('status', '=', 'SENDING')
          .where((eb) => eb.or([eb('lease_owner', '!=', r.owner), eb('due_at', '<=', r.now)]))
          .execute();
  const first = new Map<string, Position>();
  for (const m of inFlight) {
    const known = first.get(m.receiver);
    if (!known || before(m, known)) first.set(m.receiver, m);
  }
  return rows.filter((m) => {
    if (read.has(m.id)) return ok.has(m.id);
    const f = first.get(m.receiver);
    return !f || before(m, f);
  });
}

/**
 * The candidates' ids, less those whose receiver has an earlier message on
 * another connection that must go first (src/routing/failover.ts):
 * - behind a message failover moved to another connection and still
 *   waiting there: the receiver's later messages here wait for it;
 * - a moved candidate behind any earlier message of its receiver still
 *   waiting or in flight elsewhere (typically on the leg it came from, in
 *   flight when its later messages moved, or not moved yet): it waits until
 *   that one is answered, or moved after it.
 * Both per account: another account's message never holds one back.
 * Moved messages are few and the partial index messages_moved_idx (migration
 * 016) holds only them, so this costs one small lookup a claim, and a
 * second (by receiver) only when a candidate was moved.
 */
async function notBehindMoved(tx: Transaction<Database>, connector: string, candidates: Candidate[]): Promise<string[]> {
  if (candidates.length === 0) return [];
  const receivers = [...new Set(candidates.map((c) => c.receiver))];
  const movedElsewhere = await tx
    .selectFrom('messages')
    .select(['account_id', 'receiver', 'schedule_at', 'id'])
    // Literal, so that the partial index serves it.
    .where(sql<boolean>`moved = 1 and status in ('QUEUED', 'SCHEDULED', 'SENDING')`)
    .where('connector', '!=', connector)
    .where('receiver', 'in', receivers)
    .execute();
  const movedReceivers = [...new Set(candidates.filter((c) => Number(c.moved) === 1).map((c) => c.receiver))];
  const anyElsewhere =
    movedReceivers.length === 0
      ? []
      : await tx
          .selectFrom('messages')
          .select(['account_id', 'receiver', 'schedule_at', 'id'])
          .where('receiver', 'in', movedReceivers)
          .where('connector', '!=', connector)
          .where('status', 'in', ['QUEUED', 'SCHEDULED', 'SENDING'])
          .execute();
  if (movedElsewhere.length === 0 && anyElsewhere.length === 0) return candidates.map((c) => c.id);
  const firstMoved = earliestByReceiver(movedElsewhere);
  const firstAny = earliestByReceiver(anyElsewhere);
  return candidates
    .filter((c) => {
      const m = firstMoved.get(accountAndReceiver(c));
      if (m && before(m, c)) return false;
      const a = Number(c.moved) === 1 ? firstAny.get(accountAndReceiver(c)) : undefined;
      return !a || before(c, a);
    })
    .map((c) => c.id);
}

type Candidate = Position & { account_id: number; receiver: string; due_at: number; moved: number };
type Keyed = Position & { account_id: number; receiver: string };

/** Order across connections is kept per account and receiver: another account's message never holds one back. */
const accountAndReceiver = (m: Keyed) => `${Number(m.account_id)}\u0000${m.receiver}`;

function earliestByReceiver(rows: Keyed[]): Map<string, Position> {
  const first = new Map<string, Position>();
  for (const r of rows) {
    const k = accountAndReceiver(r);
    const known = first.get(k);
    if (!known || before(r, known)) first.set(k, r);
  }
  return first;
}

/** Leases a dispatcher extends: its messages a carrier still keeps (see Dispatcher.renew). */
export interface RenewRequest {
  owner: string;
  ids: string[];
  /** The new lease end. */
  until: number;
}

/** Extends the leases still the owner's (SENDING, not answered, not taken by another dispatcher); answers how many. */
export async function renewLeases(tx: Transaction<Database>, _dialect: Dialect, requests: RenewRequest[]): Promise<number[]> {
  const out: number[] = [];
  for (const r of requests) {
    let renewed = 0;
    for (let i = 0; i < r.ids.length; i += 500) {
      const result = await tx
        .updateTable('messages')
        .set({ due_at: r.until })
        .where('id', 'in', r.ids.slice(i, i + 500))
        .where('lease_owner', '=', r.owner)
        .where('status', '=', 'SENDING')
        .executeTakeFirst();
      renewed += Number(result.numUpdatedRows);
    }
    out.push(renewed);
  }
  return out;
}

/** claimDue and renewLeases as jobs (src/db/jobs.ts). */
export const claimJob = defineJob(import.meta.url, 'claimJob', claimDue);
export const renewJob = defineJob(import.meta.url, 'renewJob', renewLeases);
