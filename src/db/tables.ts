import type { Generated, Insertable, Selectable } from 'kysely';

/**
 * Table types. Times are epoch milliseconds (bigint), money is integer
 * micro-units (1 currency unit = 1_000_000) so no binary float is ever stored.
 */
export interface AccountsTable {
  id: Generated<number>;
  name: string;
  role: 'CUSTOMER' | 'RESELLER';
  timezone: string;
  balance: number;
  parent_id: number | null;
  /** 1 = its keys are accepted; 0 = deactivated by the operator (docs/operator.md). */
  active: number;
  created_at: number;
  /** When the operator deactivated it; null while active. */
  deactivated_at: number | null;
  /** Requests a second on the HTTP interfaces: null = the default, 0 = no limit (docs/operations.md, "Rate limits"). */
  rate_limit_per_second: Generated<number | null>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  key_hash: string;
  /** JSON array of CIDRs, or null for any address. */
  allowed_ips: string | null;
  created_at: number;
  revoked_at: number | null;
  /** The key's last 4 characters, for listings (null: issued before they were kept). */
  hint: string | null;
}

export interface RoutesTable {
  id: Generated<number>;
  display_name: string;
  product_name: string;
  product_id: number;
  fare_price: number;
  reply_fare_price: number;
  channel: 'SMS' | 'RCS';
  connector: string;
  created_at: number;
  /** RCS routes only: the SMS route that carries messages to phones without RCS (src/rcs/fallback.ts); null = none. */
  fallback_route_id: number | null;
}

/** A leg of a route: a connection that carries some of its messages (src/routing/legs.ts). */
export interface RouteLegsTable {
  id: Generated<number>;
  route_id: number;
  /** The operator's order of the legs, from 0. */
  position: number;
  connector: string;
  /** Comma-separated digit prefixes of the receivers it carries; empty: any. */
  prefixes: string;
  /** Lower first: the first matching priority carries the message. */
  priority: number;
  /** Share among matching legs of the same priority, >= 1. */
  weight: number;
}

export interface AccountRoutesTable {
  account_id: number;
  route_id: number;
}

export interface ContactGroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string | null;
  created_at: number;
  last_used_at: number | null;
}

export interface ContactsTable {
  id: Generated<number>;
  account_id: number;
  group_id: number;
  name: string | null;
  phone: string;
}

export interface BlocklistTable {
  account_id: number;
  phone: string;
  created_at: number;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: number;
  amount: number;
  reason: string;
  request_id: string | null;
  created_at: number;
}

export interface RequestsTable {
  id: string;
  account_id: number;
  route_id: number;
  channel: 'SMS' | 'RCS';
  product: string;
  content: string;
  tag: string | null;
  custom: string | null;
  sender: string | null;
  source: 'gateway' | 'legacy' | 'token' | 'reply' | 'smpp';
  message_count: number;
  cost: number;
  schedule_at: number;
  created_at: number;
}

export type MessageStatus = 'SCHEDULED' | 'QUEUED' | 'SENDING' | 'SENT' | 'DELIVERED' | 'UNDELIVERED' | 'FAILED' | 'EXPIRED' | 'CANCELLED' | 'BLOCKED';

export interface MessagesTable {
  /** UUIDv7: time-ordered, so ties of due_at are dispatched in insertion order. */
  id: string;
  account_id: number;
  request_id: string;
  route_id: number;
  connector: string;
  channel: 'SMS' | 'RCS';
  receiver: string;
  content: string;
  /** JSON of the channel payload (RCS), null for SMS. */
  payload: string | null;
  segments: number;
  cost: number;
  status: MessageStatus;
  status_details: string | null;
  tag: string | null;
  custom: string | null;
  sender: string | null;
  created_at: number;
  schedule_at: number;
  /** When the dispatcher may take it: schedule time, retry time, or lease expiry while SENDING. */
  due_at: number;
  lease_owner: string | null;
  attempts: number;
  sent_at: number | null;
  carrier_id: string | null;
  status_at: number;
  /**
   * 1: the text ends with a one-time code (tokens, src/tokens/mask.ts).
   * Reports and events show it masked; the stored text is masked once the
   * carrier has the message, or once it never will.
   */
  otp: number;
  /** 1: failover moved it to another leg (migration 016, docs/carriers.md "Failover"). */
  moved: number;
}

export interface CarrierIdsTable {
  connector: string;
  carrier_id: string;
  message_id: string;
}

export interface PendingReceiptsTable {
  connector: string;
  carrier_id: string;
  status: string;
  details: string;
  received_at: number;
}

export interface StatusLogTable {
  id: Generated<number>;
  message_id: string;
  status: MessageStatus;
  details: string | null;
  at: number;
}

export interface RepliesTable {
  id: Generated<number>;
  account_id: number | null;
  message_id: string | null;
  connector: string;
  sender: string;
  recipient: string | null;
  content: string;
  cost: number;
  received_at: number;
}

