import { sql, type Transaction } from 'kysely';
import { newId } from '../common/ids.ts';
import type { Database, NewMessage, RouteRow } from '../db/tables.ts';
import { DomainError } from '../common/errors.ts';
import { fromMicros } from '../billing/money.ts';
import { lockBalances } from '../billing/ledger.ts';
import { insertRows } from '../db/bulk.ts';
import { maskCode } from '../tokens/mask.ts';
import { defineJob } from '../db/jobs.ts';
import { recordSmppSubmits, type SmppAccepted, type SmppSubmitRecord } from '../smpp-server/records.ts';

const REQUEST_COLUMNS = [
  'id',
  'account_id',
  'route_id',
  'channel',
  'product',
  'content',
  'tag',
  'custom',
  'sender',
  'source',
  'message_count',
  'cost',
  'schedule_at',
  'created_at',
] as const;
const MESSAGE_COLUMNS = [
  'id',
  'account_id',
  'request_id',
  'route_id',
  'connector',
  'channel',
  'receiver',
  'content',
  'payload',
  'segments',
  'cost',
  'status',
  'status_details',
  'tag',
  'custom',
  'sender',
  'created_at',
  'schedule_at',
  'due_at',
  'lease_owner',
  'attempts',
  'sent_at',
  'carrier_id',
  'status_at',
  'otp',
  'moved',
] as const;
const LEDGER_COLUMNS = ['account_id', 'amount', 'reason', 'request_id', 'created_at'] as const;
// A column added to messages or requests must be added above too (the compiler says so here).
type Unlisted<Row, Listed extends readonly unknown[]> = Exclude<keyof Row, Listed[number]>;
const everyColumn: [Unlisted<NewMessage, typeof MESSAGE_COLUMNS> | Unlisted<Database['requests'], typeof REQUEST_COLUMNS>] extends [never] ? true : never =
  true;
void everyColumn;

/** One message of a request, already validated and priced in segments. */
export interface AcceptItem {
  receiver: string;
  content: string;
  segments: number;
  tag: string | null;
  custom: string | null;
  payload: string | null;
  /** The connection chosen among the route's legs (src/routing/legs.ts); absent: the route's connector. */
  connector?: string | undefined;
  /** The message id when the caller chose it beforehand (the SMPP server answers with it); absent: a new one. */
  id?: string | undefined;
}

export interface AcceptInput {
  accountId: number;
  route: RouteRow;
  source: 'gateway' | 'legacy' | 'token' | 'reply' | 'smpp';
  /** Text shown in the requests report. */
  content: string;
  tag: string | null;
  custom: string | null;
  sender: string | null;
  /** Epoch ms; null = now. */
  scheduleAt: number | null;
  /** De-duplicated by receiver by the caller. */
  items: AcceptItem[];
  /** Set by the core when this process's dispatcher can send some of the messages at once (see Handoff). */
  handoff?: Handoff | undefined;
  /** A submit of the SMPP server: what it keeps beside the message, written in this transaction (src/smpp-server/records.ts). */
  smpp?: SmppSubmitRecord | undefined;
}

/**
 * The dispatcher's offer to take up to `count` of a request's messages
 * straight from the accept (src/dispatch/dispatcher.ts, reserve): they are
 * written already claimed (SENDING, leased to `owner`), as a claim would
 * leave them, and handed to the carrier once committed, so they cost no
 * claim. Only messages that overtake nothing of their receiver: none while
 * the connector has due messages waiting for a claim, and none to a receiver
 * with a message waiting for a retry (in the outbox, or `holdBack`: handed
 * back by the carrier and not written yet). With routing legs, a request's
 * messages may go through several connections: only those of `connector`.
 */
export interface Handoff {
  /** The connection offering it: only messages going through it are handed off; absent: the route's connector. */
  connector?: string | undefined;
  owner: string;
  leaseMs: number;
  count: number;
  holdBack: string[];
}

export interface AcceptResult {
  requestId: string;
  /** SMS segments charged (blocked receivers excluded). */
  credits: number;
  /** Micro-units debited. */
  cost: number;
  messages: number;
  blocked: number;
  /** Epoch ms the messages are due from (the accept's time unless scheduled). */
  scheduleAt: number;
  /** Messages written claimed for the dispatcher (see Handoff): index in `items`, message id. */
  handedOff: [number, string][];
}

