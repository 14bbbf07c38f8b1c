import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { configProblems } from './config-errors.ts';

/**
 * Configuration comes from environment variables only. The schema is the
 * single source of truth: its type is the config type, and a bad value is
 * refused at start with the variable's name and what it must be.
 */
export const ConfigSchema = Type.Object({
  /** An address of this machine or a host name (checked again when listening: docs/operations.md). */
  HOST: Type.String({
    default: '127.0.0.1',
    pattern:
      '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:%[A-Za-z0-9_.-]+)?)$',
  }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  GATEWAY_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  /** postgres:// URL; when absent the embedded SQLite database in the data directory is used. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  GATEWAY_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** Delay before the built-in simulator carrier reports delivery. */
  SIMULATOR_DELIVERY_MS: Type.Integer({ minimum: 0, default: 200 }),
  /** JSON file of carrier connections (SMPP binds); see docs/carriers.md. */
  GATEWAY_CARRIERS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** When set, the simulator carrier appends `messageId carrierId` per accepted submit to this file (a carrier-side log for audits and crash tests). */
  SIMULATOR_JOURNAL: Type.Optional(Type.String({ minLength: 1 })),
  /** Largest accepted request body, in bytes (batch sends get ten times this). */
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /** How long a dispatcher owns claimed messages before another may take them. */
  DISPATCH_LEASE_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  /** Lease of a carrier connection held by one process (docs/operations.md): a dead holder's connections are taken over within it. */
  CONNECTION_LEASE_MS: Type.Integer({ minimum: 500, maximum: 600_000, default: 5000 }),
  DISPATCH_BATCH: Type.Integer({ minimum: 1, maximum: 5000, default: 200 }),
  /** Idle poll interval of the dispatcher (scheduled messages are due within this). */
  DISPATCH_POLL_MS: Type.Integer({ minimum: 10, maximum: 1000, default: 250 }),
  /** What this process does (docs/operations.md, "Running several processes"): all = HTTP API and sending; api = HTTP API only (messages wait in the outbox for a dispatch process); dispatch = carriers and dispatcher, with a small listener (health, metrics, carrier callbacks). */
  GATEWAY_ROLE: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('dispatch')], { default: 'all' }),
  /** Create a demo account, route and key when the database is new (also `npm start -- --demo`); off by default (docs/operator.md). */
  GATEWAY_DEMO: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  /** SQLite synchronous mode: FULL makes every accepted request survive power loss. */
  SQLITE_SYNCHRONOUS: Type.Union([Type.Literal('FULL'), Type.Literal('NORMAL')], { default: 'FULL' }),
  /** Account time zone default for schedule dates. */
  DEFAULT_TIMEZONE: Type.String({ default: 'America/Sao_Paulo' }),
  /** Language of the Legacy v2 interface's Message texts. */
  LEGACY_LANGUAGE: Type.Union([Type.Literal('pt-BR'), Type.Literal('en')], { default: 'pt-BR' }),
  /** Public base URL of short links (a link is SHORT_LINK_BASE/<code>); when unset, http://localhost:${PORT}/s (see shortLinkBase in src/shortlinks/links.ts). */
  SHORT_LINK_BASE: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$' })),
  // --- events (webhooks, legacy callbacks, outbound HTTP): see docs/webhooks.md ---
  /** Exceptions to the outbound SSRF rules: comma-separated host names, addresses or CIDRs (e.g. 127.0.0.1 for a receiver on this machine); they may use any port and address. */
  GATEWAY_FETCH_ALLOW: Type.Optional(Type.String()),
  /** Unit of the webhook retry schedule (5, 30, 120, 600, 1800, 3600, then every 7200 units; given up after 86400): 1000 = seconds. Tests make it small. */
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 1, default: 1000 }),
  /** Time limit of one webhook attempt (connect, send, answer). */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  /** Webhook attempts in flight at once per process. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
  /** Webhook attempts in flight at once per process for one account (default half of WEBHOOK_CONCURRENCY): one account's slow endpoint never takes them all. */
  WEBHOOK_CONCURRENCY_PER_ACCOUNT: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  /** Idle poll interval of the webhook deliverer (status events go out within this). */
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 500 }),
  /** Delivered and failed webhook deliveries stay in the delivery log this many days. */
  WEBHOOK_LOG_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  // --- RCS (docs/rcs.md) ---
  /** Public base URL of this gateway (carriers fetch RCS media from GATEWAY_PUBLIC_URL/media/<sha256>.<ext>); when unset, http://localhost:${PORT}. */
  GATEWAY_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*[^\\s?#/])?$' })),
  /** Largest RCS file or card image fetched at accept time, in bytes. */
  RCS_MEDIA_MAX_BYTES: Type.Integer({ minimum: 1024, default: 10_485_760 }),
  /** Time limit of one RCS media fetch at accept time. */
  RCS_MEDIA_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  // --- RCS media in an S3-compatible bucket instead of GATEWAY_DATA_DIR/media (docs/rcs.md) ---
  /** Bucket of RCS media; when unset, media stays in the data directory. */
  MEDIA_S3_BUCKET: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' })),
  /** Endpoint of an S3-compatible service (MinIO, Ceph, R2...), addressed path-style; when unset, AWS S3. */
  MEDIA_S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$' })),
  MEDIA_S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  /** Key prefix of media objects, e.g. rcs/ (objects are <prefix><sha256>.<ext>). */
  MEDIA_S3_PREFIX: Type.Optional(Type.String({ pattern: '^[^\\s]*$' })),
  /** Bucket credentials (both or neither); when unset, the standard AWS_* variables and credential chain. */
  MEDIA_S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  MEDIA_S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Public base URL of the bucket (carriers fetch <base>/<prefix><name> directly); when unset, the gateway serves /media/<name> from the bucket. */
  MEDIA_S3_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*[^\\s?#/])?$' })),
  // --- retention and access log (docs/operations.md) ---
  /** Finished messages (and their status history) are deleted this many days after they were created and finished; unset: kept for ever. */
  RETENTION_MESSAGES_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500 })),
  /** RCS media no send has used for this many days, and that no message waiting to be sent needs, is deleted; unset: kept for ever. */
  RETENTION_MEDIA_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500 })),
  /** One log line per HTTP request (method, route, status, duration, account, request id). */
  ACCESS_LOG: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  /** The panel's session cookie gets `Secure` even on plain HTTP requests (behind a TLS-terminating proxy; docs/panel.md). */
  PANEL_SECURE_COOKIE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  // --- rate limits of the Gateway and Legacy v2 interfaces, per account (docs/operations.md, "Rate limits") ---
  /** Default limit of the Gateway interface, in requests a second per account; 0 = no limit (the default). The operator sets an account's own (`account rate-limit`), which also applies to the legacy interface. */
  RATE_LIMIT_PER_SECOND: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  /** The counting window, in seconds: an account may make per-second × window requests in each window (a burst up to that, then 429 until the window ends). */
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 1 }),
  /** redis:// or rediss:// URL: when set, the counts are kept in Redis and shared by every process using it; when unset, each process counts alone. */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Prefix of the rate limit keys in Redis (gateways sharing a Redis server but not their accounts need different prefixes). */
  RATE_LIMIT_REDIS_PREFIX: Type.String({ minLength: 1, default: 'gateway-rate-limit:' }),
  // --- the gateway's SMPP server (docs/smpp-server.md) ---
  /** Port of the SMPP server customers bind to (on HOST); unset: no SMPP server. Runs in processes of role all and api. */
  SMPP_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** PEM certificate and key files: the SMPP server speaks TLS (both or neither). */
  SMPP_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  SMPP_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** A customer bind from which no PDU came for this many seconds is unbound and closed (clients send enquire_link more often). */
  SMPP_INACTIVITY_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
  // --- memory (docs/operations.md, "Memory") ---
  /** How far the JavaScript heap may grow past what its last full collection kept before the next one, in percent; 0: V8's own choice (up to 4x under load: faster by a few percent, about 100 MB more at peak). */
  HEAP_GROWTH_PERCENT: Type.Integer({ minimum: 0, maximum: 300, default: 50 }),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Reads and validates the configuration; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw));
  const errors = [...Value.Errors(ConfigSchema, converted)];
  if (errors.length > 0) {
    // One line per bad variable: its name, its value (secrets hidden) and what it must be (src/config-errors.ts).
    throw new ConfigError(configProblems(ConfigSchema.properties, env, errors).join('\n'));
  }
  return converted as Config;
}
