import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openBase, type Base, type BaseOptions } from './base.ts';
import { GroupCommitter } from './db/group-commit.ts';
import { acceptJob, refusalError, type AcceptInput, type AcceptItem, type AcceptRefusal, type AcceptResult } from './messaging/accept.ts';
import { recordInbound, type StoredReply } from './messaging/replies.ts';
import { outcomesJob, packOutcomes, type Outcome } from './messaging/outcomes.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import type { CarrierEvents } from './carriers/carrier.ts';
import { chooseLeg, receiverPick } from './routing/legs.ts';
import { createEvents, type Events } from './events/events.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { contextRulesHook } from './contextrules/hook.ts';
import { unfinishedCarrierIds } from './messaging/outbox.ts';
import { Retention } from './retention/retention.ts';
import { openMediaStorage } from './rcs/storage.ts';
import { ProcessBeacon, type Role } from './dispatch/cluster.ts';

/**
 * The composition root below HTTP: on the base (src/base.ts: database,
 * caches, carrier connections), the use-case machinery, the carriers
 * started and the dispatcher loop. The HTTP app and tests build on it; the
 * CLI opens only the base.
 */
export interface Core extends Base {
  dispatcher: Dispatcher;
  /** Durably records a send request (group commit) and wakes the dispatcher. */
  accept(input: AcceptInput): Promise<AcceptResult>;
  /** Hooks run after an inbound text was stored (context rules, opt-out, webhooks). */
  onReply: ((reply: StoredReply) => Promise<void>)[];
  /** Webhooks, legacy callbacks, opt-out, and the SSRF-safe outbound HTTP client (src/events, src/net). */
  events: Events;
  /** Prometheus figures of this core (src/metrics, docs/metrics.md). */
  metrics: Metrics;
  /** The daily deletion of old finished messages and unused media (src/retention; off unless RETENTION_* are set). */
  retention: Retention;
  /** What this process does (GATEWAY_ROLE, docs/operations.md "Running several processes"). */
  role: Role;
  /** This process's row in the cluster registry (src/dispatch/cluster.ts, GET /admin/cluster). */
  beacon: ProcessBeacon;
  /** Resolves when every accepted result and receipt has been written. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Most messages one accept transaction writes (one request of more is written alone). */
const ACCEPT_BATCH_ROWS = 2000;

export interface CoreOptions extends BaseOptions {
  /** Start the dispatcher loop and carriers (default unless GATEWAY_ROLE=api); false: a process that serves HTTP and sends nothing. */
  dispatch?: boolean;
}

export async function createCore(config: Config, log: Logger, options: CoreOptions = {}): Promise<Core> {
  const base = await openBase(config, log, options);
  const { db, carriers } = base;

  const metrics = createMetrics({ db, carriers, log });
  // Accept batches of at most ACCEPT_BATCH_ROWS messages, so that claims and carrier answers interleave with a bulk load (docs/performance.md).
  const accepter = new GroupCommitter<AcceptInput, AcceptResult | AcceptRefusal>((items) => db.run(acceptJob, items), 500, 2, {
    of: (input) => input.items.length,
    max: ACCEPT_BATCH_ROWS,
  });
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
      connectionLeaseMs: config.CONNECTION_LEASE_MS,
    },
    (connector) => eventsFor(connector),
    metrics.submitted,
    (held) => beacon.setConnectors(held),
  );
  const onReply: Core['onReply'] = [];
  // Events (src/events): opt-out runs first among the reply hooks; the webhook deliverer is a loop beside the dispatcher.
  const events = createEvents(db, config, log);
  onReply.push((reply) => events.onReply(reply));

  const withLegs = async (input: AcceptInput): Promise<AcceptInput> => {
    const legs = await base.legs.get(Number(input.route.id));
    if (legs.length === 0) return input;
    const items = input.items.map((item) => {
      const leg = chooseLeg(legs, item.receiver, receiverPick(item.receiver));
      return leg ? { ...item, connector: leg.connector } : item;
    });
    return { ...input, items };
  };

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

  // Retention (src/retention): a loop beside the dispatcher, once a day across the processes sharing the database.
  const retention = new Retention(
    db,
    log.child({ component: 'retention' }),
    { messagesDays: config.RETENTION_MESSAGES_DAYS, mediaDays: config.RETENTION_MEDIA_DAYS },
    () => openMediaStorage(config),
  );

  // GATEWAY_ROLE=api: no carriers, dispatcher, webhook deliverer or retention loop; accepted messages wait in the outbox for a dispatch process.
  const role: Role = config.GATEWAY_ROLE;
  const dispatch = options.dispatch ?? role !== 'api';
  // What it does, when a caller (a test) overrides the role's default.
  const acting: Role = dispatch ? (role === 'api' ? 'all' : role) : 'api';
  // The carriers are started by the dispatcher, for the connections it holds (src/dispatch/connection-leases.ts).
  const beacon = new ProcessBeacon(db.kysely, acting, config.DISPATCH_LEASE_MS, (err) =>
    log.error({ err }, 'could not update this process in the cluster registry; trying again later'),
  );
  if (dispatch) {
    await dispatcher.start();
    events.start();
    retention.start();
  }
  await beacon.start();

  const core: Core = {
    ...base,
    dispatcher,
    onReply,
    events,
    metrics,
    retention,
    role: acting,
    beacon,
    accept: async (given) => {
      // A route with legs: each message's connection (src/routing/legs.ts); without legs, its connector carries them all.
      const input = await withLegs(given);
      // Messages due now may go to this process's carrier straight from the accept, without a claim (Handoff in src/messaging/accept.ts).
      // With legs, only those of one connection (the first message's) are offered.
      const connector = input.items[0]?.connector ?? input.route.connector;
      const wanted = input === given ? input.items.length : input.items.filter((item) => (item.connector ?? input.route.connector) === connector).length;
      const due = input.scheduleAt === null || input.scheduleAt <= Date.now();
      // Never without a running dispatcher here (an api process): the messages wait in the outbox for a dispatch process.
      const handoff = due && dispatch ? dispatcher.reserve(connector, wanted) : null;
      let result: AcceptResult;
      try {
        const answer = await accepter.submit(handoff ? { ...input, handoff } : input);
        if ('refused' in answer) throw refusalError(answer);
        result = answer;
      } catch (err) {
        if (handoff) dispatcher.release(handoff);
        throw err;
      }
      if (handoff) {
        const channel = input.route.channel;
        dispatcher.adopt(
          handoff,
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
      await beacon.stop();
      if (dispatch) {
        await dispatcher.stop();
      }
      await outcomes.idle();
      await events.close();
      await retention.stop();
      await base.close();
    },
  };
  // Automatic answers (context rules) after the events' hook (opt-out first), in every process whatever interfaces it serves.
  onReply.push(contextRulesHook({ db: db.kysely, accept: (input) => core.accept(input), routes: (accountId) => core.routes.list(accountId), log }));
  return core;
}
