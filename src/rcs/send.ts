import type { Core } from '../core.ts';
import type { Principal } from '../accounts/api-keys.ts';
import type { AcceptResult } from '../messaging/accept.ts';
import { acceptInput, resolveTargeting, type ResolvedTargeting, type Targeting } from '../messaging/send.ts';
import { DomainError, validation } from '../common/errors.ts';
import type { MediaStore } from './media.ts';
import { cardProblems, contentOf, toCard, type CardInput } from './payload.ts';
import type { RcsMedia, RcsPayload } from '../carriers/rcs-message.ts';

/** What the four RCS send operations ask for, beside the common fields. */
export type RcsContent =
  | { kind: 'basic'; message: string }
  | { kind: 'file'; file: string; fileName: string }
  | { kind: 'card'; card: CardInput }
  | { kind: 'carousel'; cards: CardInput[] };

export interface RcsSendInput extends Targeting {
  tag?: string | undefined;
  custom?: string | undefined;
}

export interface RcsSendResult {
  result: AcceptResult;
  scheduled: boolean;
}

/**
 * Sends one RCS request (basic, file, card or carousel): every problem of the fields is reported
 * together; media is fetched and stored before anything is written, so a
 * URL that can't be used refuses the request with nothing queued or charged.
 * Each receiver costs one send at the route's farePrice (segments = 1).
 */
export async function sendRcs(core: Core, media: MediaStore, principal: Principal, input: RcsSendInput, content: RcsContent): Promise<RcsSendResult> {
  const problems = contentProblems(content);
  let target: ResolvedTargeting;
  try {
    target = await resolveTargeting(core.db.kysely, core.routes, principal, input, 'RCS');
  } catch (err) {
    if (err instanceof DomainError && err.code === 'VALIDATION' && problems.length) throw validation([...err.details, ...problems]);
    throw err;
  }
  if (problems.length) throw validation(problems);

  const payload = await buildPayload(media, content);
  const text = contentOf(payload);
  const json = JSON.stringify(payload);
  const result = await core.accept(
    acceptInput({
      accountId: principal.accountId,
      route: target.route,
      source: 'gateway',
      scheduleAt: target.scheduleAt,
      tag: input.tag,
      custom: input.custom,
      messages: target.receivers.map((receiver) => ({ receiver, content: text, payload: json })),
    }),
  );
  return { result, scheduled: target.scheduleAt !== null };
}

function contentProblems(content: RcsContent): string[] {
  switch (content.kind) {
    case 'basic':
      return content.message.trim() === '' ? ['message: must not be blank'] : [];
    case 'file':
      return content.fileName.trim() === '' ? ['fileName: must not be blank'] : [];
    case 'card':
      return cardProblems(content.card);
    case 'carousel':
      return content.cards.flatMap((c, i) => cardProblems(c, `cards[${i}].`));
  }
}

/** Fetches every URL at once (each once), and reports every URL that failed, one entry per field. */
async function buildPayload(media: MediaStore, content: RcsContent): Promise<RcsPayload> {
  if (content.kind === 'basic') return { kind: 'basic', text: content.message };
  if (content.kind === 'file') {
    const file = await media.file(content.file);
    if (typeof file === 'string') throw validation([`file: ${file}`]);
    return { kind: 'file', fileName: content.fileName, media: file };
  }
  const cards = content.kind === 'card' ? [content.card] : content.cards;
  const fetches = new Map<string, Promise<RcsMedia | string>>();
  for (const c of cards) {
    if (c.cardImage && !fetches.has(c.cardImage)) fetches.set(c.cardImage, media.cardImage(c.cardImage));
  }
  const images = await Promise.all(cards.map((c) => (c.cardImage ? (fetches.get(c.cardImage) ?? Promise.resolve(null)) : Promise.resolve(null))));
  const problems: string[] = [];
  const built = cards.map((c, i) => {
    const image = images[i] ?? null;
    if (typeof image === 'string') {
      problems.push(`${content.kind === 'card' ? '' : `cards[${i}].`}cardImage: ${image}`);
      return toCard(c, null);
    }
    return toCard(c, image);
  });
  if (problems.length) throw validation(problems);
  const [first] = built;
  if (content.kind === 'card' && first) return { kind: 'card', card: first };
  return { kind: 'carousel', cards: built };
}
