/** Shared set-up for SMPP integration tests: a simulator, a connector, and recorders. */
import type { CarrierEvents, Inbound, OutboundMessage, Receipt, SubmitResult } from '../../src/carriers/carrier.ts';
import { SmppCarrier, type SmppCarrierOptions } from '../../src/carriers/smpp/connector.ts';
import { silentLogger, type SmppLogger } from '../../src/carriers/smpp/smpp-lib.ts';
import { startSmscSimulator, type SmscSimulator, type SmscSimulatorOptions } from '../../tools/smsc-sim/server.ts';

/** SMPP_TEST_LOG=1 prints connector and simulator logs. */
const verbose = process.env.SMPP_TEST_LOG === '1';
const printLogger: SmppLogger = {
  debug: (o, m) => console.log('debug', m, o),
  info: (o, m) => console.log('info', m, o),
  warn: (o, m) => console.log('warn', m, o),
  error: (o, m) => console.log('error', m, o),
};

/** Polls until `check` holds; fails after `timeoutMs` (generous: tests must not depend on speed). */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function sms(id: string, receiver: string, content: string, sender: string | null = null): OutboundMessage {
  return { id, receiver, content, channel: 'SMS', payload: null, sender };
}

export interface Harness {
  sim: SmscSimulator;
  carrier: SmppCarrier;
  receipts: Receipt[];
  inbound: Inbound[];
  /** Every result in arrival order. */
  results: Array<{ id: string; result: SubmitResult }>;
  /** Message ids that got more than one result (must stay empty). */
  duplicates: string[];
  /** Order in which receipts and results were seen. */
  timeline: string[];
  /** Submits and waits for every result. */
  send(messages: OutboundMessage[]): Promise<Map<string, SubmitResult>>;
  close(): Promise<void>;
}

export const CREDENTIALS = { systemId: 'test', password: 'secret' };

export async function harness(simOptions: Partial<SmscSimulatorOptions> = {}, carrierOptions: Partial<SmppCarrierOptions> = {}): Promise<Harness> {
  const sim = await startSmscSimulator({
    ...CREDENTIALS,
    ...(verbose ? { log: (line: string) => console.log('sim', line) } : {}),
    ...simOptions,
  });
  const carrier = new SmppCarrier({
    name: 'smpp-test',
    host: '127.0.0.1',
    port: sim.port,
    ...CREDENTIALS,
    sourceAddr: 'ACME',
    responseTimeoutMs: 5_000,
    enquireLinkMs: 5_000,
    reconnectMinMs: 20,
    reconnectMaxMs: 200,
    throttleBackoffMinMs: 10,
    throttleBackoffMaxMs: 100,
    logger: verbose ? printLogger : silentLogger,
    ...carrierOptions,
  });
  const receipts: Receipt[] = [];
  const inbound: Inbound[] = [];
  const results: Harness['results'] = [];
  const timeline: string[] = [];
  const duplicates: string[] = [];
  const events: CarrierEvents = {
    receipt: async (r) => {
      receipts.push(r);
      timeline.push(`receipt ${r.carrierId}`);
    },
    inbound: async (m) => void inbound.push(m),
    unfinished: async () => [],
  };
  await carrier.start(events);
  return {
    sim,
    carrier,
    receipts,
    inbound,
    results,
    timeline,
    duplicates,
    async send(messages) {
      const out = new Map<string, SubmitResult>();
      await carrier.submit(messages, (id, result) => {
        if (out.has(id)) duplicates.push(id);
        out.set(id, result);
        results.push({ id, result });
        timeline.push(`result ${id} ${result.ok ? result.carrierIds.join(',') : result.error}`);
      });
      return out;
    },
    async close() {
      await carrier.stop();
      await sim.close();
    },
  };
}

/** The carrier ids of an ok result; throws otherwise. */
export function idsOf(result: SubmitResult | undefined): string[] {
  if (!result?.ok) throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result.carrierIds;
}

/** The error of a failed result and whether it may be retried; throws on success. */
export function failureOf(result: SubmitResult | undefined): { retry: boolean; error: string } {
  if (!result || result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return { retry: result.retry, error: result.error };
}
