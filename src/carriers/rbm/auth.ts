import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { Logger } from 'pino';

/**
 * Access tokens for the RBM API. Google's RBM authenticates with a service
 * account: we sign a JWT with the account's private key (RS256) and trade
 * it at the key's token_uri for a short-lived bearer token (OAuth 2.0 JWT
 * bearer grant, RFC 7523). A static token (`tokenEnv`) is still accepted
 * for platforms or proxies that hand one out.
 */

export const RBM_SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The fields of a Google service-account key file that we use. */
export interface ServiceAccountKey {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | null;
  tokenUri: string;
}

/** Reads a service-account key (the JSON Google hands out); throws an Error saying what is wrong. */
export function parseServiceAccount(json: string): ServiceAccountKey {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new Error(`it is not JSON (${(err as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('it is not a JSON object');
  const o = raw as Record<string, unknown>;
  const text = (field: string) => (typeof o[field] === 'string' && o[field] !== '' ? (o[field] as string) : null);
  if (text('type') !== 'service_account')
    throw new Error(`"type" must be "service_account" (a service-account key file), not ${JSON.stringify(o.type ?? null)}`);
  const missing = ['client_email', 'private_key', 'token_uri'].filter((f) => text(f) === null);
  if (missing.length) throw new Error(`it has no ${missing.join(', ')}`);
  const tokenUri = text('token_uri') ?? '';
  if (!/^https?:\/\//.test(tokenUri)) throw new Error(`token_uri must be an http(s) URL, not ${JSON.stringify(tokenUri)}`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(text('private_key') ?? '');
  } catch (err) {
    throw new Error(`private_key is not a PEM private key (${(err as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error(`private_key must be an RSA key (RS256), not ${privateKey.asymmetricKeyType}`);
  return { clientEmail: text('client_email') ?? '', privateKey, privateKeyId: text('private_key_id'), tokenUri };
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** The signed assertion of the JWT bearer grant: valid one hour, for the RBM scope, addressed to the token endpoint. */
export function signAssertion(key: ServiceAccountKey, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(key.privateKeyId ? { kid: key.privateKeyId } : {}) };
  const claims = { iss: key.clientEmail, scope: RBM_SCOPE, aud: key.tokenUri, iat: nowSeconds, exp: nowSeconds + 3600 };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${base64url(sign('RSA-SHA256', Buffer.from(input), key.privateKey))}`;
}

/** Where the connector gets its bearer token. */
export interface TokenSource {
  token(): Promise<string>;
  /** The API refused this token (401): forget it. True when a new call may get a different one. */
  invalidate(token: string): boolean;
}

export class StaticToken implements TokenSource {
  constructor(private readonly value: string) {}
  async token(): Promise<string> {
    return this.value;
  }
  invalidate(): boolean {
    return false;
  }
}

/** A token endpoint failure; sends fail with it and are retried. */
export class AccessTokenError extends Error {}

/** After a failed exchange, sends reuse its error this long instead of asking again (no storm of token requests and log lines). */
const FAILURE_HOLD_MS = 5000;
/** Refresh this long before expiry: Google's tokens live an hour, so a minute early. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * Tokens minted from a service account: one exchange in flight at a time
 * (concurrent sends wait for the same one), cached until a minute before
 * it expires (half its lifetime when that is shorter than two minutes).
 */
export class ServiceAccountTokens implements TokenSource {
  private cached: { token: string; refreshAt: number; expiresAt: number } | null = null;
  private pending: Promise<string> | null = null;
  private failed: { error: AccessTokenError; until: number } | null = null;

  constructor(
    private readonly key: ServiceAccountKey,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  async token(): Promise<string> {
    const now = Date.now();
    if (this.cached && now < this.cached.refreshAt) return this.cached.token;
    if (this.failed && now < this.failed.until) return this.stillValid(this.failed.error);
    this.pending ??= this.exchange().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** A refresh failed: the old token serves until it really expires (the refresh margin is for such blips). */
  private stillValid(error: AccessTokenError): string {
    if (this.cached && Date.now() < this.cached.expiresAt) return this.cached.token;
    throw error;
  }

  invalidate(token: string): boolean {
    // Only the token that was refused: a concurrent send may have fetched a new one already.
    if (this.cached?.token === token) this.cached = null;
    return true;
  }

  private async exchange(): Promise<string> {
    const started = Date.now();
    try {
      const token = await this.request();
      this.failed = null;
      return token;
    } catch (err) {
      let error: AccessTokenError;
      if (err instanceof AccessTokenError) error = err;
      else {
        // Network trouble or a timeout: Node's fetch hides the reason (ECONNREFUSED...) in `cause`.
        const cause = err instanceof Error && err.cause instanceof Error ? ` (${(err.cause as NodeJS.ErrnoException).code ?? err.cause.message})` : '';
        error = new AccessTokenError(`service account token: ${this.key.tokenUri}: ${err instanceof Error ? err.message : String(err)}${cause}`);
        this.log.warn(error.message);
      }
      this.failed = { error, until: started + FAILURE_HOLD_MS };
      return this.stillValid(error);
    }
  }

  private async request(): Promise<string> {
    const body = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: signAssertion(this.key) });
    // The token endpoint comes from the operator's key file, like baseUrl from the carriers file:
    // the same plain fetch and time limit as the API calls (not the customer-URL SSRF rules).
    const res = await fetch(this.key.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    if (res.status !== 200) {
      const error = new AccessTokenError(`service account token: ${this.key.tokenUri} answered HTTP ${res.status} ${describeOAuthError(text)}`);
      if (res.status === 400 || res.status === 401 || res.status === 403) {
        // The key itself is refused (wrong or deleted key, wrong account, clock far off): only the operator can fix it.
        this.log.error(
          { clientEmail: this.key.clientEmail, keyId: this.key.privateKeyId, status: res.status },
          `${error.message}; check the service account key (messages wait in the outbox meanwhile)`,
        );
      } else {
        this.log.warn({ status: res.status }, error.message);
      }
      throw error;
    }
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new AccessTokenError(`service account token: ${this.key.tokenUri} answered 200 without JSON`);
    }
    const token = parsed.access_token;
    const expiresIn = Number(parsed.expires_in ?? 3600);
    if (typeof token !== 'string' || token === '' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new AccessTokenError(`service account token: ${this.key.tokenUri} answered 200 without access_token and expires_in`);
    }
    const lifetime = expiresIn * 1000;
    const now = Date.now();
    this.cached = { token, refreshAt: now + lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2), expiresAt: now + lifetime };
    this.log.debug({ expiresIn }, 'RBM access token minted from the service account');
    return token;
  }
}

/** Google's token errors are `{ error, error_description }`; anything else is shown cut short. */
function describeOAuthError(text: string): string {
  try {
    const o = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof o.error === 'string') return `${o.error}${typeof o.error_description === 'string' ? `: ${o.error_description}` : ''}`;
  } catch {
    /* not JSON */
  }
  return text.slice(0, 200);
}
