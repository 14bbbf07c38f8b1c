import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { Socket } from 'node:net';
import type * as Undici from 'undici';
import { SafeFetchError, addressRefusal, checkUrl, hostAllowed, parseAllowList, type AllowList } from './policy.ts';

export { SafeFetchError, checkUrl, parseAllowList, type AllowList } from './policy.ts';

export type HttpMethod = Undici.Dispatcher.HttpMethod;

export interface SafeFetchOptions {
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
  /** Whole exchange, redirects included. Default 10 s. */
  timeoutMs?: number;
  /** Largest response body read. Default 10 MiB. */
  maxBytes?: number;
  /** When the body is larger: 'error' (default) refuses it, 'truncate' keeps the first maxBytes. */
  onTooLarge?: 'error' | 'truncate';
  /** Redirects followed, each hop re-checked. Default 3; 0 returns the 3xx as is. */
  maxRedirects?: number;
  /** Aborts the exchange (e.g. at shutdown). */
  signal?: AbortSignal;
}

export interface SafeResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  truncated: boolean;
}

/** Name resolution; the system resolver by default, a fake one in tests. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

export interface SafeFetcherOptions {
  /** The operator's exceptions, in the `GATEWAY_FETCH_ALLOW` format (comma-separated hosts, addresses, CIDRs). */
  allow?: string | undefined;
  connectTimeoutMs?: number;
  resolve?: Resolver;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 3;

/**
 * An outbound HTTP client that cannot be turned against the operator's
 * network (see policy.ts for the rules). The URL is checked before each
 * request and each redirect hop; the address is checked when the socket
 * connects: a custom DNS lookup drops refused addresses, and the connected
 * socket's remote address is checked once more, so a name that resolves to
 * a public address at registration and to a private one later (DNS
 * rebinding) is still refused. One instance per process; close() at shutdown.
 */
export class SafeFetcher {
  readonly allow: AllowList;
  /** undici, loaded at the first fetch: a process that never calls out does not carry it (about 20 MB). */
  private client: Promise<{ agent: Undici.Agent; request: typeof Undici.request }> | null = null;

  private readonly resolve: Resolver;
  private readonly connectTimeoutMs: number;

  constructor(options: SafeFetcherOptions = {}) {
    this.allow = parseAllowList(options.allow);
    this.resolve = options.resolve ?? systemResolver;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  private undici(): Promise<{ agent: Undici.Agent; request: typeof Undici.request }> {
    this.client ??= import('undici').then(({ Agent, buildConnector, request }) => ({ agent: this.agentOf(Agent, buildConnector), request }));
    return this.client;
  }

  private agentOf(Agent: typeof Undici.Agent, buildConnector: typeof Undici.buildConnector): Undici.Agent {
    const connector = buildConnector({ timeout: this.connectTimeoutMs, lookup: this.lookup });
    return new Agent({
      connect: (opts, callback) => {
        connector(opts, (err, socket) => {
          if (err || !socket) return callback(err ?? new SafeFetchError('NETWORK', 'no socket'), null);
          const refusal = this.connectedRefusal(opts.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase(), socket);
          if (refusal) {
            socket.destroy();
            return callback(new SafeFetchError('ADDRESS', refusal), null);
          }
          return callback(null, socket);
        });
      },
      keepAliveTimeout: 4_000,
    });
  }

  /** The registration-time check (no DNS): scheme, port, literal addresses. Throws SafeFetchError. */
  check(url: string | URL): URL {
    return checkUrl(url, this.allow);
  }

  async fetch(input: string | URL, options: SafeFetchOptions = {}): Promise<SafeResponse> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
    let url = this.check(input);
    let method: HttpMethod = options.method ?? 'GET';
    let body = options.body ?? null;
    let headers = { ...(options.headers ?? {}) };
    for (let hop = 0; ; hop++) {
      const res = await this.once(url, method, headers, body, signal, options, timeout);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.status) || location === undefined || maxRedirects === 0) return res;
      if (hop >= maxRedirects) throw new SafeFetchError('REDIRECTS', `more than ${maxRedirects} redirects`);
      let target: string;
      try {
        target = new URL(location, url).toString();
      } catch {
        throw new SafeFetchError('URL', `the redirect location "${location}" is not a URL`);
      }
      const next = this.check(target);
      // 303, and 301/302 after a POST (what browsers do), continue as a GET without the body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = null;
        headers = withoutHeaders(headers, ['content-type', 'content-length']);
      }
      if (next.origin !== url.origin) headers = withoutHeaders(headers, ['authorization', 'cookie', 'proxy-authorization']);
      url = next;
    }
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).agent.close();
  }

  private async once(
    url: URL,
    method: HttpMethod,
    headers: Record<string, string>,
    body: string | Uint8Array | null,
    signal: AbortSignal,
    options: SafeFetchOptions,
    timeout: AbortSignal,
  ): Promise<SafeResponse> {
    const { agent, request } = await this.undici();
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { dispatcher: agent, method, headers, body, signal, maxRedirections: 0 });
    } catch (err) {
      throw asFetchError(err, timeout);
    }
    const { body: buffer, truncated } = await readCapped(res.body, options.maxBytes ?? 10 * 1024 * 1024, options.onTooLarge ?? 'error', timeout);
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: res.statusCode, headers: out, body: buffer, url: url.toString(), truncated };
  }

  /**
   * DNS lookup for the connector: every refused address is dropped; when none
   * is left the connection fails before any packet is sent. An allow-listed
   * host name may resolve to anything.
   */
  private readonly lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    this.resolve(hostname).then(
      (all) => {
        const addresses = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        const host = hostname.toLowerCase();
        const usable = this.allow.hosts.has(host) ? addresses : addresses.filter((a) => addressRefusal(a.address, this.allow) === null);
        if (usable.length === 0) {
          const why = addresses.map((a) => addressRefusal(a.address, this.allow)).find((w) => w !== null) ?? 'no address';
          return callback(new SafeFetchError('ADDRESS', `${hostname} resolves to a refused address (${why}); only public addresses may be called`), []);
        }
        if (options.all) return callback(null, usable);
        const first = usable[0] as LookupAddress;
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };

  /** The last line of defence: the address the socket actually connected to. */
  private connectedRefusal(host: string, socket: Socket): string | null {
    const remote = socket.remoteAddress;
    if (!remote) return 'the connection has no remote address';
    if (hostAllowed(host, this.allow)) return null;
    const why = addressRefusal(remote, this.allow);
    return why ? `${host} connected to a refused address (${why}); only public addresses may be called` : null;
  }
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}

async function readCapped(stream: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number, onTooLarge: 'error' | 'truncate', timeout: AbortSignal) {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        stream.destroy();
        if (onTooLarge === 'error') throw new SafeFetchError('TOO_LARGE', `the response is larger than ${maxBytes} bytes`);
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    throw asFetchError(err, timeout);
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

/** Refusals keep their code; a timeout is TIMEOUT; everything else is NETWORK with the cause's text. */
function asFetchError(err: unknown, timeout: AbortSignal): SafeFetchError {
  if (err instanceof SafeFetchError) return err;
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof SafeFetchError) return cause;
  if (timeout.aborted) return new SafeFetchError('TIMEOUT', 'the request timed out');
  const text = err instanceof Error ? `${err.message}${'code' in err && typeof err.code === 'string' ? ` (${err.code})` : ''}` : String(err);
  return new SafeFetchError('NETWORK', text);
}
