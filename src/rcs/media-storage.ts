import type { Readable } from 'node:stream';

/** A stored media object's name: `<sha256>.<ext>` (MEDIA_NAME in src/rcs/media.ts). */
export const MEDIA_FILE = /^[0-9a-f]{64}\.[a-z0-9]{2,5}$/;

/**
 * Where RCS media bytes live, by content-addressed name (`<sha256>.<ext>`):
 * the data directory, or an S3-compatible bucket (src/rcs/s3-storage.ts).
 * Names are checked (MEDIA_NAME) before they get here. Since a name is the
 * hash of its bytes, writing one twice is harmless and an object never
 * changes, so no locking is needed anywhere. Deleting (the retention job)
 * only takes objects no send has stored or reused lately: a send that
 * reuses an object marks it used first, and one that finds it gone writes
 * it again.
 */
export interface MediaStorage {
  /** A URL carriers can fetch the object from directly (a public bucket); null: our GET /media/<name>. */
  publicUrl(name: string): string | null;
  exists(name: string): Promise<boolean>;
  /** Stores the bytes unless the name is there already (then marks it used now); true when it wrote them. */
  putIfAbsent(name: string, data: Buffer, contentType: string): Promise<boolean>;
  /** The stored bytes as a stream and their length, or null when there is no such object. */
  get(name: string): Promise<{ size: number; body: Readable } | null>;
  /**
   * Every stored media object: its name and when a send last stored or
   * reused it (ms; a reuse brings the time forward, within a day on a
   * bucket). The retention job reads it (src/retention/media.ts).
   */
  list(): AsyncIterable<{ name: string; usedAt: number }>;
  /** Deletes the object unless a send stored or reused it at or after `before` (ms); true when it deleted it. */
  removeIfUnusedSince(name: string, before: number): Promise<boolean>;
  close(): Promise<void>;
}
