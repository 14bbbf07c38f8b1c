/**
 * An RCS message as the gateway stores it (the message's `payload`) and
 * hands it to an RCS carrier, which builds its own wire format from it.
 * The send use case (src/rcs/send.ts) makes it from the client's fields.
 */

/** A stored copy of a fetched file, served from our own URL. */
export interface RcsMedia {
  /** Our URL (GET /media/:name), what carriers send. */
  url: string;
  sha256: string;
  contentType: string;
  bytes: number;
  /** Where the client said the file was. */
  sourceUrl: string;
  width?: number;
  height?: number;
}

export interface RcsSuggestion {
  text: string;
  /** Open-URL action; null = a plain suggested reply. */
  url: string | null;
}

export interface RcsCard {
  title: string | null;
  description: string | null;
  media: RcsMedia | null;
  suggestions: RcsSuggestion[];
}

export type RcsPayload =
  | { kind: 'basic'; text: string }
  | { kind: 'file'; fileName: string; media: RcsMedia }
  | { kind: 'card'; card: RcsCard }
  | { kind: 'carousel'; cards: RcsCard[] };

/** Narrows a stored payload (from the database, via the dispatcher). */
export function isRcsPayload(value: unknown): value is RcsPayload {
  if (value === null || typeof value !== 'object' || !('kind' in value)) return false;
  const kind = (value as { kind: unknown }).kind;
  return kind === 'basic' || kind === 'file' || kind === 'card' || kind === 'carousel';
}
