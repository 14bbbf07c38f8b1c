import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { SafeFetchError, type SafeFetcher } from '../net/safe-fetch.ts';
import { DomainError } from '../common/errors.ts';
import type { RcsMedia } from '../carriers/rcs-message.ts';
import type { MediaStorage } from './media-storage.ts';
import type { Config } from '../config.ts';

/** Base of our own public URLs (media); GATEWAY_PUBLIC_URL or http://localhost:PORT. */
export const publicBase = (config: Config): string => (config.GATEWAY_PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');

/**
 * RCS media: files and card images named by URL in a send are fetched at
 * accept time through the SSRF-safe client, checked, stored under their
 * sha256 (data directory or bucket, src/rcs/storage.ts) and sent to the
 * carrier as our own URL (GET /media/:name, or the bucket's public URL).
 * Card images are decoded and re-encoded to fit the card limits, so a
 * carrier never sees the client's original.
 */

/** File types RCS Business Messaging accepts in a file message. */
export const FILE_TYPES: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'video/mpeg': 'mpeg',
  'video/webm': 'webm',
  'video/h263': 'h263',
  'video/m4v': 'm4v',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
};

/** Image types a card image may be before it is re-encoded. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/jpg', 'image/png', 'image/gif', 'image/webp']);

/** Card media limit: re-encoded to fit in this many pixels on each side. */
export const CARD_IMAGE_MAX_PX = 1440;
/** Decoding bombs are refused before they are decoded. */
const MAX_INPUT_PIXELS = 40_000_000;

export const MEDIA_NAME = /^[0-9a-f]{64}\.[a-z0-9]{2,5}$/;

export const contentTypeOfName = (name: string): string | null => {
  const ext = name.slice(name.lastIndexOf('.') + 1);
  return Object.entries(FILE_TYPES).find(([, e]) => e === ext)?.[0] ?? null;
};

export interface MediaOptions {
  /** Public base of our media URLs, without a trailing slash (…/media/<name> is appended). */
  publicBase: string;
  maxBytes: number;
  timeoutMs: number;
  log: Logger;
}

export class MediaStore {
  constructor(
    private readonly fetcher: SafeFetcher,
    private readonly storage: MediaStorage,
    private readonly options: MediaOptions,
  ) {}

  /** A file message's file: any RBM file type, stored as is. Returns the problem's text instead when it can't be used. */
  async file(url: string): Promise<RcsMedia | string> {
    const got = await this.download(url);
    if (typeof got === 'string') return got;
    const ext = FILE_TYPES[got.contentType];
    if (!ext) return `the file at ${url} is ${got.contentType || 'of no declared type'}; allowed: ${Object.keys(FILE_TYPES).join(', ')}`;
    return this.store(got.body, got.contentType, ext, url);
  }

  /** A card image: decoded, shrunk to the card limits, re-encoded as PNG (PNG input) or JPEG (anything else). */
  async cardImage(url: string): Promise<RcsMedia | string> {
    const got = await this.download(url);
    if (typeof got === 'string') return got;
    if (!IMAGE_TYPES.has(got.contentType))
      return `the image at ${url} is ${got.contentType || 'of no declared type'}; a card image must be JPEG, PNG, GIF or WebP`;
    let encoded: { data: Buffer; info: { width: number; height: number }; png: boolean };
    try {
      // Loaded at the first card image: the image library is about 30 MB a process that never makes one does not carry.
      const { default: sharp } = await import('sharp');
      const image = sharp(got.body, { limitInputPixels: MAX_INPUT_PIXELS, animated: false }).rotate();
      const meta = await image.metadata();
      if (!meta.width || !meta.height) return `the image at ${url} has no dimensions`;
      const png = meta.format === 'png';
      const resized = image.resize({ width: CARD_IMAGE_MAX_PX, height: CARD_IMAGE_MAX_PX, fit: 'inside', withoutEnlargement: true });
      const { data, info } = await (png
        ? resized.png({ compressionLevel: 9 })
        : resized.flatten({ background: '#ffffff' }).jpeg({ quality: 85, mozjpeg: true })
      ).toBuffer({ resolveWithObject: true });
      encoded = { data, info, png };
    } catch (err) {
      return `the file at ${url} is not a readable image (${err instanceof Error ? err.message : String(err)})`;
    }
    // Outside the try: a storage failure is ours (503), not a problem of the client's image.
    const media = await this.store(encoded.data, encoded.png ? 'image/png' : 'image/jpeg', encoded.png ? 'png' : 'jpg', url);
    return { ...media, width: encoded.info.width, height: encoded.info.height };
  }

  private async download(url: string): Promise<{ body: Buffer; contentType: string } | string> {
    try {
      const res = await this.fetcher.fetch(url, { timeoutMs: this.options.timeoutMs, maxBytes: this.options.maxBytes, headers: { accept: '*/*' } });
      if (res.status !== 200) return `fetching ${url} answered HTTP ${res.status}`;
      if (res.body.length === 0) return `the file at ${url} is empty`;
      const contentType = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      return { body: res.body, contentType };
    } catch (err) {
      if (err instanceof SafeFetchError) {
        return err.code === 'TOO_LARGE' ? `the file at ${url} is larger than ${this.options.maxBytes} bytes` : `cannot fetch ${url}: ${err.message}`;
      }
      return `cannot fetch ${url}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /**
   * Content-addressed: the same bytes are stored once. Storage that fails
   * (a bucket unreachable, a full disk) refuses the send with 503 before
   * anything is queued or charged: the client may try again later.
   */
  private async store(data: Buffer, contentType: string, ext: string, sourceUrl: string): Promise<RcsMedia> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const name = `${sha256}.${ext}`;
    try {
      await this.storage.putIfAbsent(name, data, contentType);
    } catch (err) {
      this.options.log.error({ err, name }, 'RCS media storage failed');
      throw new DomainError('UNAVAILABLE', 'The media storage is unavailable; nothing was sent or charged. Try again later.');
    }
    const url = this.storage.publicUrl(name) ?? `${this.options.publicBase}/media/${name}`;
    return { url, sha256, contentType, bytes: data.length, sourceUrl };
  }
}
