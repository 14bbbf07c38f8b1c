import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { MediaStorage } from './media-storage.ts';

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
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(name) }));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async putIfAbsent(name: string, data: Buffer, contentType: string): Promise<boolean> {
    // Head then put, not a conditional put: If-None-Match is not implemented by every S3-compatible
    // service, and a race only writes the same bytes twice (the name is their hash).
    if (await this.exists(name)) return false;
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
