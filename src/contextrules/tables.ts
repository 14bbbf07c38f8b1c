import type { Generated, Selectable } from 'kysely';

/**
 * Context (auto-reply) rules of the Legacy v2 interface (used by
 * /sendcontextmessage, docs/legacy.md). Keywords are stored as a JSON
 * array of normalised words (lower case, no accents), so matching never
 * re-parses the rule.
 */
export interface ContextRulesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  message: string;
  /** JSON array of keywords, as the client gave them. */
  positive_context: string;
  positive_response: string | null;
  negative_context: string;
  negative_response: string | null;
  default_response: string | null;
  created_at: number;
  updated_at: number;
}

/** How a conversation ended (or that it still waits for the receiver's answer). */
export type ConversationStatus = 'WAITING' | 'POSITIVE' | 'NEGATIVE' | 'DEFAULT' | 'REPLACED' | 'CLOSED';

/**
 * One row per receiver of a context send: the pending context while
 * `WAITING`, and afterwards the record the context report reads.
 */
export interface ContextSendsTable {
  id: Generated<number>;
  account_id: number;
  rule_id: number;
  rule_name: string;
  receiver: string;
  /** The context send's request. */
  request_id: string;
  /** The request whose message the next reply must answer: the context send, or our last default answer. */
  last_request_id: string;
  status: ConversationStatus;
  /** Default answers sent so far (a guard against endless loops). */
  default_count: number;
  created_at: number;
  expires_at: number;
  reply_content: string | null;
  replied_at: number | null;
  answer_content: string | null;
  answer_request_id: string | null;
}

export type ContextTables = {
  context_rules: ContextRulesTable;
  context_sends: ContextSendsTable;
};

export type ContextRuleRow = Selectable<ContextRulesTable>;
export type ContextSendRow = Selectable<ContextSendsTable>;