/** A request the balance cannot cover, as the job answers it (plain data: it crosses to and from the SQLite thread). */
export interface AcceptRefusal {
  refused: 'INSUFFICIENT_BALANCE';
  /** Micro-units the request costs and the balance had. */
  needed: number;
  balance: number;
}

/** The error a refused request is answered with. */
export const refusalError = (r: AcceptRefusal) =>
  new DomainError('INSUFFICIENT_BALANCE', `Insufficient balance: this request costs ${fromMicros(r.needed)} and the balance is ${fromMicros(r.balance)}.`);

/**
 * Writes a batch of send requests in one transaction: for each request, in
 * arrival order, drop blocked receivers, check the balance, and record the
 * request, its messages and the debit. A request the balance cannot cover is
 * refused whole; the others of the batch are unaffected.
 */
export async function acceptBatch(tx: Transaction<Database>, dialect: 'sqlite' | 'postgres', inputs: AcceptInput[]): Promise<(AcceptResult | AcceptRefusal)[]> {
  const now = Date.now();
  const accountIds = [...new Set(inputs.map((i) => i.accountId))].sort((a, b) => a - b);
  const balances = await lockBalances(tx, dialect, accountIds);
  const blocked = await blockedSet(tx, inputs);
  const held = await heldBack(tx, inputs, now);

  const requests: Database['requests'][] = [];
  const messages: Required<NewMessage>[] = [];
  const ledger: { account_id: number; amount: number; reason: string; request_id: string; created_at: number }[] = [];
  const debits = new Map<number, number>();
  const outcomes: (AcceptResult | AcceptRefusal)[] = [];
  const smpp: SmppAccepted[] = [];

  for (const input of inputs) {
    const fare = input.route.fare_price;
    let cost = 0;
    let credits = 0;
    let blockedCount = 0;
    for (const item of input.items) {
      if (blocked.has(`${input.accountId}:${item.receiver}`)) blockedCount++;
      else {
        credits += item.segments;
        cost += item.segments * fare;
      }
    }
    const balance = balances.get(input.accountId) ?? 0;
    if (cost > balance || !balances.has(input.accountId)) {
      outcomes.push({ refused: 'INSUFFICIENT_BALANCE', needed: cost, balance });
      continue;
    }
    balances.set(input.accountId, balance - cost);
    debits.set(input.accountId, (debits.get(input.accountId) ?? 0) + cost);

    const requestId = newId();
    const scheduled = input.scheduleAt !== null && input.scheduleAt > now;
    const scheduleAt = scheduled && input.scheduleAt !== null ? input.scheduleAt : now;
    const handoff = scheduled ? undefined : input.handoff;
    const handoffConnector = handoff ? (handoff.connector ?? input.route.connector) : undefined;
    const handedOff: [number, string][] = [];
    // A token's text ends with its one-time code (src/tokens/mask.ts).
    const otp = input.source === 'token';
    requests.push({
      id: requestId,
      account_id: input.accountId,
      route_id: Number(input.route.id),
      channel: input.route.channel,
      product: input.route.product_name,
      content: input.content,
      tag: input.tag,
      custom: input.custom,
      sender: input.sender,
      source: input.source,
      message_count: input.items.length,
      cost,
      schedule_at: scheduleAt,
      created_at: now,
    });
    input.items.forEach((item, index) => {
      const isBlocked = blocked.has(`${input.accountId}:${item.receiver}`);
      const id = item.id ?? newId();
      const connector = item.connector ?? input.route.connector;
      if (input.smpp) smpp.push({ record: input.smpp, accountId: input.accountId, messageId: id, content: item.content, blocked: isBlocked, at: now });
      // The receivers held back on this message's connection (see heldBack; absent: no offer for it in the batch).
      const waiting = held.get(connector);
      let lease: Handoff | null = null;
      if (!isBlocked && !scheduled && waiting) {
        if (handoff && connector === handoffConnector && handedOff.length < handoff.count && !waiting.has(item.receiver)) lease = handoff;
        // A message left QUEUED holds back its receiver's later ones in this batch, as in the outbox.
        if (lease) handedOff.push([index, id]);
        else waiting.add(item.receiver);
      }
      messages.push({
        id,
        account_id: input.accountId,
        request_id: requestId,
        route_id: Number(input.route.id),
        connector,
        channel: input.route.channel,
        receiver: item.receiver,
        // A blocked message never reaches the carrier: its code is not kept.
        content: isBlocked && otp ? maskCode(item.content) : item.content,
        payload: item.payload,
        segments: item.segments,
        cost: isBlocked ? 0 : item.segments * fare,
        status: isBlocked ? 'BLOCKED' : scheduled ? 'SCHEDULED' : lease ? 'SENDING' : 'QUEUED',
        status_details: isBlocked ? 'receiver is on the account blocklist' : null,
        tag: item.tag,
        custom: item.custom,
        sender: input.sender,
        created_at: now,
        schedule_at: scheduleAt,
        due_at: lease ? now + lease.leaseMs : scheduleAt,
        lease_owner: lease ? lease.owner : null,
        attempts: lease ? 1 : 0,
        sent_at: null,
        carrier_id: null,
        status_at: now,
        otp: otp ? 1 : 0,
        moved: 0,
      });
    });
    if (cost > 0) ledger.push({ account_id: input.accountId, amount: -cost, reason: 'send', request_id: requestId, created_at: now });
    outcomes.push({ requestId, credits, cost, messages: input.items.length, blocked: blockedCount, scheduleAt, handedOff });
  }

  await insertRows(tx, dialect, 'requests', REQUEST_COLUMNS, requests);
  await insertRows(tx, dialect, 'messages', MESSAGE_COLUMNS, messages);
  await insertRows(tx, dialect, 'ledger', LEDGER_COLUMNS, ledger);
  await recordSmppSubmits(tx, dialect, smpp);
  for (const [accountId, amount] of debits) {
    if (amount > 0)
      await tx
        .updateTable('accounts')
        .set({ balance: sql`balance - ${amount}` })
        .where('id', '=', accountId)
        .execute();
  }
  return outcomes;
}

