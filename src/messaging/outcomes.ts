import type { Transaction } from 'kysely';
import type { Database, MessageStatus } from '../db/tables.ts';
import type { Receipt, ReceiptStatus, SubmitResult } from '../carriers/carrier.ts';
import { fallBackToSms } from '../rcs/fallback.ts';
import type { Dialect } from '../db/database.ts';
import { param, rowsText, runRaw, sizedChunks } from '../db/bulk.ts';
import { logStatuses } from '../events/status-log.ts';
import { defineJob } from '../db/jobs.ts';
import { lockBalances, refund } from '../billing/ledger.ts';
import { failOverMessage } from '../routing/failover.ts';

/** One thing that changes a message after it was accepted. */
export type Outcome =
  | { kind: 'result'; connector: string; messageId: string; result: SubmitResult; attempts: number }
  | { kind: 'receipt'; connector: string; receipt: Receipt };

/** `receipt`: its final receipt came in the same batch (see writeOutcomes): written with the answer, in one step. */
type Accepted = { connector: string; messageId: string; carrierIds: string[]; receipt?: Receipt };
type Refused = { messageId: string; result: Exclude<SubmitResult, { ok: true }>; attempts: number };
type Known = { messageId: string; status: MessageStatus; details: string; at: number };

const FINAL_FAILURES: MessageStatus[] = ['UNDELIVERED', 'EXPIRED', 'FAILED'];
/** Rows per statement: far below both databases' parameter limits. */
const CHUNK = 512;

/**
 * A batch of outcomes as the job takes it: one flat array, WIDTH values an
 * outcome. Structured cloning (to the SQLite thread) copies an object
 * property by property, names included; flat, a batch crosses in less than
 * half the time (measured: about 0.4 against 0.9 µs an outcome, both ways,
 * two outcomes a message).
 */
export type PackedOutcomes = (string | number | string[] | null)[];
const WIDTH = 6;
const ACCEPTED = 0;
const RETRY = 1;
const FAILED = 2;
const NO_RCS = 3;
const RECEIPT = 4;
/** A retry that may move to the route's next leg (SubmitResult `failover`). */
const FAILOVER = 5;

export function packOutcomes(outcomes: Outcome[]): PackedOutcomes {
  const out: PackedOutcomes = [];
  for (const o of outcomes) {
    if (o.kind === 'receipt') out.push(RECEIPT, o.connector, o.receipt.carrierId, o.receipt.status, o.receipt.details, o.receipt.at.getTime());
    else if (o.result.ok) out.push(ACCEPTED, o.connector, o.messageId, o.result.carrierIds, o.attempts, null);
    else {
      const kind = o.result.retry ? (o.result.failover ? FAILOVER : RETRY) : o.result.noRcs ? NO_RCS : FAILED;
      out.push(kind, o.connector, o.messageId, o.result.error, o.attempts, null);
    }
  }
  return out;
}

function unpackOutcomes(packed: PackedOutcomes): Outcome[] {
  const out: Outcome[] = [];
  for (let i = 0; i < packed.length; i += WIDTH) {
    const kind = packed[i] as number;
    const connector = packed[i + 1] as string;
    const id = packed[i + 2] as string;
    if (kind === RECEIPT) {
      const receipt: Receipt = {
        carrierId: id,
        status: packed[i + 3] as ReceiptStatus,
        details: packed[i + 4] as string,
        at: new Date(packed[i + 5] as number),
      };
      out.push({ kind: 'receipt', connector, receipt });
      continue;
    }
    const error = packed[i + 3] as string;
    const result: SubmitResult =
      kind === ACCEPTED
        ? { ok: true, carrierIds: packed[i + 3] as string[] }
        : kind === RETRY
          ? { ok: false, retry: true, error }
          : kind === FAILOVER
            ? { ok: false, retry: true, error, failover: true }
            : kind === NO_RCS
              ? { ok: false, retry: false, error, noRcs: true }
              : { ok: false, retry: false, error };
    out.push({ kind: 'result', connector, messageId: id, result, attempts: packed[i + 4] as number });
  }
  return out;
}

