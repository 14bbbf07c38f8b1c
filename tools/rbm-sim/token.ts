/**
 * The RBM simulator's OAuth token endpoint (POST /token): the JWT bearer
 * grant Google's token endpoint serves to service accounts. The assertion
 * is checked as Google checks it (RS256 signature against the account's
 * public key, iss, aud, scope, a lifetime of at most an hour around now);
 * refusals are Google's `{ error, error_description }` answers.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { JWT_BEARER_GRANT, RBM_SCOPE } from '../../src/carriers/rbm/auth.ts';

export interface SimServiceAccount {
  clientEmail: string;
  /** PEM (or KeyObject) of the account's public key; a private key works too (its public half is used). */
  publicKey: string | KeyObject;
  /** When set, the assertion's header `kid` must be this. */
  keyId?: string;
}

export interface TokenRefusal {
  status: number;
  error: string;
  description: string;
}

/** Clock difference allowed between the client and us, as Google allows. */
const SKEW_S = 300;

const refuse = (error: string, description: string, status = 400): TokenRefusal => ({ status, error, description });

/** Checks a token request's form: null when it earns a token, else Google's refusal. */
export function checkGrant(form: URLSearchParams, account: SimServiceAccount, audience: string, nowS = Math.floor(Date.now() / 1000)): TokenRefusal | null {
  if (form.get('grant_type') !== JWT_BEARER_GRANT) return refuse('unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
  const parts = (form.get('assertion') ?? '').split('.');
  if (parts.length !== 3) return refuse('invalid_request', 'Invalid JWT: not three parts');
  const [h = '', c = '', s = ''] = parts;
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
    claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return refuse('invalid_grant', 'Invalid JWT: the header or claims are not JSON');
  }
  if (header.alg !== 'RS256') return refuse('invalid_grant', `Invalid JWT: alg must be RS256, not ${String(header.alg)}`);
  if (account.keyId !== undefined && header.kid !== account.keyId) return refuse('invalid_grant', 'Invalid JWT Signature.');
  const key = typeof account.publicKey === 'string' ? createPublicKey(account.publicKey) : account.publicKey;
  if (!verify('RSA-SHA256', Buffer.from(`${h}.${c}`), key, Buffer.from(s, 'base64url'))) return refuse('invalid_grant', 'Invalid JWT Signature.');
  if (claims.iss !== account.clientEmail) return refuse('invalid_grant', 'Invalid grant: account not found');
  if (claims.aud !== audience) return refuse('invalid_grant', `Invalid JWT: aud must be ${audience}`);
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (!scopes.includes(RBM_SCOPE)) return refuse('invalid_scope', `Invalid scope: the RBM scope ${RBM_SCOPE} is required`);
  const iat = claims.iat;
  const exp = claims.exp;
  if (typeof iat !== 'number' || typeof exp !== 'number' || iat > nowS + SKEW_S || exp < nowS - SKEW_S || exp <= iat || exp - iat > 3600) {
    return refuse(
      'invalid_grant',
      'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
    );
  }
  if (exp <= nowS) return refuse('invalid_grant', 'Invalid JWT: the assertion has expired');
  return null;
}

/** Tokens handed out by the endpoint and when each stops working. */
export class IssuedTokens {
  private readonly tokens = new Map<string, number>();
  /** Tokens issued so far. */
  grants = 0;

  issue(lifetimeS: number): string {
    const token = `ya29.sim-${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, Date.now() + lifetimeS * 1000);
    this.grants++;
    return token;
  }

  valid(token: string): boolean {
    const until = this.tokens.get(token);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.tokens.delete(token);
    return false;
  }

  /** Every token issued so far stops working (a key rotated or revoked on the platform side). */
  revokeAll(): void {
    this.tokens.clear();
  }
}
