import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Length of a short link code: 8 base62 characters, about 47.6 bits from
 * the CSPRNG. With a million live links a guesser needs ~200 million tries
 * per hit; one character more would cost every SMS that carries a link.
 */
export const CODE_LENGTH = 8;

/** What a code looks like (the redirect refuses anything else without a query). */
export const CODE_PATTERN = /^[0-9A-Za-z]{4,32}$/;

/**
 * A random base62 code from the operating system's CSPRNG. Bytes >= 248
 * are dropped (rejection sampling), so every character is equally likely.
 */
export function newCode(length = CODE_LENGTH): string {
  let code = '';
  while (code.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && code.length < length) code += ALPHABET.charAt(byte % 62);
    }
  }
  return code;
}
