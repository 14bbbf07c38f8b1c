import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DomainError, type ErrorCode } from '../../shared/errors.ts';
import { TokenError, MAX_EXPIRY_MINUTES, type TokenErrorReason } from '../../tokens/store.ts';
import { TEXTS, type Texts } from './texts.ts';

/** Spec 2.13: keys in this casing, whatever the operation. */
export const Envelope = <T extends TSchema>(object: T) =>
  Type.Object({ Success: Type.Boolean(), Object: object, Message: Type.String() });

export const FailureEnvelope = Envelope(Type.Null());

export const ok = <T>(object: T, message: string) => ({ Success: true as const, Object: object, Message: message });
export const failure = (message: string) => ({ Success: false as const, Object: null, Message: message });

/** Error answers of every legacy operation, for the OpenAPI document and serialization. */
export const errorResponses = {
  400: FailureEnvelope,
  401: Type.Null({ description: 'auth-key missing, wrong or revoked, or account deactivated: empty body (spec 5.7)' }),
  404: FailureEnvelope,
  405: FailureEnvelope,
  429: FailureEnvelope,
};

/**
 * A condition the legacy interface words itself: a domain error code (for
 * the status) and the text, produced in the configured language at the edge.
 */
export class LegacyProblem extends DomainError {
  constructor(code: ErrorCode, readonly say: (t: Texts) => string) {
    super(code, say(TEXTS.en));
  }
}

export const badRequest = (say: (t: Texts) => string) => new LegacyProblem('VALIDATION', say);

/** Spec 7.2: the statuses a legacy client knows; 403 only for reseller-only operations. */
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

const TOKEN_TEXT: Record<TokenErrorReason, (t: Texts) => string> = {
  EXPIRY_RANGE: (t) => t.tokenExpiryRange(MAX_EXPIRY_MINUTES),
  INVALID: (t) => t.tokenInvalid,
  EXPIRED: (t) => t.tokenExpired,
  USED: (t) => t.tokenUsed,
  WRONG_PHONE: (t) => t.tokenWrongPhone,
  PHONE_REQUIRED: (t) => t.tokenPhoneRequired,
  LOCKED: (t) => t.tokenLocked,
  RATE_LIMITED: (t) => t.tokenRateLimited,
};

/** Texts of domain errors raised below the legacy edge, by code. */
function domainText(error: DomainError, t: Texts): string {
  if (error instanceof LegacyProblem) return error.say(t);
  if (error instanceof TokenError) return TOKEN_TEXT[error.reason](t);
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

/** Fields whose absence is a condition of spec 7.3 with its own text. */
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

/** One text per problem found by schema validation. */
export function validationText(errors: ErrorObject[], t: Texts): string {
  const lines = new Set<string>();
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean);
    const field = path[0] ?? '';
    if (e.keyword === 'required') {
      const missing = path.length === 0 ? (e.params as { missingProperty: string }).missingProperty : field;
      lines.add((MISSING[missing] ?? ((x: Texts) => x.required(missing)))(t));
    } else if (path.length === 0) {
      lines.add(t.noBody);
    } else if (INVALID[field]) {
      lines.add(INVALID[field](t));
    } else if (e.keyword === 'minLength' || e.keyword === 'minItems') {
      lines.add((MISSING[field] ?? ((x: Texts) => x.empty(field)))(t));
    } else if (e.keyword === 'maxLength') {
      lines.add(t.tooLong(field, Number((e.params as { limit: number }).limit)));
    } else if (e.keyword === 'minimum' || e.keyword === 'maximum') {
      lines.add(t.outOfRange(field));
    } else if (e.keyword === 'enum') {
      lines.add(t.oneOf(field, ((e.params as { allowedValues: unknown[] }).allowedValues).map(String).join(', ')));
    } else if (e.keyword !== 'anyOf' || !errors.some((o) => o !== e && o.instancePath === e.instancePath && o.keyword !== 'anyOf')) {
      lines.add(t.invalidField(field));
    }
  }
  return [...lines].join(' ');
}

/** SQLite busy, PostgreSQL connection trouble: the client should retry (spec 7.3 "503 timeout"). */
function isTransient(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code.startsWith('08') || code === '57P01' || code === '53300');
}

/**
 * The one place legacy errors become answers: a 401 has an empty body
 * (spec 5.7); every other error is the envelope with Success false. Nothing
 * a client sends reaches the 500 branch.
 */
export function legacyErrorHandler(t: Texts) {
  return (error: FastifyError | DomainError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) {
      if (error.code === 'UNAUTHORIZED') return reply.status(401).send();
      return reply.status(STATUS[error.code]).send(failure(domainText(error, t)));
    }
    const fe = error as FastifyError;
    if (fe.validation) return reply.status(400).send(failure(validationText(fe.validation as ErrorObject[], t)));
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const text =
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? t.invalidJson
        : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? t.noBody
        : fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? t.bodyTooLarge
        : error instanceof SyntaxError ? t.invalidJson
        : t.noBody;
      return reply.status(400).send(failure(text));
    }
    if (isTransient(error)) {
      request.log.warn({ err: error }, 'legacy request hit a transient database error');
      return reply.status(503).send(failure(t.unavailable));
    }
    request.log.error({ err: error }, 'unhandled legacy error');
    return reply.status(500).send(failure(t.internal(request.id)));
  };
}
