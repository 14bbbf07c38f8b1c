import type { Executor } from '../db/executor.ts';
import { checkDestination, findUrls, replaceUrls } from './urls.ts';
import { discardLinks, insertLinks } from './links.ts';

export interface ShortenedTexts {
  /** The texts with every http(s) URL replaced by a short link (same order as given). */
  texts: string[];
  /** Ids of the links made for them. */
  linkIds: number[];
  /**
   * For `.catch()` on the send that uses the texts: when the send is
   * refused the links were never published, so they are removed; the
   * send's error is rethrown.
   */
  discard(err: unknown): Promise<never>;
}

/**
 * `shortenLinks: true` on an SMS send: each distinct http(s) URL of the
 * texts gets one new short link of the account, and every occurrence is
 * replaced by it, before segments are counted (the shorter text is what is
 * charged and sent). URLs that are not valid destinations, and links of
 * this gateway already, are left as they are. A URL shorter than a short
 * link is replaced too: the caller asked for counted links, and the text is
 * charged as it is sent. With `enabled` false the texts come back unchanged.
 */
export async function shortenForSend(db: Executor, accountId: number, base: string, enabled: boolean | undefined, texts: string[]): Promise<ShortenedTexts> {
  const unchanged: ShortenedTexts = { texts, linkIds: [], discard: (err) => Promise.reject(err) };
  if (!enabled) return unchanged;

  const destinations = new Set(texts.flatMap(findUrls).filter((url) => 'url' in checkDestination(url, base)));
  if (destinations.size === 0) return unchanged;

  const rows = await insertLinks(db, accountId, [...destinations]);
  const shortUrls = new Map(rows.map((r) => [r.destination_url, `${base}/${r.code}`]));
  const linkIds = rows.map((r) => Number(r.id));
  return {
    texts: texts.map((text) => replaceUrls(text, (url) => shortUrls.get(url) ?? null)),
    linkIds,
    discard: async (err) => {
      // The send's error is what the caller must see; a link left behind is harmless (it is listed and can be deleted).
      await discardLinks(db, accountId, linkIds).catch(() => undefined);
      throw err;
    },
  };
}
