import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * Receivers are international numbers without separators (spec 2.2:
 * 55 + area code + number). Returns the digits, or null when the value is
 * not a possible phone number.
 */
export function normalizeInternational(value: string | number): string | null {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) && value > 0 ? String(value) : '') : value.trim();
  const digits = text.replace(/^\+/, '');
  if (!/^\d{8,15}$/.test(digits)) return null;
  const known = possible.get(digits);
  if (known !== undefined) return known ? digits : null;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  const ok = parsed !== undefined && parsed.isPossible();
  // Campaigns send to the same numbers again and again: parsing costs more than the rest of a send's checks.
  if (possible.size >= 100_000) possible.clear();
  possible.set(digits, ok);
  return ok ? digits : null;
}

/** Digits -> whether they are a possible international number; bounded. */
const possible = new Map<string, boolean>();

/**
 * Brazilian numbers given as area code + number (legacy interface, child
 * users): tolerates separators, a leading +, a leading 55 and brackets.
 */
export function normalizeBrazilian(value: string): string | null {
  const digits = value.replace(/[\s()[\]\-.+]/g, '');
  if (!/^\d+$/.test(digits)) return null;
  const national = digits.length >= 12 && digits.startsWith('55') ? digits.slice(2) : digits;
  const parsed = parsePhoneNumberFromString(national, 'BR');
  if (!parsed || !parsed.isPossible() || parsed.countryCallingCode !== '55') return null;
  return `55${parsed.nationalNumber}`;
}
