// The `max` metadata: the default (`min`) one knows each country's number
// lengths but not its ranges, so its isValid() is no stricter than
// isPossible(). Parsing with `max` costs about 7 µs a new number (up to
// 40 µs in a loaded server), so Brazilian numbers, most of the traffic,
// take a fast path built from the same metadata, and the rest is memoized.
import { Metadata } from 'libphonenumber-js/core';
import { getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import maxMetadata from 'libphonenumber-js/max/metadata';

/**
 * Phone numbers must be valid, not merely possible: a number is taken only
 * when it falls in a range its country assigns (libphonenumber's isValid()).
 * "Possible" (the right length for some country) let a Brazilian number
 * written without 55 (`11987652003`) through as a number of another
 * country (+1 198...), sent and charged there.
 *
 * The fast path keeps that rule: it tests Brazil's fixed-line and mobile
 * ranges as libphonenumber would, and only ever answers "valid"; whatever
 * it does not take goes through libphonenumber itself.
 */

/**
 * The numbering plan methods the fast path reads: libphonenumber's Metadata
 * class has them (its typings list only a few). Read from `core` with the
 * `max` metadata given, the one parsePhoneNumberFromString below uses (the
 * CommonJS build of `libphonenumber-js/max` does not export Metadata).
 */
interface Plan {
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  IDDPrefix(): string;
  hasTypes(): boolean;
  type(name: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}

const BRAZIL = getCountryCallingCode('BR');

/**
 * Builds, from libphonenumber's own BR metadata, the test isValid() applies
 * to a national number: the whole-country pattern, then a type pattern for
 * a length that type allows. Only fixed-line and mobile ranges (the other
 * types are rare here and go the slow way). Numbers that parsing could
 * rewrite (a national prefix or carrier code, 0... or 90... in Brazil) are
 * left to libphonenumber. If the metadata is not shaped as expected, the
 * fast path answers nothing.
 */
function brazilianRanges(): { national: (digits: string) => boolean; dialPrefix: RegExp } {
  const none = { national: () => false, dialPrefix: /^/ };
  try {
    const metadata = new Metadata(maxMetadata);
    metadata.selectNumberingPlan('BR');
    const plan = metadata.numberingPlan as unknown as Plan | undefined;
    if (!plan?.hasTypes()) return none;
    const whole = new RegExp(`^(?:${plan.nationalNumberPattern()})$`);
    const rewritten = new RegExp(`^(?:${plan.nationalPrefixForParsing() || '(?!)'})`);
    const ranges: { lengths: number[]; pattern: RegExp }[] = [];
    for (const name of ['FIXED_LINE', 'MOBILE']) {
      const type = plan.type(name);
      const pattern = type?.pattern();
      const lengths = type?.possibleLengths();
      if (!pattern || !lengths?.length) return none;
      ranges.push({ lengths, pattern: new RegExp(`^(?:${pattern})$`) });
    }
    return {
      national: (digits) => !rewritten.test(digits) && whole.test(digits) && ranges.some((r) => r.lengths.includes(digits.length) && r.pattern.test(digits)),
      dialPrefix: new RegExp(`^(?:${plan.IDDPrefix()})`),
    };
  } catch {
    // A libphonenumber-js release that reshaped its Metadata class.
    return none;
  }
}

const brazil = brazilianRanges();

/**
 * True only when `national` (a Brazilian number after 55: area code +
 * number, digits only) is certainly valid, i.e. when
 * parsePhoneNumberFromString('+55' + national).isValid() is true. False
 * means "not sure", never "invalid".
 */
export function certainlyValidBrazilian(national: string): boolean {
  return brazil.national(national);
}

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
  if (digits.startsWith(BRAZIL) && certainlyValidBrazilian(digits.slice(BRAZIL.length))) return digits;
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
  // A number JSON cannot write back (1e400 reads as Infinity) is shown as the number it became, not as null.
  const shown = /^\+?\d+$/.test(text) || (typeof value === 'number' && !Number.isFinite(value)) ? text : (JSON.stringify(value) ?? String(value));
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
  const national = digits.length >= 12 && digits.startsWith('55') ? digits.slice(2) : digits;
  // Parsed as a national number, digits starting with an international
  // dialling prefix or with 55 may be read otherwise: those go the slow way.
  if (!national.startsWith(BRAZIL) && !brazil.dialPrefix.test(national) && certainlyValidBrazilian(national)) return `55${national}`;
  const known = brazilian.get(digits);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(national, 'BR');
  return brazilian.set(digits, parsed !== undefined && parsed.countryCallingCode === '55' && parsed.isValid() ? `55${parsed.nationalNumber}` : null);
}
