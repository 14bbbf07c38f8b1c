import type { Readable } from 'node:stream';

/**
 * Where RCS media bytes live, by content-addressed name (`<sha256>.<ext>`):
 * the data directory, or an S3-compatible bucket (src/rcs/s3-storage.ts).
 * Names are checked (MEDIA_NAME) before they get here. Since a name is the
 * hash of its bytes, writing one twice is harmless and an object never
 * changes, so no locking is needed anywhere.
 */
export interface MediaStorage {
  /** A URL carriers can fetch the object from directly (a public bucket); null: our GET /media/<name>. */
  publicUrl(name: string): string | null;
  exists(name: string): Promise<boolean>;
  /** Stores the bytes unless the name is there already; true when it wrote them. */
  putIfAbsent(name: string, data: Buffer, contentType: string): Promise<boolean>;
  /** The stored bytes as a stream and their length, or null when there is no such object. */
  get(name: string): Promise<{ size: number; body: Readable } | null>;
  close(): Promise<void>;
}
