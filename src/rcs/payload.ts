import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERROR_TEXT, OptionalNullable } from '../common/schema.ts';

/**
 * RCS message payloads (spec 2.12, 4.2). The send routes validate the
 * client's fields, fetch and store the media, and keep this JSON in the
 * message's `payload`; carriers build their own wire format from it.
 */

export const MAX_BASIC_TEXT = 1000;
export const MAX_CARD_TITLE = 200;
export const MAX_CARD_MESSAGE = 2000;
export const MAX_BUTTONS = 4;
export const MIN_CAROUSEL_CARDS = 2;
export const MAX_CAROUSEL_CARDS = 10;

/** A schema whose problems read as one line, `text` (a one-form anyOf: the validation layer folds it; TypeBox would collapse Type.Union of one). */
export const oneLine = <T extends TSchema>(schema: T, text: string, description?: string) =>
  Type.Unsafe<Static<T>>({ anyOf: [schema], [ERROR_TEXT]: text, ...(description ? { description } : {}) });

/** Text that is not only spaces. */
export const Text = (max: number, description: string) =>
  oneLine(Type.String({ minLength: 1, maxLength: max, pattern: '\\S' }), `must be text of 1 to ${max} characters, not only spaces`, description);

export const HttpUrl = oneLine(
  Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' }),
  'must be an http(s) URL (at most 2048 characters)',
  'Public http(s) URL.',
);

export const ButtonSchema = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 25, description: 'Label of the suggestion chip (RBM allows 25 characters).' }),
    url: Type.Optional(Type.Union([HttpUrl, Type.Null()], { [ERROR_TEXT]: 'must be an http(s) URL (at most 2048 characters)' })),
  },
  { required: ['text'] },
);

export const CardFields = {
  // Null means absent (the send routes read the body through absent()).
  cardImage: OptionalNullable(HttpUrl),
  cardTitle: OptionalNullable(Type.String({ maxLength: MAX_CARD_TITLE })),
  cardMessage: OptionalNullable(Type.String({ maxLength: MAX_CARD_MESSAGE })),
  buttons: OptionalNullable(Type.Array(ButtonSchema, { maxItems: MAX_BUTTONS })),
};

export const CardSchema = Type.Object(CardFields);

export interface CardInput {
  cardImage?: string | undefined;
  cardTitle?: string | undefined;
  cardMessage?: string | undefined;
  buttons?: { text: string; url?: string | null | undefined }[] | undefined;
}

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

const blank = (s: string | undefined) => s === undefined || s.trim() === '';

/** Problems JSON Schema cannot say: a card needs an image or some text. `at` prefixes field names (e.g. `cards[1].`). */
export function cardProblems(card: CardInput, at = ''): string[] {
  if (blank(card.cardImage) && blank(card.cardTitle) && blank(card.cardMessage)) {
    return [`${at}cardImage: a card needs an image (cardImage) or text (cardTitle or cardMessage)`];
  }
  return [];
}

export function toCard(input: CardInput, media: RcsMedia | null): RcsCard {
  return {
    title: blank(input.cardTitle) ? null : (input.cardTitle ?? null),
    description: blank(input.cardMessage) ? null : (input.cardMessage ?? null),
    media,
    suggestions: (input.buttons ?? []).map((b) => ({ text: b.text, url: b.url ?? null })),
  };
}

/** The readable text of a request and its messages (reports): message, file name, card title, or "carousel of N cards". */
export function contentOf(payload: RcsPayload): string {
  switch (payload.kind) {
    case 'basic':
      return payload.text;
    case 'file':
      return payload.fileName;
    case 'card':
      return payload.card.title ?? payload.card.description ?? 'card';
    case 'carousel':
      return `carousel of ${payload.cards.length} cards`;
  }
}

/** The SMS text of an RCS message, for a receiver without RCS: title, message, and each button's URL. */
export function fallbackText(payload: RcsPayload): string {
  const card = (c: RcsCard) =>
    [c.title, c.description, ...c.suggestions.map((s) => (s.url ? `${s.text}: ${s.url}` : null)), c.media && !c.title && !c.description ? c.media.url : null]
      .filter((l): l is string => l !== null && l !== '')
      .join('\n');
  switch (payload.kind) {
    case 'basic':
      return payload.text;
    case 'file':
      return `${payload.fileName}: ${payload.media.url}`;
    case 'card':
      return card(payload.card);
    case 'carousel':
      return payload.cards.map(card).join('\n\n');
  }
}

/** Narrows a stored payload (from the database, via the dispatcher). */
export function isRcsPayload(value: unknown): value is RcsPayload {
  if (value === null || typeof value !== 'object' || !('kind' in value)) return false;
  const kind = (value as { kind: unknown }).kind;
  return kind === 'basic' || kind === 'file' || kind === 'card' || kind === 'carousel';
}
