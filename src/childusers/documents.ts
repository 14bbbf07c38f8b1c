/**
 * Brazilian taxpayer documents of a child user, a CPF or a CNPJ, stored
 * without formatting: CPF has 11 digits, CNPJ 14 characters, each
 * ending in two mod-11 check digits. Formatting (dots, dashes, slash,
 * spaces) is tolerated on input and dropped.
 *
 * CNPJ: since July 2026 the Receita Federal also issues alphanumeric CNPJs
 * (IN RFB 2.229/2024): the first 12 characters may be A-Z, the last two are
 * still digits, and every character counts as its ASCII code minus 48 in
 * the same check digit arithmetic, so all-digit CNPJs verify exactly as
 * before. Letters are stored upper-case.
 */
export type DocumentCheck = { document: string; kind: 'CPF' | 'CNPJ' } | { error: string };

const FORMATTING = /[.\-/\s]/g;

export function normalizeDocument(value: string): DocumentCheck {
  const text = value.replace(FORMATTING, '').toUpperCase();
  const kind = /^\d{11}$/.test(text) ? 'CPF' : /^[0-9A-Z]{12}\d{2}$/.test(text) ? 'CNPJ' : null;
  if (kind === null) {
    if (!/^[0-9A-Z]*$/.test(text)) return { error: 'must be a CPF or CNPJ; only digits, letters (new CNPJ), dots, dashes and a slash are allowed' };
    return { error: `must be a CPF (11 digits) or a CNPJ (14 characters, the last two digits), got ${text.length} characters` };
  }
  // All-same-digit numbers pass the check digit arithmetic but are never issued.
  if (/^(\d)\1+$/.test(text)) return { error: `is not a valid ${kind} (all digits are the same)` };
  const valid = kind === 'CPF' ? cpfValid(text) : cnpjValid(text);
  return valid ? { document: text, kind } : { error: `is not a valid ${kind} (check digits do not match)` };
}

/** Digit value; for the alphanumeric CNPJ, A = 17 ... Z = 42 (ASCII code - 48). */
const valueAt = (text: string, i: number) => text.charCodeAt(i) - 48;

/** CPF: weights 10..2 (then 11..2); check = (sum * 10) mod 11, 10 counts as 0. */
export function cpfValid(digits: string): boolean {
  if (!/^\d{11}$/.test(digits)) return false;
  for (const length of [9, 10]) {
    let sum = 0;
    for (let i = 0; i < length; i++) sum += valueAt(digits, i) * (length + 1 - i);
    const check = ((sum * 10) % 11) % 10;
    if (check !== valueAt(digits, length)) return false;
  }
  return true;
}

const CNPJ_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

/** CNPJ: weights 5..2,9..2 (then 6..2,9..2); remainder < 2 gives 0, else 11 - remainder. */
export function cnpjValid(text: string): boolean {
  if (!/^[0-9A-Z]{12}\d{2}$/.test(text)) return false;
  for (const length of [12, 13]) {
    const weights = CNPJ_WEIGHTS.slice(13 - length);
    let sum = 0;
    weights.forEach((w, i) => {
      sum += valueAt(text, i) * w;
    });
    const rest = sum % 11;
    const check = rest < 2 ? 0 : 11 - rest;
    if (check !== valueAt(text, length)) return false;
  }
  return true;
}
