// The `max` metadata: the default (`min`) one knows each country's number
// lengths but not its ranges, so its isValid() is no stricter than
// isPossible(). Parsing with `max` costs the same (about 6 µs a number) and
// results are memoized below.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Phone numbers must be valid, not merely possible: a number is taken only
 * when it falls in a range its country assigns (libphonenumber's isValid()).
 * "Possible" (the right length for some country) let a Brazilian number
 * written without 55 (`11987652003`) through as a number of another
 * country (+1 198...), sent and charged there.
 */

/** A bounded memo: campaigns send to the same numbers again and again, and parsing costs more than the rest of a send's checks. */
class Memo {
  private readonly map = new Map<string, string | null>();
  get(key: string): string | null | undefined {
    return this.map.get(key);
  }
  set(key: string, value: string | null): string | null {
    if (this.map.size >= 100_000) this.map.clear();
    this.map.set(key, value);
    return value;
  }
}

const international = new Memo();
const brazilian = new Memo();

/**
 * Receivers are international numbers without separators (country code +
 * number; for Brazil 55 + area code + number), given as digits or an
 * integer, a leading + tolerated. Returns the digits, or null when the
 * value is not a valid international number.
 */
export function normalizeInternational(value: string | number): string | null {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) && value > 0 ? String(value) : '') : value.trim();
  const digits = text.replace(/^\+/, '');
  if (!/^\d{8,15}$/.test(digits)) return null;
  const known = international.get(digits);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return international.set(digits, parsed?.isValid() ? digits : null);
}

/**
 * Why `value` is not a valid international number, for an error message
 * (the caller puts the field name before it). When its digits are a valid
 * Brazilian number written without the country code, the text says so and
 * shows the number to send instead.
 */
export function internationalProblem(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const shown = /^\+?\d+$/.test(text) ? text : (JSON.stringify(value) ?? String(value));
  const digits = text.replace(/^\+/, '');
  const asBrazilian = /^\d{10,11}$/.test(digits) ? normalizeBrazilian(digits) : null;
  if (asBrazilian) return `${shown} is not a valid international number: Brazilian numbers start with 55, e.g. ${asBrazilian}`;
  return `${shown} is not a valid international number (country code + number, no separators, e.g. 5511999998888)`;
}

/**
 * Brazilian numbers given as area code + number (legacy interface, child
 * users): tolerates separators, a leading +, a leading 55 and brackets.
 * Returns 55 + area code + number when the number is valid, else null.
 */
export function normalizeBrazilian(value: string): string | null {
  const digits = value.replace(/[\s()[\]\-.+]/g, '');
  if (!/^\d{1,20}$/.test(digits)) return null;
  const known = brazilian.get(digits);
  if (known !== undefined) return known;
  const national = digits.length >= 12 && digits.startsWith('55') ? digits.slice(2) : digits;
  const parsed = parsePhoneNumberFromString(national, 'BR');
  return brazilian.set(digits, parsed !== undefined && parsed.countryCallingCode === '55' && parsed.isValid() ? `55${parsed.nationalNumber}` : null);
}
