import type { Generated, Selectable } from 'kysely';

/**
 * Short links (docs/child-users-and-short-links.md). `code` is unique
 * across every account and is never reused: a deleted link keeps its row
 * with `deleted_at` set.
 */
export interface ShortLinksTable {
  id: Generated<number>;
  account_id: number;
  code: string;
  destination_url: string;
  created_at: number;
  updated_at: number;
  access_count: Generated<number>;
  human_access_count: Generated<number>;
  bot_access_count: Generated<number>;
  deleted_at: number | null;
}

export type ShortLinkTables = {
  short_links: ShortLinksTable;
};

export type ShortLinkRow = Selectable<ShortLinksTable>;
