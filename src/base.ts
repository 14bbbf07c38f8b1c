import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, type Db } from './db/database.ts';
import { KeyAuthenticator } from './accounts/api-keys.ts';
import { AccountRoutes } from './routing/account-routes.ts';
import { RouteLegs } from './routing/legs.ts';
import type { Carrier } from './carriers/carrier.ts';
import { SimulatorCarrier } from './carriers/simulator/simulator.ts';
import { buildCarriers, readCarriersFile } from './carriers/connections.ts';
import { checkUrl, parseAllowList } from './net/policy.ts';

/**
 * What every process opens, a CLI command included: the configuration, the
 * database (opened and migrated), the caches of API keys and account routes,
 * and the carrier connections as configured, built but not started.
 * createCore (src/core.ts) builds the rest on it: the dispatcher and the
 * carriers it starts, the outcome writer, events, metrics. The operator's
 * use cases (src/operator.ts) need only this, so the CLI opens only this:
 * none of the sending machinery is loaded or started for a command.
 */
export interface Base {
  config: Config;
  log: Logger;
  db: Db;
  auth: KeyAuthenticator;
  /** Each account's routes, cached a second (src/routing/account-routes.ts). */
  routes: AccountRoutes;
  /** Each route's legs, cached a second (src/routing/legs.ts). */
  legs: RouteLegs;
  /** The carrier connections by name: the built-in simulator and those of GATEWAY_CARRIERS_FILE (docs/carriers.md). */
  carriers: Map<string, Carrier>;
  simulator: SimulatorCarrier;
  /** The registration-time check of a customer's URL (webhooks, callbacks; no DNS): the outbound HTTP client's policy (src/net/policy.ts). */
  checkUrl(url: string): URL;
  /** Closes the database. */
  close(): Promise<void>;
}

export interface BaseOptions {
  pgSchema?: string;
  extraCarriers?: Carrier[];
}

export async function openBase(config: Config, log: Logger, options: BaseOptions = {}): Promise<Base> {
  const simulator = new SimulatorCarrier(config.SIMULATOR_DELIVERY_MS, config.SIMULATOR_JOURNAL ?? null);
  const carriers = new Map<string, Carrier>([[simulator.name, simulator]]);
  const configured = config.GATEWAY_CARRIERS_FILE ? buildCarriers(readCarriersFile(config.GATEWAY_CARRIERS_FILE), process.env, log) : [];
  for (const c of [...configured, ...(options.extraCarriers ?? [])]) carriers.set(c.name, c);
  const allow = parseAllowList(config.GATEWAY_FETCH_ALLOW);
  const db = await openDatabase({
    dataDir: config.GATEWAY_DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
    // Nothing works without the database: exit, so that a supervisor restarts the gateway (what was accepted is on disk).
    onSqliteDeath: (err) => {
      log.fatal({ err }, 'the SQLite thread stopped; exiting');
      process.exit(70);
    },
    ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}),
  });
  return {
    config,
    log,
    db,
    auth: new KeyAuthenticator(db.kysely),
    routes: new AccountRoutes(db.kysely),
    legs: new RouteLegs(db.kysely),
    carriers,
    simulator,
    checkUrl: (url) => checkUrl(url, allow),
    close: () => db.close(),
  };
}
