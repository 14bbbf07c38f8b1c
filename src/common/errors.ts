/**
 * Domain errors carry a stable code; each interface maps codes to its own
 * envelope and status at the edge (http/gateway, http/legacy, http/admin).
 */
export type ErrorCode =
  | 'VALIDATION'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'INSUFFICIENT_BALANCE'
  | 'CONFLICT'
  | 'NOT_CANCELLABLE'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  /** A service the operation needs is down (e.g. RCS media storage): retry later; nothing was done. */
  | 'UNAVAILABLE';

export class DomainError extends Error {
  /** RATE_LIMITED: seconds until a retry can succeed; each interface sends it as `Retry-After`. */
  retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** One entry per problem, for validation errors. */
    readonly details: string[] = [message],
  ) {
    super(message);
  }
}

export const validation = (details: string[]) =>
  new DomainError('VALIDATION', details.length === 1 ? (details[0] ?? 'invalid request') : 'The request has invalid fields.', details);
export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} was not found.`);
export const unauthorized = (why = 'A valid API key is required (header x-api-key).') => new DomainError('UNAUTHORIZED', why);
export const forbidden = (why: string) => new DomainError('FORBIDDEN', why);
