import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Time-ordered ids (UUID v7) for requests, messages and events, strictly
 * increasing within the process: ids made in the same millisecond count up
 * (the `uuid` package's own monotonic rule, RFC 9562 method 1), so sorting
 * by id is sending order.
 *
 * The difference from `uuid`'s v7(): the random bytes come from a pool
 * filled 4 KiB at a time. uuid 14 asks the system for 16 random bytes per
 * id (crypto.getRandomValues), which measured about 10 µs an id here, a
 * fifth of the cost of accepting a message.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;
let lastMs = -Infinity;
let seq = 0;

function random16(): Buffer {
  if (offset + 16 > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return bytes;
}

export function newId(): string {
  const random = random16();
  const now = Date.now();
  if (now > lastMs) {
    // A fresh 31-bit counter at a random start, as uuid does (top bit clear leaves room to count up).
    seq = random.readUInt32BE(6) & 0x7fffffff;
    lastMs = now;
  } else {
    seq = (seq + 1) | 0;
    // Counter exhausted within one millisecond: borrow the next one.
    if (seq === 0) lastMs++;
  }
  return v7({ msecs: lastMs, seq, random });
}
