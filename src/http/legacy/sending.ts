import type { AcceptResult } from '../../messaging/accept.ts';
import { formatDate } from './dates.ts';
import type { Texts } from './texts.ts';

/** The Message of a send: how many will receive it, what it cost, blocked numbers skipped. */
export function sentText(t: Texts, r: AcceptResult, scheduleAt: number | null, timezone: string): string {
  const sending = r.messages - r.blocked;
  return scheduleAt === null ? t.accepted(sending, r.credits, r.blocked) : t.scheduled(sending, r.credits, r.blocked, formatDate(scheduleAt, timezone) ?? '');
}

/** Content and ForceContent: blank is absent. */
export const textOf = (value: string | undefined | null): string | null => (value !== undefined && value !== null && value.trim() !== '' ? value.trim() : null);
