import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Configuration comes from environment variables only. The schema is the
 * single source of truth: its type is the config type, and a bad value is
 * refused at start with the variable's name and what it must be.
 */
export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '0.0.0.0' }),
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
  DISPATCH_BATCH: Type.Integer({ minimum: 1, maximum: 5000, default: 200 }),
  /** Idle poll interval of the dispatcher (scheduled messages are due within this). */
  DISPATCH_POLL_MS: Type.Integer({ minimum: 10, maximum: 1000, default: 250 }),
  /** Create a demo account, route and key when the database is new. */
  GATEWAY_DEMO: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  /** SQLite synchronous mode: FULL makes every accepted request survive power loss. */
  SQLITE_SYNCHRONOUS: Type.Union([Type.Literal('FULL'), Type.Literal('NORMAL')], { default: 'FULL' }),
  /** Public base of short links; account time zone default for schedule dates. */
  DEFAULT_TIMEZONE: Type.String({ default: 'America/Sao_Paulo' }),
  /** Language of the Legacy v2 interface's Message texts. */
  LEGACY_LANGUAGE: Type.Union([Type.Literal('pt-BR'), Type.Literal('en')], { default: 'pt-BR' }),
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
    const lines = errors.map((e) => `  ${e.path.slice(1) || '(config)'}=${JSON.stringify(raw[e.path.slice(1)])}: ${e.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return converted as Config;
}
