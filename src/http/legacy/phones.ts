import { normalizeBrazilian } from '../../common/phone.ts';
import { badRequest } from './envelope.ts';

/** Phones per legacy request, after de-duplication. */
export const MAX_LEGACY_RECEIVERS = 100;

/**
 * `Receivers`: comma-separated (a list is accepted too), each area code +
 * number; spaces, a leading +, a leading 55 and brackets are tolerated
 * (docs/decisions.md). Any invalid number refuses the whole request, naming it.
 */
export function parseReceivers(value: string | (string | number)[] | undefined): string[] {
  const parts = (Array.isArray(value) ? value.map(String) : [value ?? ''])
    .flatMap((v) => v.replace(/^\s*\[|\]\s*$/g, '').split(/[,;\n]/))
    .map((p) => p.replace(/["']/g, '').trim())
    .filter(Boolean);
  if (parts.length === 0) throw badRequest((t) => t.noReceivers);
  const invalid: string[] = [];
  const phones: string[] = [];
  for (const p of parts) {
    const phone = normalizeBrazilian(p);
    if (phone) phones.push(phone);
    else invalid.push(p);
  }
  if (invalid.length) throw badRequest((t) => t.invalidReceivers(invalid.slice(0, 10).join(', ')));
  const unique = [...new Set(phones)];
  if (unique.length > MAX_LEGACY_RECEIVERS) throw badRequest((t) => t.tooManyReceivers(unique.length, MAX_LEGACY_RECEIVERS));
  return unique;
}

/** One phone field (PhoneNumber, ContactPhone); missing or invalid is a 400. */
export function parsePhone(value: string | number | undefined | null): string {
  const text = value === undefined || value === null ? '' : String(value).trim();
  if (!text) throw badRequest((t) => t.phoneMissing);
  const phone = normalizeBrazilian(text);
  if (!phone) throw badRequest((t) => t.phoneInvalid(text));
  return phone;
}
