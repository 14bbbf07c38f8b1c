import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import type { Carrier } from './carrier.ts';
import { SmppCarrier } from './smpp/connector.ts';
import { RbmCarrier } from './rbm/connector.ts';
import { parseServiceAccount, type ServiceAccountKey } from './rbm/auth.ts';
import { ConfigError } from '../config.ts';

/**
 * Carrier connections the operator configures in a JSON file
 * (GATEWAY_CARRIERS_FILE). Secrets stay out of the file: `passwordEnv`
 * names the environment variable that holds the bind password.
 */
const SmppConnection = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', description: 'routes name it in `connector`' }),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    tls: Type.Optional(Type.Boolean()),
    systemId: Type.String({ minLength: 1 }),
    passwordEnv: Type.String({ minLength: 1 }),
    systemType: Type.Optional(Type.String()),
    bindMode: Type.Optional(Type.Union([Type.Literal('transceiver'), Type.Literal('transmitter_receiver')])),
    sourceAddr: Type.String({ minLength: 1 }),
    sourceTon: Type.Optional(Type.Integer({ minimum: 0, maximum: 6 })),
    sourceNpi: Type.Optional(Type.Integer({ minimum: 0, maximum: 18 })),
    destTon: Type.Optional(Type.Integer({ minimum: 0, maximum: 6 })),
    destNpi: Type.Optional(Type.Integer({ minimum: 0, maximum: 18 })),
    windowSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    queueSize: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
    maxSubmitsPerSecond: Type.Optional(Type.Number({ minimum: 0 })),
    maxBinds: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    failoverAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
    responseTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    enquireLinkMs: Type.Optional(Type.Integer({ minimum: 100 })),
    idBase: Type.Optional(Type.Union([Type.Literal('hex'), Type.Literal('decimal')])),
    receiptIdBase: Type.Optional(Type.Union([Type.Literal('hex'), Type.Literal('decimal')])),
    registeredDelivery: Type.Optional(Type.Integer({ minimum: 0, maximum: 31 })),
    reconnectMinMs: Type.Optional(Type.Integer({ minimum: 10 })),
    reconnectMaxMs: Type.Optional(Type.Integer({ minimum: 10 })),
    throttleBackoffMinMs: Type.Optional(Type.Integer({ minimum: 1 })),
    throttleBackoffMaxMs: Type.Optional(Type.Integer({ minimum: 1 })),
    maxThrottleRetries: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/**
 * An RCS Business Messaging agent (docs/rcs.md); secrets by environment
 * variable name or key file. Exactly one credential: a static token
 * (`tokenEnv`), or a service-account key (`serviceAccountFile`, or its JSON
 * in `serviceAccountEnv`) that mints tokens.
 */
const RBM_CREDENTIALS = ['tokenEnv', 'serviceAccountFile', 'serviceAccountEnv'] as const;
const RbmConnection = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', description: 'routes name it in `connector`' }),
    baseUrl: Type.String({ pattern: '^https?://' }),
    agentId: Type.String({ minLength: 1 }),
    tokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    serviceAccountFile: Type.Optional(Type.String({ minLength: 1, description: 'relative to the carriers file' })),
    serviceAccountEnv: Type.Optional(Type.String({ minLength: 1 })),
    webhookSecretEnv: Type.String({ minLength: 1 }),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    capabilityTtlMs: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const CarriersFile = Type.Object(
  { smpp: Type.Optional(Type.Array(SmppConnection)), rbm: Type.Optional(Type.Array(RbmConnection)) },
  { additionalProperties: false },
);
export type CarriersFileContent = Static<typeof CarriersFile>;

/** Reads and checks the carriers file; a mistake names the file, the field and the fix. */
export function readCarriersFile(path: string): CarriersFileContent {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`GATEWAY_CARRIERS_FILE=${path}: cannot read it as JSON (${(err as Error).message})`);
  }
  const errors = [...Value.Errors(CarriersFile, raw)].map((e) => `  ${e.path || '/'}: ${e.message}`);
  const file = raw as CarriersFileContent;
  if (!errors.length) {
    (file.rbm ?? []).forEach((c, i) => {
      const given = RBM_CREDENTIALS.filter((k) => c[k] !== undefined);
      if (given.length !== 1)
        errors.push(`  /rbm/${i}: give exactly one of ${RBM_CREDENTIALS.join(', ')} (${given.length ? `found ${given.join(' and ')}` : 'found none'})`);
    });
  }
  if (errors.length) throw new ConfigError(`GATEWAY_CARRIERS_FILE=${path} is invalid:\n${errors.join('\n')}`);
  // A key file named relative to the carriers file is found beside it, wherever the gateway is started from.
  for (const c of file.rbm ?? []) if (c.serviceAccountFile) c.serviceAccountFile = resolve(dirname(path), c.serviceAccountFile);
  return file;
}

/** Builds the configured carrier connections. */
export function buildCarriers(file: CarriersFileContent, env: Record<string, string | undefined>, log: Logger): Carrier[] {
  return (file.smpp ?? [])
    .map((c): Carrier => {
      const { passwordEnv, ...options } = c;
      const password = env[passwordEnv];
      if (password === undefined) throw new ConfigError(`SMPP connection "${c.name}": environment variable ${passwordEnv} (its password) is not set`);
      return new SmppCarrier({ ...options, password, logger: log.child({ carrier: c.name }) });
    })
    .concat(buildRbmCarriers(file, env, log));
}

function buildRbmCarriers(file: CarriersFileContent, env: Record<string, string | undefined>, log: Logger): Carrier[] {
  return (file.rbm ?? []).map((c) => {
    const { tokenEnv, serviceAccountFile, serviceAccountEnv, webhookSecretEnv, ...options } = c;
    const webhookSecret = env[webhookSecretEnv];
    if (webhookSecret === undefined)
      throw new ConfigError(`RBM connection "${c.name}": environment variable ${webhookSecretEnv} (its webhook secret) is not set`);
    const logger = log.child({ carrier: c.name });
    if (tokenEnv !== undefined) {
      const token = env[tokenEnv];
      if (token === undefined) throw new ConfigError(`RBM connection "${c.name}": environment variable ${tokenEnv} (its API token) is not set`);
      return new RbmCarrier({ ...options, token, webhookSecret, logger });
    }
    return new RbmCarrier({ ...options, serviceAccount: serviceAccountOf(c.name, serviceAccountFile, serviceAccountEnv, env), webhookSecret, logger });
  });
}

/** The service-account key of a connection, read and checked at start (the private key is parsed here, not at the first send). */
function serviceAccountOf(name: string, path: string | undefined, envName: string | undefined, env: Record<string, string | undefined>): ServiceAccountKey {
  let json: string;
  let where: string;
  if (path !== undefined) {
    where = `serviceAccountFile ${path}`;
    try {
      json = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`RBM connection "${name}": cannot read ${where} (${(err as Error).message})`);
    }
  } else {
    where = `environment variable ${envName} (serviceAccountEnv)`;
    const value = envName === undefined ? undefined : env[envName];
    if (value === undefined) throw new ConfigError(`RBM connection "${name}": ${where}, its service-account key JSON, is not set`);
    json = value;
  }
  try {
    return parseServiceAccount(json);
  } catch (err) {
    throw new ConfigError(`RBM connection "${name}": ${where} is not a usable service-account key: ${(err as Error).message}`);
  }
}
