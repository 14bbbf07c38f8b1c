import { DateTime } from 'luxon';
import type { Topic } from './tables.ts';

/**
 * What is posted for each event. Webhooks get the Standard Webhooks shape
 * `{type, timestamp, data}`; legacy callbacks get the Legacy v2 panel shapes
 * of docs/webhooks.md. docs/webhooks.md shows examples of each.
 */

/** A status change (one status_log row) with the message it belongs to. */
export interface StatusEvent {
  messageId: string;
  requestId: string;
  receiver: string;
  status: string;
  statusDetails: string | null;
  custom: string | null;
  tag: string | null;
  /** The message's sender identifier (legacy `Sender`), if any. */
  sender: string | null;
  at: number;
}

/** A reply (one replies row) with the message it answers. */
export interface ReplyEvent {
  sender: string;
  content: string;
  receivedAt: number;
  message: {
    id: string;
    requestId: string;
    receiver: string;
    content: string;
    custom: string | null;
    tag: string | null;
    sender: string | null;
    sentAt: number | null;
  } | null;
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();

/** Body of a `message.status` webhook delivery. */
export function statusBody(e: StatusEvent): string {
  return envelope('message.status', e.at, {
    messageId: e.messageId,
    requestId: e.requestId,
    receiver: e.receiver,
    status: e.status,
    statusDetails: e.statusDetails,
    custom: e.custom,
    tag: e.tag,
    time: iso(e.at),
  });
}

/** Body of a `message.reply` webhook delivery: the received-message record (as in the received report: sender, content, receivedAt, messageId) plus the message it answers. */
export function replyBody(e: ReplyEvent): string {
  const m = e.message;
  return envelope('message.reply', e.receivedAt, {
    sender: e.sender,
    content: e.content,
    receivedAt: iso(e.receivedAt),
    messageId: m ? m.id : null,
    message: m
      ? {
          id: m.id,
          requestId: m.requestId,
          receiver: m.receiver,
          content: m.content,
          custom: m.custom,
          tag: m.tag,
          sentAt: m.sentAt === null ? null : iso(m.sentAt),
        }
      : null,
  });
}

function envelope(type: Topic, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: iso(at), data });
}

/** Legacy status callback; `StatusDate` in UTC (docs/webhooks.md, "Legacy v2 callbacks"). */
export function legacyStatusBody(e: StatusEvent): string {
  return JSON.stringify({
    Sender: e.sender,
    Status: e.status,
    PhoneNumber: e.receiver,
    StatusDate: DateTime.fromMillis(Number(e.at), { zone: 'utc' }).startOf('second').toISO({ suppressMilliseconds: true }),
  });
}

/**
 * Legacy reply callback: `Sender` is the number that replied, `SentContent`
 * the text it answers, `SenderName` the sender identifier the answered
 * message was sent with. `ReceiveDate` in the account's time zone with its
 * offset, like every date of the legacy interface.
 */
export function legacyReplyBody(e: ReplyEvent, timezone: string): string {
  return JSON.stringify({
    Sender: e.sender,
    SentContent: e.message ? e.message.content : null,
    ReceivedContent: e.content,
    ReceiveDate: DateTime.fromMillis(Number(e.receivedAt), { zone: timezone }).startOf('second').toISO({ suppressMilliseconds: true }),
    SenderName: e.message ? e.message.sender : null,
  });
}
