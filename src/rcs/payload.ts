import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERROR_TEXT, OptionalNullable } from '../common/schema.ts';
import type { RcsCard, RcsMedia, RcsPayload } from '../carriers/rcs-message.ts';

/**
 * The client's RCS fields (basic text, file, card, carousel) as the send
 * routes validate them, and how they become the stored message payload
 * (src/carriers/rcs-message.ts) that carriers build their wire format from.
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
