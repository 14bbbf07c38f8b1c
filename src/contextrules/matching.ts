/**
 * How a reply is matched against a rule's keywords: case- and
 * accent-insensitive, on whole words ("Sim, quero!" matches "sim" and
 * "quero"; "simulado" matches neither). A keyword may have several words;
 * they must appear in order, side by side.
 */
export type Classification = 'POSITIVE' | 'NEGATIVE' | 'DEFAULT';

/** Lower case, accents removed, anything but letters and digits turned into single spaces. */
export function normalizeText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const words = (text: string) => normalizeText(text).split(' ').filter(Boolean);

function contains(reply: string[], keyword: string): boolean {
  const kw = words(keyword);
  if (kw.length === 0 || kw.length > reply.length) return false;
  for (let i = 0; i + kw.length <= reply.length; i++) {
    if (kw.every((w, j) => reply[i + j] === w)) return true;
  }
  return false;
}

/**
 * POSITIVE when only positive keywords occur, NEGATIVE when only negative
 * ones do; an answer with both ("sim... não") or neither gets the default.
 */
export function classify(reply: string, positive: string[], negative: string[]): Classification {
  const tokens = words(reply);
  const pos = positive.some((k) => contains(tokens, k));
  const neg = negative.some((k) => contains(tokens, k));
  if (pos && !neg) return 'POSITIVE';
  if (neg && !pos) return 'NEGATIVE';
  return 'DEFAULT';
}

/** Keywords from a comma- (or semicolon-, newline-) separated text or a list; blanks and repeats dropped. */
export function parseKeywords(value: string | string[] | null | undefined): string[] {
  const parts = (Array.isArray(value) ? value : [value ?? ''])
    .flatMap((v) => v.split(/[,;\n]/))
    .map((k) => k.trim())
    .filter(Boolean);
  const seen = new Set<string>();
  return parts.filter((k) => {
    const key = normalizeText(k);
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
