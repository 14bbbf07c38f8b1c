import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { failure } from './gateway/envelope.ts';

/**
 * Answers to requests that are not well-formed HTTP, or whose request line
 * or headers are too large: always a 4xx with a JSON body in the envelope of
 * the interface the path belongs to, never Node's or Fastify's own body
 * (docs/decisions.md, "Request size, validation cost, malformed HTTP").
 */

/** Longest URL (path and query) answered; longer is a 414. */
export const MAX_URL_BYTES = 16 * 1024;
/** Most header bytes (names and values) answered; more is a 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Node's parser bound on the request head (the URL and the headers). Above
 * the two limits: a head within it reaches the app, which knows the path and
 * answers in the right envelope; only a larger one is refused by the parser.
 */
export const PARSER_HEAD_LIMIT = 32 * 1024;

/** Methods the interfaces use (for texts and the Allow header of a refused unknown method). */
const METHODS = 'GET, POST, PUT, PATCH, DELETE';

export type Interface = 'gateway' | 'legacy' | 'admin';

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);

/** The interface a request path belongs to: Legacy v2 under /api/v2, operator under /admin, the gateway everywhere else. */
export function interfaceOf(path: string): Interface {
  if (under(path, '/api/v2')) return 'legacy';
  if (under(path, '/admin')) return 'admin';
  return 'gateway';
}

/** Statuses a legacy client knows; any other 4xx is a 400 there (the text says what is wrong). */
const LEGACY_STATUSES = new Set([400, 401, 403, 404, 405, 429]);

export interface Refusal {
  status: number;
  text: string;
  headers?: Record<string, string>;
}

/** Status and JSON body of a refusal in an interface's envelope. */
export function refusalAnswer(iface: Interface, refusal: Refusal): { status: number; body: unknown } {
  const { status, text } = refusal;
  if (iface === 'legacy') return { status: LEGACY_STATUSES.has(status) ? status : 400, body: { Success: false, Object: null, Message: text } };
  if (iface === 'admin') return { status, body: { error: text } };
  return { status, body: failure(text, [text]) };
}

/** Answers a refusal through Fastify, in the envelope of the request's path. */
export function sendRefusal(reply: FastifyReply, url: string, refusal: Refusal): FastifyReply {
  const { status, body } = refusalAnswer(interfaceOf(url), refusal);
  if (refusal.headers) void reply.headers(refusal.headers);
  return reply.status(status).type('application/json; charset=utf-8').send(body);
}

/** A request head over the limits above, an HTTP/1.1 request without Host, or a compressed body; null when none. */
export function headRefusal(raw: IncomingMessage): Refusal | null {
  const url = raw.url ?? '';
  if (url.length > MAX_URL_BYTES) {
    return { status: 414, text: `The URL is too long (${url.length} characters, at most ${MAX_URL_BYTES}); send long values in the request body.` };
  }
  let size = 0;
  for (const part of raw.rawHeaders) size += part.length;
  if (size > MAX_HEADER_BYTES) {
    return { status: 431, text: `The request headers are too large (${size} bytes, at most ${MAX_HEADER_BYTES}); send fewer or shorter headers.` };
  }
  // Checked here rather than by Node (requireHostHeader), whose answer has no body.
  if (raw.httpVersion === '1.1' && raw.headers.host === undefined) return { status: 400, text: 'An HTTP/1.1 request needs a Host header.' };
  return encodedBody(raw);
}

/** A body sent compressed (Content-Encoding gzip...): read as JSON it would be "not valid JSON", which says nothing of the cause. */
function encodedBody(raw: IncomingMessage): Refusal | null {
  const encoding = raw.headers['content-encoding']?.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return null;
  const hasBody = raw.headers['transfer-encoding'] !== undefined || (raw.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) return null;
  return {
    status: 415,
    text: `Content-Encoding ${encoding.slice(0, 40)} is not supported; send the body uncompressed.`,
    headers: { 'accept-encoding': 'identity' },
  };
}

/** The root hook: refuses a too-large head before authentication and routing work. */
export async function refuseLargeHeads(request: FastifyRequest, reply: FastifyReply) {
  const refusal = headRefusal(request.raw);
  if (refusal) return sendRefusal(reply, request.url, refusal);
}

/** Node's parser error: its code (HPE_...), reason, and the chunk it failed on. */
interface ParseError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: unknown;
}

/** "METHOD /path" at the start of the bytes the parser failed on: the request line, when that chunk holds it. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\/[^\s?#]*)/;

/** What Node's HTTP parser refused, as a refusal. */
export function parserRefusal(err: ParseError, requestLine: string | null): Refusal {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // The request line is what is too long when the parser failed on it (no line end in the chunk
      // that starts it), or when it is over the URL limit by itself.
      const end = requestLine?.indexOf('\n') ?? -1;
      if (requestLine !== null && (end < 0 || end > MAX_URL_BYTES)) {
        return { status: 414, text: `The URL is too long (the request line exceeds ${PARSER_HEAD_LIMIT} bytes); send long values in the request body.` };
      }
      return {
        status: 431,
        text: `The request line and headers are too large (more than ${PARSER_HEAD_LIMIT} bytes); send fewer or shorter headers, and long values in the body.`,
      };
    }
    case 'HPE_INVALID_METHOD':
      return { status: 405, text: `Unknown HTTP method; use ${METHODS} (HTTP/1.1).`, headers: { Allow: METHODS } };
    case 'HPE_INVALID_HEADER_TOKEN':
      return {
        status: 400,
        text: 'A header name or value holds a character HTTP does not allow (a control character, or a space or separator in a name); fix that header.',
      };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return {
        status: 400,
        text: "Conflicting or invalid Content-Length / Transfer-Encoding headers; send one Content-Length with the body's size in bytes, or Transfer-Encoding: chunked alone.",
      };
    case 'HPE_INVALID_VERSION':
      return { status: 400, text: 'Unsupported HTTP version; use HTTP/1.1.' };
    case 'HPE_INVALID_URL':
      return { status: 400, text: 'The request target is not a valid path; percent-encode spaces and control characters.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, text: 'The request took too long to arrive; send it again.' };
    default:
      return { status: 400, text: `Malformed HTTP request (${err.reason ?? err.code ?? err.message}); send a well-formed HTTP/1.1 request.` };
  }
}

/**
 * Fastify's clientErrorHandler: Node's parser refused the bytes before any
 * request existed. Writes the answer on the socket and closes it. The path
 * (hence the envelope) is known when the chunk the parser failed on starts
 * with the request line; otherwise the gateway envelope is used.
 */
export function clientErrorHandler(this: FastifyInstance, err: ParseError, socket: Socket): void {
  // A reset connection, or one already closed: nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const head = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : '';
  const line = REQUEST_LINE.exec(head);
  const requestLine = line ? head : null;
  const refusal = parserRefusal(err, requestLine);
  const { status, body } = refusalAnswer(interfaceOf(line?.[1] ?? ''), refusal);
  this.log.debug({ err, status }, 'malformed HTTP request refused');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(body);
  const extra = Object.entries(refusal.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${extra}Connection: close\r\n\r\n${text}`,
    () => socket.destroy(),
  );
  // A peer that never reads the answer does not keep the socket.
  setTimeout(() => socket.destroy(), 5_000).unref();
}