/** Seconds before a message whose send must be retried is due again. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.min(attempts, 6));
}

/**
 * Writes a batch of submit results and receipts in one transaction, set-based:
 * the accepted results of a batch are one UPDATE plus one INSERT per table,
 * and its receipts are one lookup plus one UPDATE per kind, whatever the
 * batch size. Refusals and retries are rare and written one by one.
 * Results are written before receipts, so a receipt that came in the same
 * batch as its message's submit answer finds the carrier id. Takes batches
 * packed by packOutcomes (usually one), one answer each.
 */
/** writeOutcomes as a job (src/db/jobs.ts): one packed batch an item. */
export const outcomesJob = defineJob(import.meta.url, 'outcomesJob', (tx, dialect, packed: PackedOutcomes[]) => writeOutcomes(tx, dialect, packed));

export async function writeOutcomes(tx: Transaction<Database>, dialect: Dialect, packed: PackedOutcomes[]): Promise<undefined[]> {
  const outcomes = packed.flatMap(unpackOutcomes);
  const now = Date.now();
  const accepted: Accepted[] = [];
  const refused: Refused[] = [];
  let receipts: { connector: string; receipt: Receipt }[] = [];
  for (const o of outcomes) {
    if (o.kind === 'receipt') receipts.push(o);
    else if (o.result.ok) accepted.push({ connector: o.connector, messageId: o.messageId, carrierIds: o.result.carrierIds });
    else refused.push({ messageId: o.messageId, result: o.result, attempts: o.attempts });
  }
  if (accepted.length && receipts.length)
    receipts = withTheirAnswers(accepted, receipts, (await runRaw(tx, 'select 1 from pending_receipts limit 1', [])).length > 0);
  for (const chunk of sizedChunks(accepted, CHUNK)) await writeAccepted(tx, dialect, chunk, now);
  await lockRefundedBalances(tx, dialect, refused);
  for (const r of refused) await writeRefused(tx, r, now);
  for (const [connector, list] of groupBy(receipts, (r) => r.connector))
    await writeReceipts(
      tx,
      dialect,
      connector,
      list.map((r) => r.receipt),
    );
  return packed.map(() => undefined);
}

/**
 * A carrier that answers receipts at once (most SMSCs for most messages)
 * sends one within milliseconds of the submit answer, so both often meet in
 * one batch. A final receipt meeting the answer of a one-part message is
 * then written with it: one UPDATE of the message to its final state
 * instead of SENT then a lookup of its carrier id and a second UPDATE (the
 * status log still shows SENT, then the final state). Not when receipts
 * that overtook their answers are waiting (pending_receipts): those must be
 * applied first, in the order they came. Returns the receipts left to
 * write the usual way.
 */
function withTheirAnswers(accepted: Accepted[], receipts: { connector: string; receipt: Receipt }[], overtaken: boolean) {
  if (overtaken) return receipts;
  const key = (connector: string, carrierId: string) => `${connector}\u0000${carrierId}`;
  const count = new Map<string, number>();
  for (const r of receipts) {
    const k = key(r.connector, r.receipt.carrierId);
    count.set(k, (count.get(k) ?? 0) + 1);
  }
  const answered = new Map<string, Accepted>();
  for (const a of accepted) if (a.carrierIds.length === 1) answered.set(key(a.connector, a.carrierIds[0] as string), a);
  return receipts.filter((r) => {
    const k = key(r.connector, r.receipt.carrierId);
    const answer = answered.get(k);
    if (!answer || count.get(k) !== 1 || r.receipt.status === 'SENT') return true;
    answer.receipt = r.receipt;
    return false;
  });
}

