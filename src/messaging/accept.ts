import { sql, type Transaction } from 'kysely';
import { newId } from '../shared/ids.ts';
import type { Database, NewMessage, RouteRow } from '../db/tables.ts';
import { DomainError } from '../shared/errors.ts';
import { fromMicros } from '../billing/money.ts';
import { lockBalances } from '../billing/ledger.ts';
import { insertRows } from '../db/bulk.ts';

const REQUEST_COLUMNS = ['id', 'account_id', 'route_id', 'channel', 'product', 'content', 'tag', 'custom', 'sender', 'source', 'message_count', 'cost', 'schedule_at', 'created_at'] as const;
const MESSAGE_COLUMNS = [
  'id', 'account_id', 'request_id', 'route_id', 'connector', 'channel', 'receiver', 'content', 'payload', 'segments', 'cost', 'status', 'status_details',
  'tag', 'custom', 'sender', 'created_at', 'schedule_at', 'due_at', 'lease_owner', 'attempts', 'sent_at', 'carrier_id', 'status_at',
] as const;
const LEDGER_COLUMNS = ['account_id', 'amount', 'reason', 'request_id', 'created_at'] as const;
// A column added to messages or requests must be added above too (the compiler says so here).
type Unlisted<Row, Listed extends readonly unknown[]> = Exclude<keyof Row, Listed[number]>;
const everyColumn: [Unlisted<NewMessage, typeof MESSAGE_COLUMNS> | Unlisted<Database['requests'], typeof REQUEST_COLUMNS>] extends [never] ? true : never = true;
void everyColumn;

/** One message of a request, already validated and priced in segments. */
export interface AcceptItem {
  receiver: string;
  content: string;
  segments: number;
  tag: string | null;
  custom: string | null;
  payload: string | null;
}

export interface AcceptInput {
  accountId: number;
  route: RouteRow;
  source: 'gateway' | 'legacy' | 'token' | 'reply';
  /** Text shown in the requests report. */
  content: string;
  tag: string | null;
  custom: string | null;
  sender: string | null;
  /** Epoch ms; null = now. */
  scheduleAt: number | null;
  /** De-duplicated by receiver by the caller. */
  items: AcceptItem[];
}

export interface AcceptResult {
  requestId: string;
  /** SMS segments charged (blocked receivers excluded). */
  credits: number;
  /** Micro-units debited. */
  cost: number;
  messages: number;
  blocked: number;
}

const insufficient = (needed: number, balance: number) =>
  new DomainError(
    'INSUFFICIENT_BALANCE',
    `Insufficient balance: this request costs ${fromMicros(needed)} and the balance is ${fromMicros(balance)}.`,
  );

/**
 * Writes a batch of send requests in one transaction: for each request, in
 * arrival order, drop blocked receivers, check the balance, and record the
 * request, its messages and the debit. A request the balance cannot cover is
 * refused whole; the others of the batch are unaffected.
 */
export async function acceptBatch(tx: Transaction<Database>, dialect: 'sqlite' | 'postgres', inputs: AcceptInput[]): Promise<(AcceptResult | Error)[]> {
  const now = Date.now();
  const accountIds = [...new Set(inputs.map((i) => i.accountId))].sort((a, b) => a - b);
  const balances = await lockBalances(tx, dialect, accountIds);
  const blocked = await blockedSet(tx, inputs);

  const requests: Database['requests'][] = [];
  const messages: Required<NewMessage>[] = [];
  const ledger: { account_id: number; amount: number; reason: string; request_id: string; created_at: number }[] = [];
  const debits = new Map<number, number>();
  const outcomes: (AcceptResult | Error)[] = [];

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
      outcomes.push(insufficient(cost, balance));
      continue;
    }
    balances.set(input.accountId, balance - cost);
    debits.set(input.accountId, (debits.get(input.accountId) ?? 0) + cost);

    const requestId = newId();
    const scheduled = input.scheduleAt !== null && input.scheduleAt > now;
    const scheduleAt = scheduled && input.scheduleAt !== null ? input.scheduleAt : now;
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
    for (const item of input.items) {
      const isBlocked = blocked.has(`${input.accountId}:${item.receiver}`);
      messages.push({
        id: newId(),
        account_id: input.accountId,
        request_id: requestId,
        route_id: Number(input.route.id),
        connector: input.route.connector,
        channel: input.route.channel,
        receiver: item.receiver,
        content: item.content,
        payload: item.payload,
        segments: item.segments,
        cost: isBlocked ? 0 : item.segments * fare,
        status: isBlocked ? 'BLOCKED' : scheduled ? 'SCHEDULED' : 'QUEUED',
        status_details: isBlocked ? 'receiver is on the account blocklist' : null,
        tag: item.tag,
        custom: item.custom,
        sender: input.sender,
        created_at: now,
        schedule_at: scheduleAt,
        due_at: scheduleAt,
        lease_owner: null,
        attempts: 0,
        sent_at: null,
        carrier_id: null,
        status_at: now,
      });
    }
    if (cost > 0) ledger.push({ account_id: input.accountId, amount: -cost, reason: 'send', request_id: requestId, created_at: now });
    outcomes.push({ requestId, credits, cost, messages: input.items.length, blocked: blockedCount });
  }

  await insertRows(tx, dialect, 'requests', REQUEST_COLUMNS, requests);
  await insertRows(tx, dialect, 'messages', MESSAGE_COLUMNS, messages);
  await insertRows(tx, dialect, 'ledger', LEDGER_COLUMNS, ledger);
  for (const [accountId, amount] of debits) {
    if (amount > 0) await tx.updateTable('accounts').set({ balance: sql`balance - ${amount}` }).where('id', '=', accountId).execute();
  }
  return outcomes;
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
