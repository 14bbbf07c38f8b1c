import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DomainError, type ErrorCode } from '../../common/errors.ts';
import { TokenError, MAX_EXPIRY_MINUTES, type TokenErrorReason } from '../../tokens/store.ts';
import { TEXTS, type Texts } from './texts.ts';
import { NoSmsRouteError } from '../../messaging/legacy-send.ts';
import { STORAGE_RETRY_AFTER_S, storageFault } from '../../db/faults.ts';

/** The legacy envelope: Success, Object, Message, keys in this casing whatever the operation. */
export const Envelope = <T extends TSchema>(object: T) => Type.Object({ Success: Type.Boolean(), Object: object, Message: Type.String() });

export const FailureEnvelope = Envelope(Type.Null());

export const ok = <T>(object: T, message: string) => ({ Success: true as const, Object: object, Message: message });
export const failure = (message: string) => ({ Success: false as const, Object: null, Message: message });

/** Error answers of every legacy operation, for the OpenAPI document and serialization. */
export const errorResponses = {
  400: FailureEnvelope,
  401: Type.Null({ description: 'auth-key missing, wrong or revoked, or account deactivated: empty body' }),
  404: FailureEnvelope,
  405: FailureEnvelope,
  429: FailureEnvelope,
};

/**
 * A condition the legacy interface words itself: a domain error code (for
 * the status) and the text, produced in the configured language at the edge.
 */
export class LegacyProblem extends DomainError {
  constructor(
    code: ErrorCode,
    readonly say: (t: Texts) => string,
  ) {
    super(code, say(TEXTS.en));
  }
}

export const badRequest = (say: (t: Texts) => string) => new LegacyProblem('VALIDATION', say);

/** The statuses a legacy client knows (400, 401, 403, 404, 405, 429, 503); 403 only for reseller-only operations. */
const STATUS: Record<ErrorCode, number> = {
  VALIDATION: 400,
  INSUFFICIENT_BALANCE: 400,
  NOT_CANCELLABLE: 400,
  CONFLICT: 400,
  PAYLOAD_TOO_LARGE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
};

const TOKEN_TEXT: Record<TokenErrorReason, (t: Texts, e: TokenError) => string> = {
  EXPIRY_RANGE: (t) => t.tokenExpiryRange(MAX_EXPIRY_MINUTES),
  INVALID: (t) => t.tokenInvalid,
  EXPIRED: (t) => t.tokenExpired,
  USED: (t) => t.tokenUsed,
  WRONG_PHONE: (t) => t.tokenWrongPhone,
  PHONE_REQUIRED: (t) => t.tokenPhoneRequired,
  LOCKED: (t) => t.tokenLocked,
  RATE_LIMITED: (t) => t.tokenRateLimited,
  GUESS_LIMIT: (t, e) => t.tokenGuessLimit(e.retryAfterSeconds ?? 1),
};

/** Texts of domain errors raised below the legacy edge, by code. */
function domainText(error: DomainError, t: Texts): string {
  if (error instanceof LegacyProblem) return error.say(t);
  if (error instanceof TokenError) return TOKEN_TEXT[error.reason](t, error);
  if (error instanceof NoSmsRouteError) return t.noRoute;
  switch (error.code) {
    case 'INSUFFICIENT_BALANCE':
      return t.insufficientCredits;
    case 'FORBIDDEN':
      return t.forbidden;
    case 'CONFLICT':
      return t.conflict;
    case 'NOT_FOUND':
      return t.notFound;
    default:
      return t.invalidRequest(error.details.join('; '));
  }
}

/** Fields whose absence has its own text. */
const MISSING: Record<string, (t: Texts) => string> = {
  Receivers: (t) => t.noReceivers,
  Content: (t) => t.contentEmpty,
  ContextRuleName: (t) => t.ruleNameMissing,
  GroupName: (t) => t.groupNameMissing,
  ScheduleDate: (t) => t.scheduleMissing,
  PhoneNumber: (t) => t.phoneMissing,
  TokenCode: (t) => t.tokenCodeMissing,
  RequestUniqueId: (t) => t.requestIdInvalid,
};

/** Fields whose wrong value has its own text. */
const INVALID: Record<string, (t: Texts) => string> = {
  ExpireInMinutes: (t) => t.tokenExpiryRange(MAX_EXPIRY_MINUTES),
};

