import type { Generated, Selectable } from 'kysely';

/**
 * Verification tokens sent by SMS (legacy /tokenmanager; the gateway's
 * /api-tokens/* can share the store). Only a hash of the code is stored.
 */
export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  phone: string;
  code_hash: string;
  /** 1: validation must name the phone the token was sent to. */
  enforce_phone: number;
  request_id: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  failed_attempts: number;
}

export type TokenTables = {
  tokens: TokensTable;
};

export type TokenRow = Selectable<TokensTable>;
