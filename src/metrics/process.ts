import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

let shared: Metric[] | null = null;

/**
 * The default Node.js and process metrics (CPU, memory, event loop lag,
 * GC, handles...), created once per process: they describe the process,
 * and each set starts a GC observer and an event-loop delay monitor that
 * cannot be stopped. Every core's registry registers the same metric
 * objects (tests run many cores in one process).
 */
export function processMetrics(): Metric[] {
  if (!shared) {
    const register = new Registry();
    collectDefaultMetrics({ register });
    shared = register.getMetricsAsArray() as unknown as Metric[];
  }
  return shared;
}
