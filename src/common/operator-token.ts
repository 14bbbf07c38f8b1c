import { createHash } from 'node:crypto';

/**
 * The operator token is kept (in the database's settings) and compared only
 * as its SHA-256, in hex: a copy of the database or a backup does not give
 * operator access (docs/operator.md).
 */
export const operatorTokenSha256 = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
