import { DateTime } from 'luxon';

/** Clock skew we forgive: a schedule date up to this far in the past means "now". */
const PAST_GRACE_MS = 60_000;
/** How far ahead a send may be scheduled. */
export const MAX_AHEAD_MS = 366 * 24 * 3600 * 1000;

/**
 * `scheduleDate` is `YYYY-MM-DD HH:mm:ss` in the account's time zone, or an
 * ISO 8601 value (with an offset it is taken as given). Returns epoch ms, or
 * an error text for the caller.
 */
export function parseScheduleDate(value: string, timezone: string, now = Date.now()): { at: number } | { error: string } {
  const text = value.trim();
  let dt = DateTime.fromFormat(text, 'yyyy-MM-dd HH:mm:ss', { zone: timezone });
  if (!dt.isValid) dt = DateTime.fromFormat(text, 'yyyy-MM-dd HH:mm', { zone: timezone });
  if (!dt.isValid) dt = DateTime.fromISO(text, { zone: timezone, setZone: true });
  if (!dt.isValid) {
    return { error: `scheduleDate: "${value}" is not a date; use YYYY-MM-DD HH:mm:ss (time zone ${timezone}) or ISO 8601 with an offset` };
  }
  const at = dt.toMillis();
  if (at < now - PAST_GRACE_MS) return { error: `scheduleDate: ${value} is in the past` };
  if (at > now + MAX_AHEAD_MS) return { error: `scheduleDate: ${value} is more than a year ahead` };
  return { at: Math.max(at, now) };
}

/** A report date filter: `YYYY-MM-DD` (a whole UTC day) or an ISO timestamp. */
export function parseReportDate(value: string, endOfDay: boolean): number | null {
  const day = DateTime.fromFormat(value.trim(), 'yyyy-MM-dd', { zone: 'utc' });
  if (day.isValid) return (endOfDay ? day.endOf('day') : day.startOf('day')).toMillis();
  const iso = DateTime.fromISO(value.trim(), { zone: 'utc' });
  return iso.isValid ? iso.toMillis() : null;
}
