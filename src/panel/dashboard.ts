import { sql } from 'kysely';
import type { Executor } from '../db/executor.ts';
import { fromMicros } from '../billing/money.ts';
import { notFound } from '../common/errors.ts';

const DAY_MS = 86_400_000;
/** Days of the per-day chart, today included. */
export const CHART_DAYS = 14;
const WEEK_DAYS = 7;
const LATEST_REPLIES = 10;

export interface Dashboard {
  balance: number;
  today: Record<string, number>;
  week: Record<string, number>;
  perDay: { day: string; status: string; count: number }[];
  replies: { id: string; from: string; text: string; receivedAt: string }[];
}

const dayOf = (dayNumber: number) => new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);

/**
 * The account panel's first page: the balance, messages by status today,
 * over the last 7 days and per day over the last 14 (UTC days, by the
 * time each message was accepted), and the latest replies.
 */
export async function dashboard(db: Executor, accountId: number, now: number): Promise<Dashboard> {
  const account = await db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw notFound(`Account ${accountId}`);
  const todayNumber = Math.floor(now / DAY_MS);
  const from = (todayNumber - (CHART_DAYS - 1)) * DAY_MS;
  // Integer division on both dialects (integer columns and literal): the UTC day number.
  const day = sql<number | string>`m.created_at / ${sql.lit(DAY_MS)}`;
  const rows = await db
    .selectFrom('messages as m')
    .select([day.as('day'), 'm.status', sql<number | string>`count(*)`.as('n')])
    .where('m.account_id', '=', accountId)
    .where('m.created_at', '>=', from)
    .groupBy([day, 'm.status'])
    .execute();
  const today: Record<string, number> = {};
  const week: Record<string, number> = {};
  const perDay = rows
    .map((r) => ({ dayNumber: Math.floor(Number(r.day)), status: r.status as string, count: Number(r.n) }))
    .sort((a, b) => a.dayNumber - b.dayNumber || a.status.localeCompare(b.status));
  for (const r of perDay) {
    if (r.dayNumber === todayNumber) today[r.status] = (today[r.status] ?? 0) + r.count;
    if (r.dayNumber > todayNumber - WEEK_DAYS) week[r.status] = (week[r.status] ?? 0) + r.count;
  }
  const replies = await db
    .selectFrom('replies')
    .select(['id', 'sender', 'content', 'received_at'])
    .where('account_id', '=', accountId)
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(LATEST_REPLIES)
    .execute();
  return {
    balance: fromMicros(Number(account.balance)),
    today,
    week,
    perDay: perDay.map((r) => ({ day: dayOf(r.dayNumber), status: r.status, count: r.count })),
    replies: replies.map((r) => ({ id: String(r.id), from: r.sender, text: r.content, receivedAt: new Date(Number(r.received_at)).toISOString() })),
  };
}
