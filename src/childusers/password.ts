import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import pLimit from 'p-limit';
import { DomainError } from '../common/errors.ts';

/**
 * The slow password hash of a child user's owner credential
 * (docs/child-users-and-short-links.md, "Decisions"): scrypt with a random 16-byte salt.
 *
 * Parameters: N = 2^15, r = 8, p = 3, 32-byte key. This is one of the
 * equivalent settings the OWASP Password Storage Cheat Sheet lists for
 * scrypt (N=2^17,r=8,p=1 / N=2^16,r=8,p=2 / N=2^15,r=8,p=3 ...): the same
 * work, but 32 MiB of memory per hash instead of 128 MiB, which a gateway
 * process can afford. The hash runs on libuv's thread pool, never on the
 * event loop, and at most two at once: the pool has four threads, and the
 * WAL fsyncs of the event loop's writes, file writes and DNS lookups need
 * them too. A flood of sign-ins or SMPP binds waits its turn here instead
 * of holding every thread for a tenth of a second each.
 *
 * Stored form (PHC string style, so the parameters can be raised later and
 * old hashes still verify): `$scrypt$ln=15,r=8,p=3$<salt b64>$<key b64>`.
 */
export const SCRYPT = { logN: 15, r: 8, p: 3, keyLength: 32, saltLength: 16 } as const;

/** The hashes being computed and waiting (tests look at it). */
export const hashing = pLimit(2);

/** Password operations one caller (an account, a panel user) may have waiting or running at once. */
const PER_CALLER = 2;
const callers = new Map<string, number>();

/**
 * Runs `work` (a password hashed or checked) for `caller`, or refuses it at
 * once (RATE_LIMITED) when that caller already has PER_CALLER of them
 * waiting or running: the shared queue above is fair only if no caller can
 * fill it, and one account creating child users in a loop would otherwise
 * hold both cores and make every sign-in and SMPP bind wait behind it.
 * (SMPP binds are bounded before they get here: src/smpp-server/bind-guard.ts.)
 */
export async function hashingFor<T>(caller: string, work: () => Promise<T>): Promise<T> {
  const running = callers.get(caller) ?? 0;
  if (running >= PER_CALLER) {
    const error = new DomainError(
      'RATE_LIMITED',
      `${running} passwords of this account or user are being hashed already (child users being created, a password change): retry in a few seconds.`,
    );
    error.retryAfterSeconds = 2;
    throw error;
  }
  callers.set(caller, running + 1);
  try {
    return await work();
  } finally {
    const left = (callers.get(caller) ?? 1) - 1;
    if (left > 0) callers.set(caller, left);
    else callers.delete(caller);
  }
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  const N = 2 ** logN;
  // Node refuses when 128 * N * r exceeds maxmem; allow twice that.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return hashing(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const key = await derive(password, salt, SCRYPT.logN, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return `$scrypt$ln=${SCRYPT.logN},r=${SCRYPT.r},p=${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const STORED = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Checks a password against a stored hash (for the panel login); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const [, logN = '', r = '', p = '', salt = '', key = ''] = m;
  const [ln, rr, pp] = [Number(logN), Number(r), Number(p)];
  // Bounds keep a corrupted row from asking for gigabytes.
  if (ln < 10 || ln > 20 || rr < 1 || rr > 16 || pp < 1 || pp > 16) return false;
  const expected = Buffer.from(key, 'base64');
  if (expected.length === 0) return false;
  const actual = await derive(password, Buffer.from(salt, 'base64'), ln, rr, pp, expected.length);
  return timingSafeEqual(actual, expected);
}
