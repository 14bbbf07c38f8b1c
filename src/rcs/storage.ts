import type { Readable } from 'node:stream';
import { createReadStream } from 'node:fs';
import { mkdir, opendir, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.ts';
import { MEDIA_FILE, type MediaStorage } from './media-storage.ts';

export type { MediaStorage };

/** GATEWAY_DATA_DIR/media: each file written once, atomically (temp file, rename). */
export class DirectoryStorage implements MediaStorage {
  constructor(readonly dir: string) {}

  publicUrl(): null {
    return null;
  }

  async exists(name: string): Promise<boolean> {
    return stat(join(this.dir, name)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  async putIfAbsent(name: string, data: Buffer): Promise<boolean> {
    const path = join(this.dir, name);
    // There already: its modification time becomes now, the last time a send used it (read by the retention job).
    const now = new Date();
    try {
      await utimes(path, now, now);
      return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (await this.exists(name))) return false;
    }
    await mkdir(this.dir, { recursive: true });
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, path);
    return true;
  }

  async get(name: string): Promise<{ size: number; body: Readable } | null> {
    const path = join(this.dir, name);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    return { size: info.size, body: createReadStream(path) };
  }

  async *list(): AsyncIterable<{ name: string; usedAt: number }> {
    let dir: Awaited<ReturnType<typeof opendir>>;
    try {
      dir = await opendir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for await (const entry of dir) {
      if (!entry.isFile() || !MEDIA_FILE.test(entry.name)) continue;
      const info = await stat(join(this.dir, entry.name)).catch(() => null);
      if (info) yield { name: entry.name, usedAt: info.mtimeMs };
    }
  }

  /**
   * Moved aside first, then its time looked at again: a send that marked it
   * used before the move is seen (and the file put back), one that comes
   * after finds it gone and writes it again (putIfAbsent). So a file in use
   * is never lost.
   */
  async removeIfUnusedSince(name: string, before: number): Promise<boolean> {
    const path = join(this.dir, name);
    const info = await stat(path).catch(() => null);
    if (!info || info.mtimeMs >= before) return false;
    const aside = `${path}.${process.pid}.${Date.now()}.del`;
    try {
      await rename(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    if ((await stat(aside)).mtimeMs >= before) {
      // Used meanwhile: back in place (a copy written meanwhile holds the same bytes).
      await rename(aside, path);
      return false;
    }
    await unlink(aside);
    return true;
  }

  async close(): Promise<void> {}
}

/** The configured storage: the bucket when MEDIA_S3_BUCKET is set (the S3 client is loaded only then), else the data directory. */
export async function openMediaStorage(config: Config): Promise<MediaStorage> {
  if (!config.MEDIA_S3_BUCKET) return new DirectoryStorage(join(config.GATEWAY_DATA_DIR, 'media'));
  const keyId = config.MEDIA_S3_ACCESS_KEY_ID;
  const secret = config.MEDIA_S3_SECRET_ACCESS_KEY;
  if ((keyId === undefined) !== (secret === undefined)) {
    throw new ConfigError(
      'MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY go together: set both, or neither (then the standard AWS_* variables or the AWS credential chain are used)',
    );
  }
  const { S3Storage } = await import('./s3-storage.ts');
  return new S3Storage({
    bucket: config.MEDIA_S3_BUCKET,
    region: config.MEDIA_S3_REGION,
    prefix: config.MEDIA_S3_PREFIX ?? '',
    endpoint: config.MEDIA_S3_ENDPOINT ?? null,
    credentials: keyId !== undefined && secret !== undefined ? { accessKeyId: keyId, secretAccessKey: secret } : null,
    publicUrl: config.MEDIA_S3_PUBLIC_URL ?? null,
    timeoutMs: config.RCS_MEDIA_TIMEOUT_MS,
  });
}