/** Named values of the server, shared by every process on the database (e.g. `token_hmac_key`). */
export interface SettingsTable {
  name: string;
  value: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  routes: RoutesTable;
  route_legs: RouteLegsTable;
  account_routes: AccountRoutesTable;
  contact_groups: ContactGroupsTable;
  contacts: ContactsTable;
  blocklist: BlocklistTable;
  ledger: LedgerTable;
  requests: RequestsTable;
  messages: MessagesTable;
  carrier_ids: CarrierIdsTable;
  pending_receipts: PendingReceiptsTable;
  status_log: StatusLogTable;
  replies: RepliesTable;
  settings: SettingsTable;
  dispatchers: DispatchersTable;
  processes: ProcessesTable;
  panel_users: PanelUsersTable;
  panel_sessions: PanelSessionsTable;
  panel_sign_in_failures: PanelSignInFailuresTable;
  connection_leases: ConnectionLeasesTable;
  smpp_accounts: SmppAccountsTable;
  smpp_submits: SmppSubmitsTable;
  smpp_parts: SmppPartsTable;
  smpp_deliveries: SmppDeliveriesTable;
}

/** A slot of a carrier connection held by one dispatcher while its lease lasts (src/dispatch/connection-leases.ts). */
export interface ConnectionLeasesTable {
  connector: string;
  slot: number;
  owner: string;
  until: number;
  /** 1 while the holder's bind is up. */
  ready: number;
}

/** A gateway process of any role working on this database (src/dispatch/cluster.ts). */
export interface ProcessesTable {
  id: string;
  role: string;
  host: string;
  pid: number;
  started: string;
  started_at: number;
  seen_at: number;
  /** JSON array of the carrier connection names it runs. */
  connectors: string;
}

/** A dispatcher process working on this database (src/dispatch/registry.ts). */
export interface DispatchersTable {
  owner: string;
  /** Host name and boot id: the same value means the same running system. */
  host: string;
  pid: number;
  /** The process's start time as the system counts it (empty where unknown): tells a reused pid apart. */
  started: string;
  seen_at: number;
}

export type MessageRow = Selectable<MessagesTable>;
export type NewMessage = Insertable<MessagesTable>;
export type RouteRow = Selectable<RoutesTable>;
export type AccountRow = Selectable<AccountsTable>;

/** Who signs in to the browser panel (src/panel/users.ts); account_id null: an operator. */
export interface PanelUsersTable {
  id: Generated<number>;
  email: string;
  /** Lower-cased e-mail: unique. */
  email_key: string;
  /** scrypt (src/childusers/password.ts). */
  password_hash: string;
  account_id: number | null;
  created_at: number;
  disabled_at: number | null;
}

/** A signed-in browser (src/panel/sessions.ts), found by the SHA-256 of its session id. */
export interface PanelSessionsTable {
  id_hash: string;
  user_id: number | null;
  /** A child user's owner credential: the child's account. */
  child_account_id: number | null;
  /** Signed in with the operator token: its SHA-256 (a new token ends the session); null otherwise. */
  operator_token_sha256: string | null;
  csrf_secret: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** Failed panel sign-ins per e-mail (src/panel/lockout.ts). */
export interface PanelSignInFailuresTable {
  email_key: string;
  window_start: number;
  failures: number;
  locked_until: number | null;
}

/** SMPP credentials of an account (migration 015, src/smpp-server/credentials.ts). */
export interface SmppAccountsTable {
  system_id: string;
  account_id: number;
  /** scrypt (src/childusers/password.ts). */
  password_hash: string;
  route_id: number;
  /** JSON array of CIDRs, or null for any address. */
  allowed_ips: string | null;
  window_size: number;
  /** submit_sm a second per bind; 0 = no limit. */
  submits_per_second: number;
  max_binds: number;
  created_at: number;
}

/** What the SMPP server keeps beside a message submitted over SMPP (src/smpp-server/records.ts). */
export interface SmppSubmitsTable {
  message_id: string;
  account_id: number;
  system_id: string;
  registered_delivery: number;
  source_addr: string;
  source_ton: number;
  source_npi: number;
  dest_addr: string;
  dest_ton: number;
  dest_npi: number;
  valid_until: number | null;
  created_at: number;
}

/** A part of a concatenated SMPP submit waiting for the others (src/smpp-server/parts.ts). */
export interface SmppPartsTable {
  id: Generated<number>;
  system_id: string;
  group_key: string;
  message_id: string;
  total: number;
  seq: number;
  data_coding: number;
  /** The part's octets (after its UDH), base64. */
  body: string;
  /** JSON of the submit's other fields (addresses, schedule, registered_delivery). */
  submit: string;
  received_at: number;
}

/** A deliver_sm owed to an SMPP customer: a receipt or a reply (src/smpp-server/deliveries.ts). */
export interface SmppDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  system_id: string;
  kind: 'receipt' | 'reply';
  message_id: string | null;
  /** JSON of the deliver_sm parameters (octet strings as base64). */
  params: string;
  created_at: number;
  /** Next attempt; while sent, the end of the sending process's lease. */
  due_at: number;
  attempts: number;
  lease_owner: string | null;
  last_error: string | null;
}
