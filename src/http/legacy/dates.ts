import { DateTime } from 'luxon';
import { parseScheduleDate } from '../../messaging/schedule.ts';
import { badRequest } from './envelope.ts';

/** Brazilian clients write dates day first: `31/12/2025 08:00` becomes `2025-12-31 08:00`. */
function dayFirst(value: string): string {
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(.*)$/.exec(value.trim());
  if (!m) return value.trim();
  const [, d = '', mo = '', y = '', rest = ''] = m;
  return `${y}-${mo.padStart(2, '0')}-${d.padStart(2, '0')}${rest}`;
}

/** The forms parseScheduleDate reads, to tell an unreadable date from a refused one. */
function readable(text: string, timezone: string): DateTime | null {
  for (const format of ['yyyy-MM-dd HH:mm:ss', 'yyyy-MM-dd HH:mm']) {
    const dt = DateTime.fromFormat(text, format, { zone: timezone });
    if (dt.isValid) return dt;
  }
  const iso = DateTime.fromISO(text, { zone: timezone, setZone: true });
  return iso.isValid ? iso : null;
}

/** ScheduleDate: a future moment, in the account's time zone unless it carries an offset. */
export function scheduleAt(value: string, timezone: string): number {
  const text = dayFirst(value);
  const parsed = parseScheduleDate(text, timezone);
  if ('at' in parsed) return parsed.at;
  const dt = readable(text, timezone);
  if (!dt) throw badRequest((t) => t.scheduleInvalid(value));
  if (dt.toMillis() < Date.now()) throw badRequest((t) => t.schedulePast(value));
  throw badRequest((t) => t.scheduleTooFar(value));
}

/** A report date: a whole day in the account's time zone, or an exact ISO moment. */
export function reportDay(field: string, value: string, timezone: string, endOfDay: boolean): number {
  const text = dayFirst(value);
  const day = DateTime.fromFormat(text, 'yyyy-MM-dd', { zone: timezone });
  if (day.isValid) return (endOfDay ? day.endOf('day') : day.startOf('day')).toMillis();
  const exact = DateTime.fromFormat(text, 'yyyy-MM-dd HH:mm:ss', { zone: timezone });
  if (exact.isValid) return exact.toMillis();
  const iso = DateTime.fromISO(text, { zone: timezone });
  if (iso.isValid) return iso.toMillis();
  throw badRequest((t) => t.dateInvalid(field, value));
}

/**
 * StartDate/EndDate of a legacy report, as account-local days. Without
 * them: the last `defaultDays` days up to now. At most `maxDays` long.
 */
export function reportRange(q: { StartDate?: string | undefined; EndDate?: string | undefined }, timezone: string, defaultDays: number, maxDays: number) {
  const to = q.EndDate ? reportDay('EndDate', q.EndDate, timezone, true) : Date.now();
  const from = q.StartDate
    ? reportDay('StartDate', q.StartDate, timezone, false)
    : DateTime.fromMillis(to, { zone: timezone }).minus({ days: defaultDays }).startOf('day').toMillis();
  if (from > to) throw badRequest((t) => t.dateOrder);
  if (to - from > (maxDays + 1) * 86_400_000) throw badRequest((t) => t.rangeTooLong(maxDays));
  return { from, to };
}

/** Dates in answers: ISO 8601 with the account's offset, e.g. 2025-05-13T10:00:00-03:00. */
export function formatDate(ms: number | null, timezone: string): string | null {
  if (ms === null) return null;
  return DateTime.fromMillis(Number(ms), { zone: timezone }).startOf('second').toISO({ suppressMilliseconds: true });
}
