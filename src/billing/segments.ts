/**
 * The charging rule: up to 160 characters is one credit;
 * longer texts cost one credit per 153 characters. Counted in Unicode code
 * points, whatever the encoding on the wire.
 */
export function chargedSegments(text: string): number {
  const length = [...text].length;
  return length <= 160 ? 1 : Math.ceil(length / 153);
}