/** acceptBatch as a job (src/db/jobs.ts): `db.run(acceptJob, inputs)`. */
export const acceptJob = defineJob(import.meta.url, 'acceptJob', acceptBatch);

/**
 * Per connector offered a handoff, the receivers whose new messages must not
 * be handed off (they would overtake one waiting): every receiver when the
 * connector has due messages not claimed yet (the set is then null: nothing
 * is handed off), else those with a message waiting for a retry, and the
 * dispatcher's `holdBack`. Messages this batch leaves QUEUED are added as
 * it goes. Connectors without an offer are absent. Scheduled messages that
 * just came due and expired leases are not looked for: the claim takes them
 * within a poll, and they were due no earlier than the new messages' accept.
 */
async function heldBack(tx: Transaction<Database>, inputs: AcceptInput[], now: number): Promise<Map<string, Set<string> | null>> {
  const out = new Map<string, Set<string> | null>();
  for (const input of inputs) {
    if (!input.handoff) continue;
    const connector = input.handoff.connector ?? input.route.connector;
    if (out.has(connector)) continue;
    // Literal status: the partial index messages_waiting_idx (migration 007) serves both.
    const due = await tx
      .selectFrom('messages')
      .select('id')
      .where('connector', '=', connector)
      .where(sql<boolean>`status = 'QUEUED'`)
      .where('due_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    if (due) {
      out.set(connector, null);
      continue;
    }
    const retrying = await tx
      .selectFrom('messages')
      .select('receiver')
      .where('connector', '=', connector)
      .where(sql<boolean>`status = 'QUEUED'`)
      .where('due_at', '>', now)
      .execute();
    out.set(connector, new Set(retrying.map((r) => r.receiver)));
  }
  for (const input of inputs)
    if (input.handoff) for (const receiver of input.handoff.holdBack) out.get(input.handoff.connector ?? input.route.connector)?.add(receiver);
  return out;
}

async function blockedSet(tx: Transaction<Database>, inputs: AcceptInput[]): Promise<Set<string>> {
  const accountIds = [...new Set(inputs.map((i) => i.accountId))];
  const phones = [...new Set(inputs.flatMap((i) => i.items.map((m) => m.receiver)))];
  const set = new Set<string>();
  for (let i = 0; i < phones.length; i += 2000) {
    const rows = await tx
      .selectFrom('blocklist')
      .select(['account_id', 'phone'])
      .where('account_id', 'in', accountIds)
      .where('phone', 'in', phones.slice(i, i + 2000))
      .execute();
    for (const r of rows) set.add(`${r.account_id}:${r.phone}`);
  }
  return set;
}
