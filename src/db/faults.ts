/**
 * Errors that say the database cannot do its work right now (its disk is
 * full, an I/O error, a lock held too long, the server unreachable or
 * shutting down), not that the request is wrong. Every interface answers
 * them 503 in its own envelope: the transaction was rolled back, nothing of
 * the request was kept, and the same request may be sent again later.
 */

export type StorageFault = 'full' | 'unavailable';

const SQLITE_FULL = new Set(['SQLITE_FULL']);
const SQLITE_TRANSIENT = ['SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_NOMEM', 'SQLITE_PROTOCOL'];
/** errno of the file system (the WAL's fsync, the data directory). */
const ERRNO_FULL = new Set(['ENOSPC', 'EDQUOT']);
const ERRNO_TRANSIENT = new Set(['EIO', 'EROFS', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * PostgreSQL SQLSTATEs: 53100 disk full; class 53 insufficient resources;
 * class 08 connection exceptions; 57P01-57P03 shutting down / cannot
 * connect now; 58030 I/O error; 40001/40P01 serialization failure and
 * deadlock (retrying is the documented answer); 55P03 lock not available;
 * 57014 statement cancelled (timeout).
 */
const PG_TRANSIENT = new Set(['57P01', '57P02', '57P03', '58030', '40001', '40P01', '55P03', '57014']);
/** node-postgres reports a lost connection without a code. */
const PG_LOST = /^Connection terminated|^timeout exceeded when trying to connect|^Client has encountered a connection error/;

/** What kind of storage fault `err` is, or null when it is something else (a bug, a constraint). */
export function storageFault(err: unknown): StorageFault | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SQLITE_FULL.has(code) || ERRNO_FULL.has(code) || code === '53100') return 'full';
    if (SQLITE_TRANSIENT.some((c) => code.startsWith(c)) || ERRNO_TRANSIENT.has(code)) return 'unavailable';
    if (code.startsWith('53') || code.startsWith('08') || PG_TRANSIENT.has(code)) return 'unavailable';
  }
  return PG_LOST.test(err.message) ? 'unavailable' : null;
}

/** Seconds a client is told to wait before sending a request again after a storage fault. */
export const STORAGE_RETRY_AFTER_S = 5;
