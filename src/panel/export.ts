import type { Db } from '../db/database.ts';
import { receivedReplies, sentMessages, type ReportQuery } from '../messaging/reports.ts';
import { reportedContent } from '../tokens/mask.ts';

/** Rows read from the database per query: the most an export holds in memory at once. */
export const EXPORT_PAGE = 500;

export const SENT_COLUMNS = [
  'id',
  'receiver',
  'content',
  'status',
  'statusDetails',
  'createdAt',
  'sentAt',
  'requestId',
  'schedule',
  'custom',
  'tag',
  'product',
  'route',
] as const;
export const RECEIVED_COLUMNS = ['sender', 'content', 'receivedAt', 'messageId'] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break. Text a spreadsheet would run as a formula (starting with = + - @,
 * a tab or a carriage return) is prefixed with a quote mark.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const line = (fields: (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;
const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/**
 * The sent report as CSV lines, header first, newest first: every message
 * the filters of GET /reports/messages/sent match, read EXPORT_PAGE rows at
 * a time (keyset paging on created_at and id), so memory stays bounded
 * whatever the number of rows. Bad filters throw before the first line.
 */
export function sentCsv(db: Db, accountId: number, q: ReportQuery): AsyncGenerator<string> {
  const { base } = sentMessages(db.reports, accountId, q);
  async function* lines() {
    yield line([...SENT_COLUMNS]);
    let after = null as { createdAt: number; id: string } | null;
    for (;;) {
      const cursor: { createdAt: number; id: string } | null = after;
      const page = base
        .$if(cursor !== null, (b) =>
          b.where((eb) =>
            eb.or([
              eb('m.created_at', '<', cursor?.createdAt ?? 0),
              eb.and([eb('m.created_at', '=', cursor?.createdAt ?? 0), eb('m.id', '<', cursor?.id ?? '')]),
            ]),
          ),
        )
        .select([
          'm.id',
          'm.receiver',
          reportedContent('m').as('content'),
          'm.status',
          'm.status_details',
          'm.created_at',
          'm.sent_at',
          'm.request_id',
          'm.schedule_at',
          'm.custom',
          'm.tag',
          'r.product_name',
          'r.display_name',
        ])
        .orderBy('m.created_at', 'desc')
        .orderBy('m.id', 'desc')
        .limit(EXPORT_PAGE);
      // A turn a page: a long export takes turns with other accounts' reports.
      const rows = await db.report(accountId, () => page.execute());
      for (const m of rows) {
        yield line([
          m.id,
          m.receiver,
          m.content,
          m.status,
          m.status_details,
          iso(m.created_at),
          iso(m.sent_at),
          m.request_id,
          iso(m.schedule_at),
          m.custom,
          m.tag,
          m.product_name,
          m.display_name,
        ]);
      }
      const last = rows.at(-1);
      if (rows.length < EXPORT_PAGE || !last) return;
      after = { createdAt: Number(last.created_at), id: last.id };
    }
  }
  return lines();
}

/** The received report as CSV lines, header first, newest first (as sentCsv). */
export function receivedCsv(db: Db, accountId: number, q: ReportQuery): AsyncGenerator<string> {
  const { base } = receivedReplies(db.reports, accountId, q);
  async function* lines() {
    yield line([...RECEIVED_COLUMNS]);
    let after = null as { receivedAt: number; id: number } | null;
    for (;;) {
      const cursor: { receivedAt: number; id: number } | null = after;
      const page = base
        .$if(cursor !== null, (b) =>
          b.where((eb) =>
            eb.or([eb('received_at', '<', cursor?.receivedAt ?? 0), eb.and([eb('received_at', '=', cursor?.receivedAt ?? 0), eb('id', '<', cursor?.id ?? 0)])]),
          ),
        )
        .select(['id', 'sender', 'content', 'received_at', 'message_id'])
        .orderBy('received_at', 'desc')
        .orderBy('id', 'desc')
        .limit(EXPORT_PAGE);
      const rows = await db.report(accountId, () => page.execute());
      for (const r of rows) yield line([r.sender, r.content, iso(r.received_at), r.message_id]);
      const last = rows.at(-1);
      if (rows.length < EXPORT_PAGE || !last) return;
      after = { receivedAt: Number(last.received_at), id: Number(last.id) };
    }
  }
  return lines();
}
