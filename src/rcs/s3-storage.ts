import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { MEDIA_FILE, type MediaStorage } from './media-storage.ts';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** Key prefix, e.g. "rcs/" (a missing trailing slash is added). */
  prefix: string;
  /** An S3-compatible service (MinIO, Ceph, R2...): addressed path-style. Null: AWS S3. */
  endpoint: string | null;
  /** Null: the AWS credential chain (AWS_ACCESS_KEY_ID..., profiles, instance roles). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** Public base of the bucket carriers may fetch from directly; null: the gateway serves /media/<name>. */
  publicUrl: string | null;
  /** Time limit of one call to the bucket (sends wait for it at accept time). */
  timeoutMs: number;
}

/** The same headers the directory route sends, kept on the object for direct (public URL) fetches. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** A reused object older than this is written again, so that its time says it is in use (the retention job reads it). */
const REFRESH_AFTER_MS = 86_400_000;

/** RCS media in an S3-compatible bucket, under `<prefix><sha256>.<ext>`. */
export class S3Storage implements MediaStorage {
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(private readonly options: S3StorageOptions) {
    const prefix = options.prefix.replace(/^\/+/, '');
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint
        ? {
            endpoint: options.endpoint,
            // Bucket names in the host need wildcard DNS that MinIO and Ceph set-ups rarely have.
            forcePathStyle: true,
            // The SDK's default CRC checksums (since 2025) are refused by several S3-compatible services.
            requestChecksumCalculation: 'WHEN_REQUIRED' as const,
            responseChecksumValidation: 'WHEN_REQUIRED' as const,
          }
        : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      requestHandler: { connectionTimeout: Math.min(options.timeoutMs, 5000), requestTimeout: options.timeoutMs },
      maxAttempts: 2,
    });
  }

  private key(name: string): string {
    return `${this.prefix}${name}`;
  }

  publicUrl(name: string): string | null {
    return this.options.publicUrl ? `${this.options.publicUrl.replace(/\/+$/, '')}/${this.key(name)}` : null;
  }

  async exists(name: string): Promise<boolean> {
    return (await this.lastModified(name)) !== null;
  }

  /** When the object was last written (ms; now when the service does not say), or null when there is no such object. */
  private async lastModified(name: string): Promise<number | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(name) }));
      return res.LastModified?.getTime() ?? Date.now();
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async putIfAbsent(name: string, data: Buffer, contentType: string): Promise<boolean> {
    // Head then put, not a conditional put: If-None-Match is not implemented by every S3-compatible
    // service, and a race only writes the same bytes twice (the name is their hash). An object
    // written more than a day ago is written again: its time is when a send last used it.
    const written = await this.lastModified(name);
    if (written !== null && Date.now() - written < REFRESH_AFTER_MS) return false;
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.key(name),
        Body: data,
        ContentLength: data.length,
        ContentType: contentType,
        CacheControl: CACHE_CONTROL,
      }),
    );
    return written === null;
  }

  async *list(): AsyncIterable<{ name: string; usedAt: number }> {
    let token: string | undefined;
    do {
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.options.bucket,
          ...(this.prefix ? { Prefix: this.prefix } : {}),
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of res.Contents ?? []) {
        const name = object.Key?.slice(this.prefix.length) ?? '';
        // Other objects under the prefix (or in a bucket without one) are not ours.
        if (object.LastModified && MEDIA_FILE.test(name)) yield { name, usedAt: object.LastModified.getTime() };
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }

  /** Looked at again just before the delete, so that a send that used the object since the listing keeps it. */
  async removeIfUnusedSince(name: string, before: number): Promise<boolean> {
    const written = await this.lastModified(name);
    if (written === null || written >= before) return false;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(name) }));
    return true;
  }

  async get(name: string): Promise<{ size: number; body: Readable } | null> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(name) }));
      if (!res.Body || res.ContentLength === undefined) throw new Error(`the bucket answered ${this.key(name)} without a body or length`);
      return { size: res.ContentLength, body: res.Body as Readable };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** No such object (HEAD answers a bare 404 named NotFound). A missing bucket (NoSuchBucket) is not this: it is an error. */
const isMissing = (err: unknown) => err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound');
