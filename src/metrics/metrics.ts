import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Carrier, ReceiptStatus } from '../carriers/carrier.ts';
import type { SubmitOutcome } from '../dispatch/dispatcher.ts';
import { Children } from './children.ts';
import { processMetrics } from './process.ts';
import { WAITING, waitingMessages } from '../messaging/outbox.ts';

/** A scrape does not wait longer than this for the outbox count; past it the gauge is left out of that scrape. */
const OUTBOX_TIMEOUT_MS = 5_000;
/** Request durations: the API answers in about a millisecond, the operator's imports in seconds. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The route label of requests no route matched (never the raw URL: one series per path would be unbounded). */
export const UNMATCHED = 'unmatched';
const SUBMIT_OUTCOMES: SubmitOutcome[] = ['accepted', 'retry', 'failed'];
const RECEIPT_STATUSES: ReceiptStatus[] = ['SENT', 'DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED'];

/**
 * One core's Prometheus figures (docs/metrics.md). Counters of this process;
 * gauges read at scrape time from the carrier connections and, for the
 * outbox, from the database shared by every process.
 */
export interface Metrics {
  /** This core's registry (never prom-client's global one: tests run many cores in one process). */
  readonly registry: Registry;
  /** `count` messages of a channel were accepted (recorded for sending). */
  accepted(channel: 'SMS' | 'RCS', count: number): void;
  /** A carrier answered a submit. */
  submitted(connector: string, outcome: SubmitOutcome): void;
  /** The submits a connection answered since this process started, by result (GET /admin/carriers). */
  submits(connector: string): SubmitTotals;
  /** A carrier reported a delivery receipt. */
  receipt(connector: string, status: ReceiptStatus): void;
  /** A carrier brought an inbound message (a reply). */
  inbound(connector: string): void;
  /** An HTTP answer: `route` is the route template, or UNMATCHED. */
  response(method: string, route: string, status: number, seconds: number): void;
}

/** Submits answered by one connection since the process started (the same as `gateway_carrier_submits_total`). */
export type SubmitTotals = Record<SubmitOutcome, number>;

export function createMetrics(deps: { db: Db; carriers: ReadonlyMap<string, Carrier>; log: Logger }): Metrics {
  const { db, carriers, log } = deps;
  const registry = new Registry();
  for (const metric of processMetrics()) registry.registerMetric(metric);
  const registers = [registry];

  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route template (unmatched: no route) and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const durations = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to the end of its answer, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const accepted = new Counter({
    name: 'gateway_messages_accepted_total',
    help: 'Messages accepted for sending (each receiver of a request; blocked receivers excluded), by channel.',
    labelNames: ['channel'] as const,
    registers,
  });
  const submits = new Counter({
    name: 'gateway_carrier_submits_total',
    help: 'Carrier answers to message submits, by connector and result (accepted, retry, failed).',
    labelNames: ['connector', 'result'] as const,
    registers,
  });
  const receipts = new Counter({
    name: 'gateway_carrier_receipts_total',
    help: 'Delivery receipts received from carriers, by connector and the status they report.',
    labelNames: ['connector', 'status'] as const,
    registers,
  });
  const inbound = new Counter({
    name: 'gateway_inbound_messages_total',
    help: 'Inbound messages (replies) received from carriers, by connector.',
    labelNames: ['connector'] as const,
    registers,
  });

  new Gauge({
    name: 'gateway_carrier_ready',
    help: '1 while the carrier connection takes messages (bind up), else 0.',
    labelNames: ['connector'] as const,
    registers,
    collect() {
      for (const carrier of carriers.values()) this.set({ connector: carrier.name }, carrier.ready() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gateway_carrier_free_window',
    help: 'How many more messages the carrier connection can take right now (free window).',
    labelNames: ['connector'] as const,
    registers,
    collect() {
      for (const carrier of carriers.values()) this.set({ connector: carrier.name }, carrier.capacity());
    },
  });
  new Gauge({
    name: 'gateway_outbox_messages',
    help: 'Messages waiting in the outbox of the database (all gateway processes sharing it), by connector and status.',
    labelNames: ['connector', 'status'] as const,
    registers,
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer from the database in ${OUTBOX_TIMEOUT_MS} ms`)), OUTBOX_TIMEOUT_MS);
          timer.unref();
        });
        const rows = await Promise.race([waitingMessages(db.kysely), timeout]);
        // Set all at once after the query, so that a concurrent scrape never sees half of it.
        this.reset();
        for (const connector of carriers.keys()) for (const status of WAITING) this.set({ connector, status }, 0);
        for (const row of rows) this.set({ connector: row.connector, status: row.status }, row.n);
      } catch (err) {
        this.reset();
        log.warn({ err }, 'metrics: could not count the outbox; gateway_outbox_messages left out of this scrape');
      } finally {
        clearTimeout(timer);
      }
    },
  });

  // Known label sets start at 0, so that rate() and increase() see their first events.
  for (const channel of ['SMS', 'RCS']) accepted.inc({ channel }, 0);
  for (const connector of carriers.keys()) {
    for (const result of SUBMIT_OUTCOMES) submits.inc({ connector, result }, 0);
    for (const status of RECEIPT_STATUSES) receipts.inc({ connector, status }, 0);
    inbound.inc({ connector }, 0);
  }

  const byRoute = new Children(
    (route: string) =>
      new Children((method: string) => ({
        duration: durations.labels(method, route),
        byStatus: new Children((status: number) => requests.labels(method, route, String(status))),
      })),
  );
  const byChannel = new Children((channel: string) => accepted.labels(channel));
  const submitsOf = new Children((connector: string) => new Children((outcome: SubmitOutcome) => submits.labels(connector, outcome)));
  // Kept beside the counter so the operator API reads them without a scrape.
  const totals = new Children((_connector: string): SubmitTotals => ({ accepted: 0, retry: 0, failed: 0 }));
  const receiptsOf = new Children((connector: string) => new Children((status: ReceiptStatus) => receipts.labels(connector, status)));
  const inboundOf = new Children((connector: string) => inbound.labels(connector));

  return {
    registry,
    accepted: (channel, count) => {
      if (count > 0) byChannel.get(channel).inc(count);
    },
    submitted: (connector, outcome) => {
      submitsOf.get(connector).get(outcome).inc();
      totals.get(connector)[outcome]++;
    },
    submits: (connector) => ({ ...totals.get(connector) }),
    receipt: (connector, status) => receiptsOf.get(connector).get(status).inc(),
    inbound: (connector) => inboundOf.get(connector).inc(),
    response: (method, route, status, seconds) => {
      const children = byRoute.get(route).get(method);
      children.byStatus.get(status).inc();
      children.duration.observe(seconds);
    },
  };
}
