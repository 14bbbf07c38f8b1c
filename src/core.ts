import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, type Db } from './db/database.ts';
import { GroupCommitter } from './db/group-commit.ts';
import { KeyAuthenticator } from './accounts/api-keys.ts';
import { AccountRoutes } from './routing/account-routes.ts';
import { acceptJob, refusalError, type AcceptInput, type AcceptItem, type AcceptRefusal, type AcceptResult } from './messaging/accept.ts';
import { recordInbound, type StoredReply } from './messaging/replies.ts';
import { outcomesJob, packOutcomes, type Outcome } from './messaging/outcomes.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import type { Carrier, CarrierEvents } from './carriers/carrier.ts';
import { SimulatorCarrier } from './carriers/simulator/simulator.ts';
import { buildCarriers, readCarriersFile } from './carriers/connections.ts';
import { createEvents, type Events } from './events/events.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { contextRulesHook } from './contextrules/hook.ts';
import { unfinishedCarrierIds } from './messaging/outbox.ts';

/**
 * The composition root below HTTP: database, use-case machinery, carriers
 * and the dispatcher loop. The HTTP app, the CLI and tests all build on it.
 */
export interface Core {
  config: Config;
  log: Logger;
  db: Db;
  auth: KeyAuthenticator;
  /** Each account's routes, cached a second (src/routing/account-routes.ts). */
  routes: AccountRoutes;
  carriers: Map<string, Carrier>;
  simulator: SimulatorCarrier;
  dispatcher: Dispatcher;
  /** Durably records a send request (group commit) and wakes the dispatcher. */
  accept(input: AcceptInput): Promise<AcceptResult>;
  /** Hooks run after an inbound text was stored (context rules, opt-out, webhooks). */
  onReply: ((reply: StoredReply) => Promise<void>)[];
  /** Webhooks, legacy callbacks, opt-out, and the SSRF-safe outbound HTTP client (src/events, src/net). */
  events: Events;
  /** Prometheus figures of this core (src/metrics, docs/metrics.md). */
  metrics: Metrics;
  /** Resolves when every accepted result and receipt has been written. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Start the dispatcher loop and carriers (the CLI does not). */
  dispatch?: boolean;
  pgSchema?: string;
  extraCarriers?: Carrier[];
}

export async function createCore(config: Config, log: Logger, options: CoreOptions = {}): Promise<Core> {
  const simulator = new SimulatorCarrier(config.SIMULATOR_DELIVERY_MS, config.SIMULATOR_JOURNAL ?? null);
  const carriers = new Map<string, Carrier>([[simulator.name, simulator]]);
  const configured = config.GATEWAY_CARRIERS_FILE ? buildCarriers(readCarriersFile(config.GATEWAY_CARRIERS_FILE), process.env, log) : [];
  for (const c of [...configured, ...(options.extraCarriers ?? [])]) carriers.set(c.name, c);
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

  const metrics = createMetrics({ db, carriers, log });
  const accepter = new GroupCommitter<AcceptInput, AcceptResult | AcceptRefusal>((items) => db.run(acceptJob, items));
  // Outcomes must be written in the order they came (a submit result before its
  // receipt, which looks up the carrier id the result records). SQLite runs one
  // transaction after the other, so a batch may be written while the previous
  // one waits for the disk; PostgreSQL would run two side by side: one at a time.
  const outcomes = new GroupCommitter<Outcome, void>(
    async (items) => {
      await db.run(outcomesJob, [packOutcomes(items)]);
      return items.map(() => undefined);
    },
    500,
    db.dialect === 'sqlite' ? 2 : 1,
  );
  const dispatcher = new Dispatcher(
    db,
    carriers,
    outcomes,
    log,
    {
      leaseMs: config.DISPATCH_LEASE_MS,
      batch: config.DISPATCH_BATCH,
      pollMs: config.DISPATCH_POLL_MS,
    },
    metrics.submitted,
  );
  const onReply: Core['onReply'] = [];
  // Events (src/events): opt-out runs first among the reply hooks; the webhook deliverer is a loop beside the dispatcher.
  const events = createEvents(db, config, log);
  onReply.push((reply) => events.onReply(reply));

  const eventsFor = (connector: string): CarrierEvents => ({
    // Both resolve once written, and the carrier acknowledges to its peer only then (see CarrierEvents).
    receipt: async (receipt) => {
      metrics.receipt(connector, receipt.status);
      try {
        await outcomes.submit({ kind: 'receipt', connector, receipt });
      } catch (err) {
        log.error({ err, connector }, 'could not record a receipt; the carrier is asked to send it again');
        throw err;
      }
    },
    inbound: async (message) => {
      metrics.inbound(connector);
      let reply: Awaited<ReturnType<typeof recordInbound>>;
      try {
        reply = await recordInbound(db.kysely, connector, message);
      } catch (err) {
        log.error({ err, connector }, 'could not record an inbound message; the carrier is asked to send it again');
        throw err;
      }
      // Automatic answers, opt-out, webhooks: after the acknowledgement, never holding it up.
      void (async () => {
        for (const hook of onReply) await hook(reply);
      })().catch((err: unknown) => log.error({ err, connector }, 'a reply hook failed'));
    },
    unfinished: () => unfinishedCarrierIds(db.kysely, connector),
  });

  const dispatch = options.dispatch ?? true;
  if (dispatch) {
    for (const carrier of carriers.values()) await carrier.start(eventsFor(carrier.name));
    await dispatcher.start();
    events.start();
  }

  const core: Core = {
    config,
    log,
    db,
    auth: new KeyAuthenticator(db.kysely),
    routes: new AccountRoutes(db.kysely),
    carriers,
    simulator,
    dispatcher,
    onReply,
    events,
    metrics,
    accept: async (input) => {
      // Messages due now may go to this process's carrier straight from the accept, without a claim (Handoff in src/messaging/accept.ts).
      const connector = input.route.connector;
      const due = input.scheduleAt === null || input.scheduleAt <= Date.now();
      const handoff = due ? dispatcher.reserve(connector, input.items.length) : null;
      let result: AcceptResult;
      try {
        const answer = await accepter.submit(handoff ? { ...input, handoff } : input);
        if ('refused' in answer) throw refusalError(answer);
        result = answer;
      } catch (err) {
        if (handoff) dispatcher.release(connector, handoff.count);
        throw err;
      }
      if (handoff) {
        const channel = input.route.channel;
        dispatcher.adopt(
          connector,
          handoff.count,
          result.handedOff.map(([index, id]) => {
            const item = input.items[index] as AcceptItem;
            return { id, receiver: item.receiver, content: item.content, channel, payload: item.payload, attempts: 1, schedule_at: result.scheduleAt };
          }),
        );
      }
      metrics.accepted(input.route.channel, result.messages - result.blocked);
      // What was left in the outbox is claimed now rather than at the next poll.
      if (result.messages - result.blocked > result.handedOff.length) dispatcher.wake();
      return result;
    },
    settle: async () => {
      await accepter.idle();
      await outcomes.idle();
    },
    close: async () => {
      // Accepts still being written first: what they hand off is sent before the dispatcher stops, not left leased.
      await accepter.idle();
      if (dispatch) {
        await dispatcher.stop();
        for (const carrier of carriers.values()) await carrier.stop();
      }
      await outcomes.idle();
      await events.close();
      await db.close();
    },
  };
  // Automatic answers (context rules) after the events' hook (opt-out first), in every process whatever interfaces it serves.
  onReply.push(contextRulesHook({ db: db.kysely, accept: (input) => core.accept(input), routes: (accountId) => core.routes.list(accountId), log }));
  return core;
}
