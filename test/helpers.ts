import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import { loadConfig, type Config } from '../src/config.ts';
import { createCore, type Core, type CoreOptions } from '../src/core.ts';
import { buildApp } from '../src/app.ts';
import { openDatabase, type Db } from '../src/db/database.ts';
import type { RouteRow } from '../src/db/tables.ts';
import type { AcceptInput, Handoff } from '../src/messaging/accept.ts';

/** The database every test file runs against: SQLite, or PostgreSQL when TEST_DATABASE_URL is set. */
export const DIALECT = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export interface TestDatabase {
  env: Record<string, string>;
  pgSchema?: string;
  drop(): Promise<void>;
}

/**
 * A fresh database and a store on it for the calling test file: opened
 * before its tests (then `opened` runs: keep the store, add what the tests
 * share), closed and dropped after them.
 */
export function withFreshStore(opened: (db: Db) => void | Promise<void>): void {
  let fresh: TestDatabase | undefined;
  let db: Db | undefined;
  before(async () => {
    fresh = await freshDatabase();
    db = await openTestStore(fresh);
    await opened(db);
  });
  after(async () => {
    await db?.close();
    await fresh?.drop();
  });
}

/** A fresh database: a temporary data directory, and on PostgreSQL a fresh schema. */
export async function freshDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return { env: { GATEWAY_DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  // scripts/test.mjs names its run and drops the run's schemas at the end: dropping
  // a schema while another file migrates makes PostgreSQL's catalog queries fail.
  const run = process.env.TEST_RUN_ID;
  const schema = `t_${run ? `${run}_` : ''}${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  return {
    env: { GATEWAY_DATA_DIR: dataDir, DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema}` },
    pgSchema: schema,
    drop: async () => {
      if (!run) {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The store of a fresh database (freshDatabase), opened as the gateway opens it, for tests below the HTTP layer. */
export function openTestStore(fresh: TestDatabase): Promise<Db> {
  return openDatabase({
    dataDir: fresh.env.GATEWAY_DATA_DIR ?? '',
    databaseUrl: fresh.env.DATABASE_URL,
    ...(fresh.pgSchema ? { pgSchema: fresh.pgSchema } : {}),
  });
}

/**
 * PostgreSQL: waits until another session is blocked on a lock `holder`
 * holds (polling from `db`, outside the holder), so that a test can order
 * what happens next; fails after about 10 s.
 */
export async function untilOneWaitsOn(db: Kysely<any>, holder: Transaction<any>): Promise<void> {
  const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(holder)).rows[0]?.pid;
  for (let tries = 0; tries < 1000; tries++) {
    const waiting = await sql<{ n: string }>`select count(*) as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(db);
    if (Number(waiting.rows[0]?.n) > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('nobody waited for the lock');
}

/** A customer account with a large balance, written straight to the store: its id. */
export async function insertTestAccount(db: Db, name: string): Promise<number> {
  const account = await db.kysely
    .insertInto('accounts')
    .values({ name, role: 'CUSTOMER', balance: 1_000_000_000, timezone: 'UTC', active: 1, created_at: Date.now() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(account.id);
}

/** An SMS route on `connector`, written straight to the store. */
export function insertTestRoute(db: Db, connector: string): Promise<RouteRow> {
  return db.kysely
    .insertInto('routes')
    .values({
      display_name: connector,
      product_name: 'SMS',
      product_id: 1,
      fare_price: 1000,
      reply_fare_price: 0,
      channel: 'SMS',
      connector,
      created_at: Date.now(),
    } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A send request of one-segment SMS to these receivers, as the accept job takes it (src/messaging/accept.ts): due now unless `scheduleAt`. */
export function smsRequest(
  accountId: number,
  route: RouteRow,
  receivers: string[],
  options: { content?: string; scheduleAt?: number | null; handoff?: Handoff | undefined } = {},
): AcceptInput {
  const content = options.content ?? 'hello';
  return {
    accountId,
    route,
    source: 'gateway',
    content,
    tag: null,
    custom: null,
    sender: null,
    scheduleAt: options.scheduleAt ?? null,
    ...(options.handoff ? { handoff: options.handoff } : {}),
    items: receivers.map((receiver) => ({ receiver, content, segments: 1, tag: null, custom: null, payload: null })),
  };
}

/** A send request of one SMS of one segment, now. */
export function oneSms(accountId: number, route: RouteRow, receiver: string, content = 'hello'): AcceptInput {
  return smsRequest(accountId, route, [receiver], { content });
}

export const ADMIN_TOKEN = 'test-operator-token-0123456789';

export interface TestGateway {
  app: FastifyInstance;
  core: Core;
  config: Config;
  db: TestDatabase;
  /** Operator API call with the admin token. */
  admin(method: InjectOptions['method'], url: string, payload?: unknown): Promise<{ status: number; body: any }>;
  /** Gateway call with an API key. */
  call(
    key: string | null,
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** A customer account with an SMS simulator route, credits and an API key. */
  customer(options?: {
    balance?: number | string;
    farePrice?: string;
    replyFarePrice?: string;
    allowedIps?: string[];
    role?: 'CUSTOMER' | 'RESELLER';
  }): Promise<Customer>;
  /** Waits until every accepted message and receipt was written and the predicate holds. */
  eventually<T>(probe: () => Promise<T>, done: (v: T) => boolean, what: string, ms?: number): Promise<T>;
  close(): Promise<void>;
}

export interface Customer {
  accountId: number;
  routeId: number;
  key: string;
  keyId: number;
}

/** Starts a gateway (core + app, no port) on a fresh database. */
export async function startGateway(env: Record<string, string> = {}, coreOptions: CoreOptions = {}, existing?: TestDatabase): Promise<TestGateway> {
  const db = existing ?? (await freshDatabase());
  const config = loadConfig({ SIMULATOR_DELIVERY_MS: '20', DISPATCH_POLL_MS: '20', LOG_LEVEL: 'silent', ...db.env, ...env });
  const core = await createCore(config, pino({ level: 'silent' }), { ...(db.pgSchema ? { pgSchema: db.pgSchema } : {}), ...coreOptions });
  const app = await buildApp(core, { adminToken: ADMIN_TOKEN, logger: false });

  const inject = async (options: InjectOptions) => {
    const res = await app.inject(options);
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.statusCode, body: body as any, headers: res.headers as Record<string, unknown> };
  };

  const gateway: TestGateway = {
    app,
    core,
    config,
    db,
    admin: (method, url, payload) =>
      inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload === undefined ? {} : { payload: payload as object }) }),
    call: (key, method, url, payload, headers = {}) =>
      inject({ method, url, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) }),
    async customer(options = {}) {
      const account = await gateway.admin('POST', '/admin/accounts', { name: 'Customer', balance: options.balance ?? 100, role: options.role ?? 'CUSTOMER' });
      const route = await gateway.admin('POST', '/admin/routes', {
        displayName: 'SMS Simulator',
        productName: 'SMS',
        productId: 1,
        farePrice: options.farePrice ?? '0.10',
        replyFarePrice: options.replyFarePrice ?? '0.02',
        channel: 'SMS',
        connector: 'simulator',
      });
      await gateway.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id });
      const key = await gateway.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, options.allowedIps ? { allowedIps: options.allowedIps } : {});
      return { accountId: account.body.id, routeId: route.body.id, key: key.body.key, keyId: key.body.id };
    },
    async eventually(probe, done, what, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        await core.settle();
        const value = await probe();
        if (done(value)) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await app.close();
      await core.close();
      if (!existing) await db.drop();
    },
  };
  return gateway;
}
