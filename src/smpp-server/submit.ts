/**
 * submit_sm, query_sm and cancel_sm of a bound credential, on the same use
 * cases as the HTTP sends: a submit is one request of one message through
 * core.accept (account, route, blocklist, balance, charging by the 160/153
 * rule of the whole text, reports, webhooks), with source `smpp`. Each
 * answers a command_status and, for a submit, the gateway's message id,
 * only once what it did is on disk.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database, MessageStatus, RouteRow } from '../db/tables.ts';
import type { AcceptInput, AcceptResult } from '../messaging/accept.ts';
import { cancelRequest } from '../messaging/cancel.ts';
import { chargedSegments } from '../billing/segments.ts';
import { DomainError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import { storageFault } from '../db/faults.ts';
import type { CredentialRow } from './credentials.ts';
import { joinParts, readSubmit, senderOf, ServerStatus, type Submit } from './message.ts';
import { dropParts, pendingPartsOf, storePart } from './parts.ts';
import { receiptDate, finalState } from './records.ts';
import { MAX_TEXT_CHARACTERS, unstorable } from '../common/text.ts';

export interface SubmitDeps {
  db: Kysely<Database>;
  routes: { get(accountId: number, routeId: number): Promise<RouteRow> };
  accept(input: AcceptInput): Promise<AcceptResult>;
  log: Logger;
}

export type Answer = { status: number; messageId?: string; reason?: string };

/** Parts of one text are handled one at a time (per credential and text), so that two parts never both complete it. */
const partChains = new Map<string, Promise<unknown>>();

function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = partChains.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => undefined);
  partChains.set(key, tail);
  void tail.then(() => {
    if (partChains.get(key) === tail) partChains.delete(key);
  });
  return run;
}

/** Two octets a UCS-2 character: an odd count (once a long text's parts are joined) would lose its last octet. */
const ODD_UCS2: Answer = { status: ServerStatus.RINVMSGLEN, reason: 'a UCS-2 text of an odd number of octets: UCS-2 has two octets a character' };

/** A submit_sm of a bound credential: its answer once the message (or the part) is durable. */
export async function submitMessage(deps: SubmitDeps, credential: CredentialRow, pdu: Parameters<typeof readSubmit>[0]): Promise<Answer> {
  const submit = readSubmit(pdu);
  if ('status' in submit) return submit;
  const accountId = Number(credential.account_id);
  try {
    if (!submit.concat) {
      const text = joinParts([submit]);
      return text === null ? ODD_UCS2 : await acceptText(deps, credential, submit, text, newId(), undefined);
    }
    const key = `${credential.system_id}\u0000${submit.sourceAddr}|${submit.receiver}|${submit.concat.reference}|${submit.concat.total}`;
    return await serialized(key, async () => {
      const stored = await storePart(deps.db, credential.system_id, accountId, submit);
      if (!stored.complete) return { status: ServerStatus.ROK, messageId: stored.messageId };
      const text = joinParts(stored.parts);
      if (text === null) return ODD_UCS2;
      return acceptText(deps, credential, { ...submit, registeredDelivery: stored.registeredDelivery }, text, stored.messageId, stored.groupKey);
    });
  } catch (err) {
    return failure(deps.log, err);
  }
}

const UNSTORABLE = {
  nul: 'the text contains the NUL character (U+0000)',
  surrogate: 'the text holds half of a UTF-16 surrogate pair without the other half',
};

async function acceptText(
  deps: SubmitDeps,
  credential: CredentialRow,
  submit: Submit,
  text: string,
  messageId: string,
  partsKey: string | undefined,
): Promise<Answer> {
  // Refused on every database, as over HTTP: no store keeps either as sent (src/common/text.ts).
  const why = unstorable(text);
  if (why) return { status: ServerStatus.RSUBMITFAIL, reason: UNSTORABLE[why] };
  const characters = [...text].length;
  if (characters > MAX_TEXT_CHARACTERS)
    return { status: ServerStatus.RINVMSGLEN, reason: `the text has ${characters} characters; at most ${MAX_TEXT_CHARACTERS}, as over HTTP` };
  const accountId = Number(credential.account_id);
  const route = await deps.routes.get(accountId, Number(credential.route_id));
  const input: AcceptInput = {
    accountId,
    route,
    source: 'smpp',
    content: text,
    tag: null,
    custom: null,
    sender: senderOf(submit),
    scheduleAt: submit.scheduleAt,
    items: [{ receiver: submit.receiver, content: text, segments: chargedSegments(text), tag: null, custom: null, payload: null, id: messageId }],
    smpp: {
      systemId: credential.system_id,
      registeredDelivery: submit.registeredDelivery,
      sourceAddr: submit.sourceAddr,
      sourceTon: submit.sourceTon,
      sourceNpi: submit.sourceNpi,
      destAddr: submit.destAddr,
      destTon: submit.destTon,
      destNpi: submit.destNpi,
      validUntil: submit.validUntil,
      partsKey,
    },
  };
  await deps.accept(input);
  return { status: ServerStatus.ROK, messageId };
}

