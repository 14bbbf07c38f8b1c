import { timingSafeEqual } from 'node:crypto';
import { operatorTokenSha256 } from '../common/operator-token.ts';

/** The operator token as the app is given it: in clear (GATEWAY_ADMIN_TOKEN, tests), or only its SHA-256 (hex) as the database keeps it. */
export type AdminToken = string | { sha256: string };

/**
 * Whether an `Authorization` header carries the operator token as
 * `Bearer <token>`. Digests are compared, in constant time and at one
 * length whatever is sent.
 */
export function operatorTokenCheck(adminToken: AdminToken): (authorization: string | undefined) => boolean {
  const expected = Buffer.from(typeof adminToken === 'string' ? operatorTokenSha256(adminToken) : adminToken.sha256, 'hex');
  return (authorization) => {
    const header = authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (given === '') return false;
    const digest = Buffer.from(operatorTokenSha256(given), 'hex');
    return digest.length === expected.length && timingSafeEqual(digest, expected);
  };
}
