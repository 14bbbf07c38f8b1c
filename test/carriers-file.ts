import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSmscSimulator, type SmscSimulator } from '../tools/smsc-sim/server.ts';

const PASSWORD_ENV = 'TEST_SMSC_PASSWORD';

/**
 * An SMSC simulator and a carriers file naming it as connection `smsc`: the
 * environment a spawned gateway needs to send there (GATEWAY_CARRIERS_FILE
 * and the password variable).
 */
export async function smscWithCarriersFile(
  connection: Record<string, unknown> = {},
): Promise<{ sim: SmscSimulator; env: Record<string, string>; close(): Promise<void> }> {
  const sim = await startSmscSimulator({ systemId: 'gwtest', password: 'secret1', receiptDelayMs: 5 });
  const dir = mkdtempSync(join(tmpdir(), 'gw-carriers-'));
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({
      smpp: [
        {
          name: 'smsc',
          host: '127.0.0.1',
          port: sim.port,
          systemId: 'gwtest',
          passwordEnv: PASSWORD_ENV,
          sourceAddr: 'ACME',
          reconnectMinMs: 20,
          reconnectMaxMs: 200,
          ...connection,
        },
      ],
    }),
  );
  return {
    sim,
    env: { GATEWAY_CARRIERS_FILE: file, [PASSWORD_ENV]: 'secret1' },
    close: async () => {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
