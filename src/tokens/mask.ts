import { sql, type RawBuilder } from 'kysely';

/**
 * Masking of one-time codes in message texts. A token's SMS text is
 * `"{prefix}: {code}"` or the code alone, so the code is always its last
 * CODE_LENGTH characters. Messages carrying a code have `otp` = 1.
 *
 * The account sees its token message whole in its reports while the code
 * can still be used (clients in the field read it there, e.g. to show
 * support what was sent); once the token is used, expired or locked, every
 * report shows the text masked (`Acme: ******`). Events (webhooks, legacy
 * callbacks) and the requests report never carry the code. A message that
 * never reaches the phone (blocked, cancelled) has its stored text masked.
 */
export const CODE_LENGTH = 6;
const MASK = '*'.repeat(CODE_LENGTH);
/** Refused validations naming a phone that lock every live token of that phone. */
export const MAX_FAILED_ATTEMPTS = 5;

/** The text with its trailing code masked. */
export const maskCode = (text: string): string => (text.length >= CODE_LENGTH ? text.slice(0, -CODE_LENGTH) + MASK : MASK);

const masked = (table: string) => `substr(${table}.content, 1, length(${table}.content) - ${CODE_LENGTH}) || '${MASK}'`;

/** SQL text of a message's content with the code masked when `otp` = 1 (stored texts: always). `table` qualifies the columns. */
export const maskedContentSql = (table: string): string =>
  `case when ${table}.otp = 1 and length(${table}.content) >= ${CODE_LENGTH} then ${masked(table)} else ${table}.content end`;

/** A stored text masked (blocked, cancelled: the code never reaches the phone). */
export const maskedContent = (table: string): RawBuilder<string> => sql<string>`${sql.raw(maskedContentSql(table))}`;

/**
 * A message's content as a report shows it: the code masked unless its
 * token can still be used (not used, not expired, not locked).
 */
export const reportedContent = (table: string, now = Date.now()): RawBuilder<string> =>
  sql<string>`case when ${sql.raw(`${table}.otp`)} = 1 and length(${sql.raw(`${table}.content`)}) >= ${sql.lit(CODE_LENGTH)} and not exists (
    select 1 from tokens live where live.request_id = ${sql.raw(`${table}.request_id`)} and live.used_at is null
      and live.failed_attempts < ${sql.lit(MAX_FAILED_ATTEMPTS)} and live.expires_at > ${now}
  ) then ${sql.raw(masked(table))} else ${sql.raw(`${table}.content`)} end`;
