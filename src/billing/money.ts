/**
 * Money is stored as integer micro-units (1 unit = 1_000_000) and only turned
 * into a JSON number at the edge. Prices like 0.065 survive exactly.
 */
export const MICROS = 1_000_000;

/** Parses a decimal amount (number or string) into micro-units; null when it has more than 6 decimals or is not finite. */
export function toMicros(amount: number | string): number | null {
  const text = typeof amount === 'number' ? numberToPlain(amount) : amount.trim();
  const m = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return null;
  const [, sign, whole = '0', frac = ''] = m;
  const micros = Number(whole) * MICROS + Number(frac.padEnd(6, '0'));
  if (!Number.isSafeInteger(micros)) return null;
  return sign ? -micros : micros;
}

/** Micro-units to a JSON number with at most 6 decimals. */
export function fromMicros(micros: number): number {
  return Number((micros / MICROS).toFixed(6));
}

function numberToPlain(n: number): string {
  if (!Number.isFinite(n)) return 'NaN';
  // toFixed(7) then trim keeps 0.065 as "0.065" and flags 7+ decimals.
  const s = n.toFixed(7).replace(/0+$/, '').replace(/\.$/, '');
  return s;
}
