/**
 * SMPP 3.4 time fields (schedule_delivery_time, validity_period), 16
 * characters `YYMMDDhhmmsstnnp`:
 * - absolute: t tenths of a second, nn the offset from UTC in quarter hours
 *   (00-48), p '+' (ahead of UTC) or '-' (behind);
 * - relative (p = 'R'): YY years, MM months, DD days, hh:mm:ss from now
 *   (t and nn are 0).
 * An empty field means "not given".
 */

/** Epoch ms of a time field; null when empty; 'invalid' when malformed. */
export function parseSmppTime(value: string, now: number = Date.now()): number | null | 'invalid' {
  if (value === '') return null;
  const m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d)(\d\d)([+\-R])$/.exec(value);
  if (!m) return 'invalid';
  const [yy, mo, dd, hh, mi, ss, t, nn] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  const p = m[9];
  if (p === 'R') {
    if (mi > 59 || ss > 59 || hh > 23) return 'invalid';
    const d = new Date(now);
    d.setUTCFullYear(d.getUTCFullYear() + yy, d.getUTCMonth() + mo, d.getUTCDate() + dd);
    return d.getTime() + ((hh * 60 + mi) * 60 + ss) * 1000;
  }
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59 || nn > 48) return 'invalid';
  const local = Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss, t * 100);
  if (new Date(local).getUTCDate() !== dd) return 'invalid';
  const offset = nn * 15 * 60_000;
  return p === '+' ? local - offset : local + offset;
}