/** A whole number with both bounds (Skip, Limit) that is not one, or out of range: the text gives the range. */
function boundedInteger(e: ErrorObject): boolean {
  const schema = e.parentSchema as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
  return (
    (e.keyword === 'type' || e.keyword === 'minimum' || e.keyword === 'maximum') &&
    schema?.type === 'integer' &&
    typeof schema.minimum === 'number' &&
    typeof schema.maximum === 'number'
  );
}

/** One text per problem found by schema validation. */
export function validationText(errors: ErrorObject[], t: Texts): string {
  const lines = new Set<string>();
  // Paths with a problem of their own: a union's error there adds nothing (a set, so the cost stays linear).
  const plain = new Set<string>();
  for (const e of errors) if (e.keyword !== 'anyOf') plain.add(e.instancePath);
  // Fields given a text of their own, and fields only said to be invalid.
  const said = new Set<string>();
  const vague = new Set<string>();
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean);
    const field = path[0] ?? '';
    if (e.keyword === 'required') {
      const missing = path.length === 0 ? (e.params as { missingProperty: string }).missingProperty : field;
      lines.add((MISSING[missing] ?? ((x: Texts) => x.required(missing)))(t));
    } else if (path.length === 0) {
      lines.add(t.noBody);
    } else if (e.keyword === 'nul') {
      lines.add(t.nulCharacter(field));
    } else if (e.keyword === 'surrogate') {
      lines.add(t.loneSurrogate(field));
    } else if (INVALID[field]) {
      lines.add(INVALID[field](t));
    } else if (e.keyword === 'minLength' || e.keyword === 'minItems') {
      lines.add((MISSING[field] ?? ((x: Texts) => x.empty(field)))(t));
    } else if (e.keyword === 'maxLength') {
      lines.add(t.tooLong(field, Number((e.params as { limit: number }).limit)));
    } else if (boundedInteger(e)) {
      const { minimum, maximum } = e.parentSchema as { minimum: number; maximum: number };
      lines.add(t.wholeNumber(field, minimum, maximum));
    } else if (e.keyword === 'minimum' || e.keyword === 'maximum') {
      lines.add(t.outOfRange(field));
    } else if (e.keyword === 'enum') {
      lines.add(t.oneOf(field, (e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')));
    } else if (e.keyword === 'anyOf' && plain.has(e.instancePath)) {
      continue;
    } else {
      vague.add(field);
      lines.add(t.invalidField(field));
      continue;
    }
    said.add(field);
  }
  // A union's other forms refuse a value too (a Receivers text over its length is no list either): the field's own text says it.
  for (const field of vague) if (said.has(field)) lines.delete(t.invalidField(field));
  return [...lines].join(' ');
}

/**
 * The one place legacy errors become answers: a 401 has an empty body
 * (a legacy client expects none); every other error is the envelope with Success false. Nothing
 * a client sends reaches the 500 branch.
 */
export function legacyErrorHandler(t: Texts) {
  return (error: FastifyError | DomainError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) {
      if (error.code === 'UNAUTHORIZED') return reply.status(401).send();
      if (error.retryAfterSeconds !== undefined) void reply.header('Retry-After', String(error.retryAfterSeconds));
      return reply.status(STATUS[error.code]).send(failure(domainText(error, t)));
    }
    const fe = error as FastifyError;
    if (fe.validation) return reply.status(400).send(failure(validationText(fe.validation as ErrorObject[], t)));
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const text =
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
          ? t.invalidJson
          : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? t.noBody
            : fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
              ? t.bodyTooLarge
              : error instanceof SyntaxError
                ? t.invalidJson
                : t.noBody;
      return reply.status(400).send(failure(text));
    }
    // The database cannot work now (disk full, unreachable, busy): nothing was done, the client may retry.
    if (storageFault(error)) {
      request.log.error({ err: error }, 'storage fault; answered 503');
      return reply.status(503).header('retry-after', STORAGE_RETRY_AFTER_S).send(failure(t.unavailable));
    }
    request.log.error({ err: error }, 'unhandled legacy error');
    return reply.status(500).send(failure(t.internal(request.id)));
  };
}
