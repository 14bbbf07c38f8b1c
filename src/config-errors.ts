import type { TSchema } from '@sinclair/typebox';

/**
 * What a configuration variable must be, in words, for the one-line error
 * that stops the start (`PORT="99999" must be a whole number from 0 to
 * 65535`). Most of it is read from the variable's schema; a pattern says
 * nothing to an operator, so the variables checked by one are described
 * here.
 */
const PATTERN_TEXT: Readonly<Record<string, string>> = {
  HOST: 'an IP address (0.0.0.0, 127.0.0.1, ::) or a host name of this machine',
  DATABASE_URL: 'a PostgreSQL URL: postgres://user:password@host:5432/database (leave it unset to use SQLite)',
  SHORT_LINK_BASE: 'an http(s) URL without query or fragment, e.g. https://go.example.com/s',
  GATEWAY_PUBLIC_URL: 'an http(s) URL without query, fragment or trailing slash, e.g. https://sms.example.com',
  MEDIA_S3_BUCKET: 'an S3 bucket name: 3 to 63 lowercase letters, digits, dots or hyphens, starting and ending with a letter or digit',
  MEDIA_S3_ENDPOINT: 'an http(s) URL without query or fragment, e.g. https://minio.example.com:9000',
  MEDIA_S3_PREFIX: 'a key prefix without spaces, e.g. rcs/',
  MEDIA_S3_PUBLIC_URL: 'an http(s) URL without query, fragment or trailing slash',
  REDIS_URL: 'a Redis URL: redis://host:6379 or rediss://user:password@host:6380/0',
};

/** Variables whose value is never repeated in an error (it would put a secret in the log). */
const SECRET = /TOKEN|SECRET|PASSWORD|ACCESS_KEY/;

/** The value as the error may show it: quoted, a secret hidden, a URL's password hidden. */
export function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return '(unset)';
  if (SECRET.test(name)) return `(hidden, ${value.length} characters)`;
  return JSON.stringify(redactUrl(value));
}

/** A URL with its password replaced by ***, so that a database URL can be named in a message. */
export function redactUrl(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@');
}

/** "must be ..." for a schema: its literals, its number range, its length, or the words above. */
export function mustBe(name: string, schema: TSchema): string {
  const literals = (schema.anyOf as TSchema[] | undefined)?.map((s) => s.const).filter((c) => c !== undefined);
  if (literals?.length) return `one of ${literals.join(', ')}`;
  if (schema.type === 'integer' || schema.type === 'number') {
    const kind = schema.type === 'integer' ? 'a whole number' : 'a number';
    const { minimum: min, maximum: max } = schema as { minimum?: number; maximum?: number };
    if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
    if (min !== undefined) return `${kind} of at least ${min}`;
    if (max !== undefined) return `${kind} of at most ${max}`;
    return kind;
  }
  const pattern = PATTERN_TEXT[name];
  if (pattern) return pattern;
  if (typeof schema.minLength === 'number') return `text of at least ${schema.minLength} characters`;
  if (typeof schema.pattern === 'string') return `text matching ${schema.pattern}`;
  return 'a valid value';
}

/**
 * One line per bad variable (the first problem of each), e.g.
 * `configuration error: SQLITE_SYNCHRONOUS="full" must be one of FULL, NORMAL`.
 */
export function configProblems(
  properties: Record<string, TSchema>,
  env: Record<string, string | undefined>,
  errors: { path: string; schema: TSchema }[],
): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const name = e.path.split('/')[1] ?? '';
    if (seen.has(name)) continue;
    seen.add(name);
    const schema = properties[name] ?? e.schema;
    lines.push(`configuration error: ${name || '(configuration)'}=${shownValue(name, env[name])} must be ${mustBe(name, schema)}`);
  }
  return lines;
}
