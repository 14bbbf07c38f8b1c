/**
 * The SMSC simulator as the SMPP benchmarks' sink, in a child process of
 * its own (its CPU is not the bench's or the gateway's): no outcome rules,
 * every submit accepted and delivered, receipts after 20 ms.
 */
import { pathToFileURL } from 'node:url';
import { startSmscSimulator } from '../tools/smsc-sim/server.ts';
import { type Child, spawnChild } from './proc.ts';

/** Starts the child; `value` is the port it listens on. */
export function startSimChild(systemId: string, password: string): Promise<Child & { value: number }> {
  return spawnChild(['bench/sim-child.ts', systemId, password], {}, (e) => (typeof e.sink === 'number' ? e.sink : undefined));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [systemId = '', password = ''] = process.argv.slice(2);
  const sim = await startSmscSimulator({ systemId, password, receiptDelayMs: 20, rules: [] });
  process.stdout.write(`${JSON.stringify({ sink: sim.port })}\n`);
  const exit = (): void => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', exit);
  process.stdin.on('close', exit); // the bench died
  process.stdin.resume();
}
