import type { Selectable } from 'kysely';

/**
 * What a reseller gives when it creates a child user. The child
 * itself is an `accounts` row (role CUSTOMER, parent_id = the reseller);
 * `account_id` is that row's id and the child user's public id.
 */
export interface ChildUsersTable {
  account_id: number;
  parent_id: number;
  full_name: string;
  /** As given (trimmed). */
  email: string;
  /** Lower-cased e-mail: unique across all child users. */
  email_key: string;
  /** 55 + area code + number. */
  phone: string;
  /** CPF (11 digits) or CNPJ (14 digits), without formatting. */
  document: string;
  owner_full_name: string;
  owner_email: string;
  owner_phone: string;
  /** scrypt hash of the owner credential's password (see password.ts). */
  password_hash: string;
  created_at: number;
}

export type ChildUserTables = {
  child_users: ChildUsersTable;
};

export type ChildUserRow = Selectable<ChildUsersTable>;
