import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RcsCard, RcsPayload, RcsSuggestion } from '../rcs-message.ts';

/**
 * The subset of Google's RCS Business Messaging agent API we speak
 * (v1 phones.agentMessages, phones.capabilities, agent webhook events).
 * The RBM simulator (tools/rbm-sim) speaks the same.
 */

export interface RbmSuggestion {
  reply?: { text: string; postbackData: string };
  action?: { text: string; postbackData: string; openUrlAction: { url: string } };
}

export interface RbmCardContent {
  title?: string;
  description?: string;
  media?: { height: 'SHORT' | 'MEDIUM' | 'TALL'; contentInfo: { fileUrl: string; forceRefresh: boolean } };
  suggestions?: RbmSuggestion[];
}

export interface RbmContentMessage {
  text?: string;
  contentInfo?: { fileUrl: string; forceRefresh: boolean };
  richCard?: {
    standaloneCard?: { cardOrientation: 'VERTICAL'; cardContent: RbmCardContent };
    carouselCard?: { cardWidth: 'MEDIUM'; cardContents: RbmCardContent[] };
  };
  suggestions?: RbmSuggestion[];
}

export interface RbmAgentMessage {
  contentMessage: RbmContentMessage;
}

/** An event the platform posts to the agent's webhook: a status event, or a message from the user. */
export interface RbmEvent {
  senderPhoneNumber?: unknown;
  messageId?: unknown;
  eventId?: unknown;
  eventType?: unknown;
  sendTime?: unknown;
  text?: unknown;
  suggestionResponse?: { postbackData?: unknown; text?: unknown } | null;
}

export const SIGNATURE_HEADER = 'x-goog-signature';

/** Base64 HMAC-SHA512 of the raw body with the shared secret (RBM's webhook signing). */
export const signBody = (secret: string, body: Buffer | string): string => createHmac('sha512', secret).update(body).digest('base64');

export function signatureValid(secret: string, body: Buffer, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

const suggestion = (s: RcsSuggestion, i: number): RbmSuggestion =>
  s.url ? { action: { text: s.text, postbackData: `button-${i}`, openUrlAction: { url: s.url } } } : { reply: { text: s.text, postbackData: `button-${i}` } };

function cardContent(card: RcsCard): RbmCardContent {
  const out: RbmCardContent = {};
  if (card.title) out.title = card.title;
  if (card.description) out.description = card.description;
  if (card.media) out.media = { height: 'MEDIUM', contentInfo: { fileUrl: card.media.url, forceRefresh: false } };
  if (card.suggestions.length) out.suggestions = card.suggestions.map(suggestion);
  return out;
}

/** Our stored payload as an RBM agent message. */
export function agentMessage(payload: RcsPayload): RbmAgentMessage {
  switch (payload.kind) {
    case 'basic':
      return { contentMessage: { text: payload.text } };
    case 'file':
      return { contentMessage: { contentInfo: { fileUrl: payload.media.url, forceRefresh: false } } };
    case 'card':
      return { contentMessage: { richCard: { standaloneCard: { cardOrientation: 'VERTICAL', cardContent: cardContent(payload.card) } } } };
    case 'carousel':
      return { contentMessage: { richCard: { carouselCard: { cardWidth: 'MEDIUM', cardContents: payload.cards.map(cardContent) } } } };
  }
}

/** RBM wants E.164 with the plus sign; we store digits. */
export const e164 = (receiver: string) => (receiver.startsWith('+') ? receiver : `+${receiver}`);
export const digits = (phone: string) => phone.replace(/^\+/, '');
