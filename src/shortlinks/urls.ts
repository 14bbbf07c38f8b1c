/** Longest destination URL accepted (what browsers and SMS apps handle everywhere). */
export const MAX_URL_LENGTH = 2048;

/**
 * Checks a short link destination (only http(s)). A real URL
 * with a host, without spaces or control characters (it goes into a
 * Location header), without user:password@ (a deception in links sent to
 * strangers), and not itself a short link of this gateway (no chains or
 * loops). Returns the trimmed text as given, or the reason it is refused.
 */
export function checkDestination(value: string, shortLinkBase: string): { url: string } | { error: string } {
  const text = value.trim();
  if (text.length === 0) return { error: 'is required' };
  if (text.length > MAX_URL_LENGTH) return { error: `must be at most ${MAX_URL_LENGTH} characters` };
  if (!/^https?:\/\//i.test(text)) return { error: 'must be an http:// or https:// URL' };
  // The WHATWG parser would read "http:///x" and "https://\x" as host "x": a host must follow "//" as written.
  if (!/^https?:\/\/[^/\\?#]/i.test(text)) return { error: 'must name a host after "//"' };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  if (/[\s\u0000-\u001f\u007f]/.test(text)) return { error: 'must not contain spaces or control characters' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `${JSON.stringify(text)} is not a valid URL` };
  }
  if (!url.hostname) return { error: 'must name a host' };
  if (url.username || url.password) return { error: 'must not contain a user name or password' };
  if (isShortLink(url, shortLinkBase)) return { error: 'is already a short link of this gateway' };
  return { url: text };
}

/** A URL under the public short link base (same origin, path below the base's). */
export function isShortLink(url: URL, shortLinkBase: string): boolean {
  const base = new URL(shortLinkBase);
  return url.origin === base.origin && url.pathname.startsWith(`${base.pathname.replace(/\/+$/, '')}/`);
}

/** The address a browser is sent to: the WHATWG serialisation (ASCII only, safe in a header). */
export const locationOf = (destination: string): string => new URL(destination).href;

const CANDIDATE = /https?:\/\/[^\s<>"]+/gi;
const TRAILING = /[.,;:!?'"]$/;
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/**
 * The URL a match stands for: punctuation that ends a sentence is not part
 * of it, nor is a closing bracket that the URL itself did not open
 * ("(see https://x.com/a)" -> "https://x.com/a", but
 * "https://en.wikipedia.org/wiki/Foo_(bar)" keeps its bracket).
 */
function trimUrl(match: string): string {
  let url = match;
  for (;;) {
    const last = url.charAt(url.length - 1);
    const opener = CLOSERS[last];
    if (TRAILING.test(last)) url = url.slice(0, -1);
    else if (opener !== undefined && url.split(opener).length <= url.split(last).length - 1) url = url.slice(0, -1);
    else return url;
  }
}

/**
 * Replaces every http(s) URL in a text by what `replace` returns for it
 * (null keeps it). Text without a scheme (www.example.com) is left alone.
 */
export function replaceUrls(text: string, replace: (url: string) => string | null): string {
  return text.replace(CANDIDATE, (match) => {
    const url = trimUrl(match);
    return (replace(url) ?? url) + match.slice(url.length);
  });
}

/** The http(s) URLs of a text, in order of appearance. */
export function findUrls(text: string): string[] {
  const urls: string[] = [];
  replaceUrls(text, (url) => {
    urls.push(url);
    return null;
  });
  return urls;
}