async function writeAccepted(tx: Transaction<Database>, dialect: Dialect, items: Accepted[], now: number) {
  const p = (k: number) => param(dialect, k);
  const updated = await runRaw<{ id: string; account_id: number }>(
    tx,
    `update messages set status = v.column3, carrier_id = v.column2, sent_at = ${p(1)}, status_at = v.column5, status_details = v.column4, lease_owner = null
    from (values ${rowsText(dialect, items.length, 5, 1, [null, null, null, null, 'bigint'])}) as v
    where messages.id = v.column1 and messages.status = 'SENDING'
    returning messages.id, messages.account_id`,
    [
      now,
      ...items.flatMap((a) =>
        a.receipt
          ? [a.messageId, a.carrierIds[0] ?? null, a.receipt.status, a.receipt.details, a.receipt.at.getTime()]
          : [a.messageId, a.carrierIds[0] ?? null, 'SENT', null, now],
      ),
    ],
  );
  if (updated.length === 0) return;
  const written = new Set(updated.map((r) => r.id));
  const sent = items.filter((a) => written.has(a.messageId));
  const accountOf = new Map(updated.map((r) => [r.id, Number(r.account_id)]));
  const finals = sent.flatMap((a) => (a.receipt ? [{ a, receipt: a.receipt }] : []));
  await logStatuses(tx, [
    ...updated.map((r) => ({ account_id: Number(r.account_id), message_id: r.id, status: 'SENT' as const, details: null, at: now })),
    ...finals.map(({ a, receipt }) => ({
      account_id: accountOf.get(a.messageId) as number,
      message_id: a.messageId,
      status: receipt.status,
      details: receipt.details,
      at: receipt.at.getTime(),
    })),
  ]);
  // One row per (connector, carrier id): a carrier repeating an id points it at the latest message.
  const links = new Map<string, { connector: string; carrier_id: string; message_id: string }>();
  for (const a of sent)
    for (const id of a.carrierIds) links.set(`${a.connector}\u0000${id}`, { connector: a.connector, carrier_id: id, message_id: a.messageId });
  if (links.size === 0) return;
  const list = [...links.values()];
  for (const chunk of sizedChunks(list, CHUNK))
    await runRaw(
      tx,
      `insert into carrier_ids (connector, carrier_id, message_id) values ${rowsText(dialect, chunk.length, 3)}
      on conflict (connector, carrier_id) do update set message_id = excluded.message_id`,
      chunk.flatMap((l) => [l.connector, l.carrier_id, l.message_id]),
    );

  // Receipts that overtook the submit response wait in pending_receipts (SMPP allows it); mostly there are none.
  const waiting = await runRaw(tx, 'select 1 from pending_receipts limit 1', []);
  if (waiting.length === 0) return;
  for (const [connector, ofConnector] of groupBy(list, (l) => l.connector)) {
    const ids = ofConnector.map((l) => l.carrier_id);
    const early = await tx
      .selectFrom('pending_receipts')
      .selectAll()
      .where('connector', '=', connector)
      .where('carrier_id', 'in', ids)
      .orderBy('received_at')
      .execute();
    if (early.length === 0) continue;
    await tx.deleteFrom('pending_receipts').where('connector', '=', connector).where('carrier_id', 'in', ids).execute();
    const messageOf = new Map(ofConnector.map((l) => [l.carrier_id, l.message_id]));
    await applyReceipts(
      tx,
      dialect,
      early.map((r) => ({ messageId: messageOf.get(r.carrier_id) ?? '', status: r.status as MessageStatus, details: r.details, at: r.received_at })),
    );
  }
}

/**
 * A refusal given up on refunds its message's account (or charges it for an
 * SMS fallback). The accept batch locks the accounts of its requests in id
 * order; refunds of several accounts in the order their refusals came could
 * hold one of those rows while waiting for another, a deadlock on
 * PostgreSQL. So their accounts are locked first, in id order, the same way.
 */
async function lockRefundedBalances(tx: Transaction<Database>, dialect: Dialect, refused: Refused[]): Promise<void> {
  const final = refused.filter((r) => !r.result.retry).map((r) => r.messageId);
  if (dialect !== 'postgres' || final.length === 0) return;
  const accounts = await tx.selectFrom('messages').select('account_id').distinct().where('id', 'in', final).execute();
  if (accounts.length > 1)
    await lockBalances(
      tx,
      dialect,
      accounts.map((a) => Number(a.account_id)),
    );
}

async function writeRefused(tx: Transaction<Database>, { messageId, result, attempts }: Refused, now: number) {
  if (result.retry) {
    await tx
      .updateTable('messages')
      .set({ status: 'QUEUED', due_at: now + retryDelayMs(attempts), status_at: now, status_details: result.error, lease_owner: null })
      .where('id', '=', messageId)
      .where('status', '=', 'SENDING')
      .execute();
    // Another leg of its route may carry it now (src/routing/failover.ts).
    if (result.failover) await failOverMessage(tx, messageId, now);
    return;
  }
  if (result.noRcs && (await fallBackToSms(tx, messageId, now))) return;
  const row = await tx
    .updateTable('messages')
    .set({ status: 'FAILED', status_details: result.error, status_at: now, lease_owner: null })
    .where('id', '=', messageId)
    .where('status', '=', 'SENDING')
    .returning(['account_id', 'cost', 'request_id'])
    .executeTakeFirst();
  if (!row) return;
  await logStatuses(tx, [{ account_id: row.account_id, message_id: messageId, status: 'FAILED', details: result.error, at: now }]);
  await refund(tx, row.account_id, row.cost, row.request_id, 'refund: rejected by carrier');
}

