import type { Generated, Selectable } from 'kysely';

/**
 * Verification tokens sent by SMS (legacy /tokenmanager; the gateway's
 * /api-tokens/* share the store). The code is stored only as an
 * HMAC-SHA256 keyed with the database's `token_hmac_key` setting.
 */
export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  phone: string;
  /** Hex HMAC-SHA256 of `{account id}:{code}`; `retired` for tokens made before the keyed hash (no code matches). */
  code_hash: string;
  /** 1: validation must name the phone the token was sent to. */
  enforce_phone: number;
  request_id: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** Refused validations naming this token's phone (or its code with another phone); MAX_FAILED_ATTEMPTS locks it. */
  failed_attempts: number;
}

/** Each account's budget of wrong guesses: the window it counts in and the guesses counted. */
export interface TokenGuessesTable {
  account_id: number;
  window_start: number;
  failures: number;
}

export type TokenTables = {
  tokens: TokensTable;
  token_guesses: TokenGuessesTable;
};

export type TokenRow = Selectable<TokensTable>;
