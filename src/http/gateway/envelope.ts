import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../common/errors.ts';
import { describeValidation } from '../validation.ts';
import { STORAGE_RETRY_AFTER_S, storageFault } from '../../db/faults.ts';

/** The gateway's answer envelope (CoreResult): hasError, message, totalRecords, errors, object. */
export const Envelope = <T extends TSchema>(object: T) =>
  Type.Object({
    hasError: Type.Boolean(),
    message: Type.Union([Type.String(), Type.Null()]),
    totalRecords: Type.Integer(),
    errors: Type.Union([Type.Array(Type.String()), Type.Null()]),
    object,
  });

export const ErrorEnvelope = Envelope(Type.Null());

export const ok = <T>(object: T, message: string | null = null, totalRecords = 0) => ({
  hasError: false,
  message,
  totalRecords,
  errors: [] as string[],
  object,
});

export const failure = (message: string, errors: string[]) => ({ hasError: true, message, totalRecords: 0, errors, object: null });

/** HTTP status of each domain error on the Gateway interface and the operator API (the legacy interface has its own). */
export const STATUS: Record<ErrorCode, number> = {
  VALIDATION: 400,
  INSUFFICIENT_BALANCE: 400,
  NOT_CANCELLABLE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
};

const STORAGE_TEXT = {
  full: "The gateway cannot store anything right now: its database's disk is full. Nothing was done (nothing accepted, nothing charged); send the request again later.",
  unavailable: "The gateway's database is unavailable right now. Nothing was done (nothing accepted, nothing charged); send the request again later.",
};

/** Standard error answers for every error schema in OpenAPI. */
export const errorResponses = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope };

/**
 * The one place gateway errors become envelopes: domain errors by code,
 * Fastify's own (bad JSON, body too large, validation) by their 4xx status;
 * anything else is a 500 that hides internals but carries the request id.
 */
export function gatewayErrorHandler(error: FastifyError | DomainError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof DomainError) {
    if (error.retryAfterSeconds !== undefined) void reply.header('Retry-After', String(error.retryAfterSeconds));
    return reply.status(STATUS[error.code]).send(failure(error.message, error.details));
  }
  const fe = error as FastifyError;
  if (fe.validation) {
    const errors = describeValidation(fe.validation as Parameters<typeof describeValidation>[0], fe.validationContext ?? 'body');
    return reply.status(400).send(failure(errors.length === 1 ? (errors[0] ?? 'Invalid request.') : 'The request has invalid fields.', errors));
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const text = clientErrorText(fe);
    return reply.status(fe.statusCode).send(failure(text, [text]));
  }
  const fault = storageFault(error);
  if (fault) {
    request.log.error({ err: error }, 'storage fault; answered 503');
    const text = STORAGE_TEXT[fault];
    return reply
      .status(503)
      .header('retry-after', STORAGE_RETRY_AFTER_S)
      .send(failure(text, [text]));
  }
  request.log.error({ err: error }, 'unhandled error');
  const text = `Internal error; quote request id ${request.id} to the operator.`;
  return reply.status(500).send(failure(text, [text]));
}

/** Readable texts for Fastify's client errors. */
export function clientErrorText(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'The body is not valid JSON.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The body is empty; send a JSON object.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type; send application/json.';
    default:
      return error.message;
  }
}