/** The status a failed submit is answered with (docs/smpp-server.md, "Statuses"). */
function failure(log: Logger, err: unknown): Answer {
  if (err instanceof DomainError) {
    if (err.code === 'INSUFFICIENT_BALANCE') return { status: ServerStatus.RSUBMITFAIL, reason: err.message };
    if (err.code === 'NOT_FOUND') return { status: ServerStatus.RSUBMITFAIL, reason: `the credential's route is not granted to the account: ${err.message}` };
    if (err.code === 'VALIDATION') return { status: ServerStatus.RSUBMITFAIL, reason: err.message };
  }
  if (storageFault(err)) {
    log.error({ err }, 'SMPP submit could not be written; answered ESME_RSYSERR');
    return { status: ServerStatus.RSYSERR, reason: 'the database cannot store anything right now' };
  }
  log.error({ err }, 'SMPP submit failed; answered ESME_RSYSERR');
  return { status: ServerStatus.RSYSERR, reason: 'internal error' };
}

/** message_state (SMPP 3.4 §5.2.28) of our statuses: waiting or with the carrier ENROUTE, then the final ones. */
const STATE: Record<MessageStatus, number> = {
  SCHEDULED: 1,
  QUEUED: 1,
  SENDING: 1,
  SENT: 1,
  DELIVERED: 2,
  EXPIRED: 3,
  CANCELLED: 4,
  UNDELIVERED: 5,
  FAILED: 8,
  BLOCKED: 8,
};

/** query_sm: the state of one of the credential's account's messages. */
export async function queryMessage(
  deps: SubmitDeps,
  credential: CredentialRow,
  messageId: string,
): Promise<Answer & { params?: Record<string, string | number> }> {
  try {
    const row = await deps.db
      .selectFrom('messages')
      .select(['status', 'status_details', 'status_at'])
      .where('id', '=', messageId)
      .where('account_id', '=', Number(credential.account_id))
      .executeTakeFirst();
    if (!row) {
      if (await pendingPartsOf(deps.db, credential.system_id, messageId))
        return { status: ServerStatus.ROK, params: { message_id: messageId, final_date: '', message_state: 1, error_code: 0 } };
      return { status: ServerStatus.RQUERYFAIL, reason: `no message ${messageId} of this account` };
    }
    const final = finalState(row.status, row.status_details);
    const err = Number(/err:\s*(\d{1,3})/i.exec(row.status_details ?? '')?.[1] ?? 0);
    return {
      status: ServerStatus.ROK,
      params: {
        message_id: messageId,
        final_date: final ? `${receiptDate(Number(row.status_at))}00000+` : '',
        message_state: final ? final.state : STATE[row.status],
        error_code: err,
      },
    };
  } catch (err) {
    return failure(deps.log, err);
  }
}

/** cancel_sm: a message of the account still waiting (scheduled or queued), or a long text whose parts have not all come. */
export async function cancelMessage(deps: SubmitDeps, credential: CredentialRow, messageId: string): Promise<Answer> {
  if (messageId === '') return { status: ServerStatus.RCANCELFAIL, reason: 'cancel_sm needs the message_id' };
  try {
    const accountId = Number(credential.account_id);
    const row = await deps.db.selectFrom('messages').select(['request_id']).where('id', '=', messageId).where('account_id', '=', accountId).executeTakeFirst();
    if (!row) {
      const key = await pendingPartsOf(deps.db, credential.system_id, messageId);
      if (!key) return { status: ServerStatus.RCANCELFAIL, reason: `no message ${messageId} of this account` };
      await dropParts(deps.db, credential.system_id, key);
      return { status: ServerStatus.ROK };
    }
    await cancelRequest(deps.db, accountId, row.request_id);
    return { status: ServerStatus.ROK };
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'NOT_CANCELLABLE' || err.code === 'NOT_FOUND'))
      return { status: ServerStatus.RCANCELFAIL, reason: err.message };
    return failure(deps.log, err);
  }
}