/** Receipts of one connector: matched to their messages by carrier id; the others wait for their submit answer. */
async function writeReceipts(tx: Transaction<Database>, dialect: Dialect, connector: string, receipts: Receipt[]) {
  const ids = [...new Set(receipts.map((r) => r.carrierId))];
  const messageOf = new Map<string, string>();
  for (const chunk of sizedChunks(ids, CHUNK)) {
    const links = await runRaw<{ carrier_id: string; message_id: string }>(
      tx,
      `select c.carrier_id, c.message_id from (values ${rowsText(dialect, chunk.length, 1)}) as v
      join carrier_ids c on c.connector = ${param(dialect, chunk.length + 1)} and c.carrier_id = v.column1`,
      [...chunk, connector],
    );
    for (const l of links) messageOf.set(l.carrier_id, l.message_id);
  }
  const known: Known[] = [];
  const unknown: Receipt[] = [];
  for (const r of receipts) {
    const messageId = messageOf.get(r.carrierId);
    if (messageId === undefined) unknown.push(r);
    else known.push({ messageId, status: r.status, details: r.details, at: r.at.getTime() });
  }
  if (unknown.length) {
    await tx
      .insertInto('pending_receipts')
      .values(unknown.map((r) => ({ connector, carrier_id: r.carrierId, status: r.status, details: r.details, received_at: r.at.getTime() })))
      .execute();
  }
  await applyReceipts(tx, dialect, known);
}

/**
 * Receipts move a message forward only: SENT -> final. For a message sent in
 * parts, a failed part outweighs a delivered one; a final failure is kept.
 * Set-based in rounds: each round takes the next receipt of every message (a
 * message's receipts apply in the order they came) and is one UPDATE per
 * kind of move plus one INSERT into status_log.
 */
async function applyReceipts(tx: Transaction<Database>, dialect: Dialect, receipts: Known[]) {
  let rest = receipts.filter((r) => r.status !== 'SENT');
  while (rest.length) {
    const round = new Map<string, Known>();
    const later: Known[] = [];
    for (const r of rest) {
      if (round.has(r.messageId)) later.push(r);
      else round.set(r.messageId, r);
    }
    const moved: (Known & { accountId: number })[] = [];
    const [failures, deliveries] = partition([...round.values()], (r) => FINAL_FAILURES.includes(r.status));
    if (failures.length) moved.push(...(await moveStatus(tx, dialect, failures, "'SENT', 'DELIVERED'")));
    if (deliveries.length) moved.push(...(await moveStatus(tx, dialect, deliveries, "'SENT'")));
    await logStatuses(
      tx,
      moved.map((r) => ({ account_id: r.accountId, message_id: r.messageId, status: r.status, details: r.details, at: r.at })),
    );
    rest = later;
  }
}

/** Set-based UPDATEs for receipts of distinct messages; returns those that moved their message, with its account. */
async function moveStatus(tx: Transaction<Database>, dialect: Dialect, receipts: Known[], from: string): Promise<(Known & { accountId: number })[]> {
  const moved: { id: string; account_id: number }[] = [];
  for (const chunk of sizedChunks(receipts, CHUNK))
    moved.push(
      ...(await runRaw<{ id: string; account_id: number }>(
        tx,
        `update messages set status = v.column2, status_details = v.column3, status_at = v.column4
        from (values ${rowsText(dialect, chunk.length, 4, 0, [null, null, null, 'bigint'])}) as v
        where messages.id = v.column1 and messages.status in (${from})
        returning messages.id, messages.account_id`,
        chunk.flatMap((r) => [r.messageId, r.status, r.details, r.at]),
      )),
    );
  const accountOf = new Map(moved.map((r) => [r.id, Number(r.account_id)]));
  return receipts.flatMap((r) => {
    const accountId = accountOf.get(r.messageId);
    return accountId === undefined ? [] : [{ ...r, accountId }];
  });
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item));
    if (list) list.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
