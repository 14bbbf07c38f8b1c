import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { certainlyValidBrazilian, normalizeBrazilian, normalizeInternational } from '../src/common/phone.ts';
import { seededRandom } from './seeded-random.ts';

/**
 * The Brazilian fast path may only ever agree with libphonenumber: checked
 * over a seeded sample of numbers starting with 55, most shaped like real
 * ones (every area code, 8- and 9-digit subscriber numbers with every
 * leading digit), the rest near misses and random digits.
 */

const random = seededRandom(20240611);
const digit = () => String(Math.floor(random() * 10));
const digits = (n: number) => Array.from({ length: n }, digit).join('');

interface Sample {
  digits: string;
  /** Area code + an 8- or 9-digit subscriber number: the shapes the coverage figure counts. */
  realistic: boolean;
}

/** Realistic shapes cycle through every area code 11-99, both subscriber lengths and every leading digit. */
function sample(count: number): Sample[] {
  const out: Sample[] = [];
  let shape = 0;
  for (let i = 0; i < count; i++) {
    const kind = i % 10;
    if (kind < 5) {
      const area = 11 + (shape % 89);
      const length = 8 + (Math.floor(shape / 89) % 2);
      const lead = Math.floor(shape / 178) % 10;
      shape++;
      out.push({ digits: `55${area}${lead}${digits(length - 1)}`, realistic: true });
    } else if (kind < 7) {
      // Near misses: 7- and 10-digit subscriber numbers, or a national prefix (0) before the area code.
      const area = 11 + Math.floor(random() * 89);
      const variant = Math.floor(random() * 3);
      out.push({
        digits: variant === 2 ? `550${area}${digits(8 + Math.floor(random() * 2))}` : `55${area}${digits(variant === 0 ? 7 : 10)}`,
        realistic: false,
      });
    } else {
      out.push({ digits: `55${digits(8 + Math.floor(random() * 6))}`, realistic: false });
    }
  }
  return out;
}

const SAMPLES = sample(500_000);

/** What libphonenumber says, as normalizeInternational answered before the fast path. */
function reference(value: string): string | null {
  return parsePhoneNumberFromString(`+${value}`)?.isValid() ? value : null;
}

/** normalizeBrazilian before the fast path. */
function brazilianReference(value: string): string | null {
  const national = value.length >= 12 && value.startsWith('55') ? value.slice(2) : value;
  const parsed = parsePhoneNumberFromString(national, 'BR');
  return parsed !== undefined && parsed.countryCallingCode === '55' && parsed.isValid() ? `55${parsed.nationalNumber}` : null;
}

const expected = SAMPLES.map((s) => reference(s.digits));

test('the sample has the shapes it claims', () => {
  const lengths = new Set(SAMPLES.map((s) => s.digits.length));
  assert.deepEqual([...lengths].sort(), [10, 11, 12, 13, 14, 15]);
  const shapes = new Set(SAMPLES.filter((s) => s.realistic).map((s) => `${s.digits.slice(2, 5)}/${s.digits.length}`));
  assert.equal(shapes.size, 89 * 10 * 2);
  assert.ok(SAMPLES.every((s) => s.digits.startsWith('55')));
});

test('the fast path says valid only when libphonenumber does', () => {
  let taken = 0;
  const wrong: string[] = [];
  SAMPLES.forEach((s, i) => {
    if (!certainlyValidBrazilian(s.digits.slice(2))) return;
    taken++;
    if (expected[i] === null) wrong.push(s.digits);
  });
  assert.deepEqual(wrong.slice(0, 10), []);
  assert.ok(taken > 50_000, `the fast path took only ${taken} numbers`);
});

test('the fast path answers at least 95% of the valid mobile and landline numbers', () => {
  let valid = 0;
  let fast = 0;
  SAMPLES.forEach((s, i) => {
    if (!s.realistic || expected[i] === null) return;
    valid++;
    if (certainlyValidBrazilian(s.digits.slice(2))) fast++;
  });
  const share = fast / valid;
  console.log(`fast path: ${fast} of ${valid} valid realistic numbers (${(share * 100).toFixed(2)}%)`);
  assert.ok(valid > 50_000, `only ${valid} valid realistic numbers`);
  assert.ok(share >= 0.95, `${(share * 100).toFixed(2)}%`);
});

test('normalizeInternational answers as libphonenumber does, as digits, with a + and as a number', () => {
  const wrong: string[] = [];
  SAMPLES.forEach((s, i) => {
    const want = expected[i];
    if (normalizeInternational(s.digits) !== want) wrong.push(s.digits);
    if (normalizeInternational(`+${s.digits}`) !== want) wrong.push(`+${s.digits}`);
    if (normalizeInternational(Number(s.digits)) !== want) wrong.push(`${s.digits} (number)`);
  });
  assert.deepEqual(wrong.slice(0, 10), []);
});

test('numbers libphonenumber reads with a national prefix still go its way', () => {
  // +55 0 11 98765-4321: libphonenumber drops the 0 and takes it; the fast path leaves it alone.
  assert.equal(certainlyValidBrazilian('011987654321'), false);
  assert.equal(reference('55011987654321'), '55011987654321');
  assert.equal(normalizeInternational('55011987654321'), '55011987654321');
});

test('normalizeBrazilian answers as before', () => {
  const wrong: string[] = [];
  // A slice of the sample: each number costs two libphonenumber parses here.
  for (const s of SAMPLES.slice(0, 25_000)) {
    for (const given of [s.digits, s.digits.slice(2)]) {
      if (normalizeBrazilian(given) !== brazilianReference(given)) wrong.push(given);
    }
  }
  assert.deepEqual(wrong.slice(0, 10), []);
  assert.equal(normalizeBrazilian('(21) 98765-4321'), '5521987654321');
  assert.equal(normalizeBrazilian('+55 11 3333-4444'), '551133334444');
});
