/**
 * Text every store keeps as it was sent. PostgreSQL text cannot hold U+0000.
 * Half of a UTF-16 surrogate pair standing alone (a JSON `"\ud800"`, a UCS-2
 * octet pair D800) is no character at all: PostgreSQL would keep U+FFFD in
 * its place, SQLite three octets that read back as three. What clients send
 * holding either is refused (docs/decisions.md); what carriers send is
 * cleaned (storableText).
 */

/** The longest SMS text taken, in characters (Unicode code points), on every interface: 14 parts of 153. */
export const MAX_TEXT_CHARACTERS = 2000;

/** A lone surrogate: to a `u` expression a whole pair is one code point, not matched. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a client's text cannot be kept as sent, or null when it can. */
export function unstorable(text: string): 'nul' | 'surrogate' | null {
  if (text.includes('\u0000')) return 'nul';
  return LONE_SURROGATE.test(text) ? 'surrogate' : null;
}

/** A carrier's text made storable: NULs dropped, lone surrogates replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(/\p{Cs}/gu, '\ufffd');
}
