/**
 * Runs the RBM simulator: RBM_SIM_PORT (default 8790), RBM_SIM_TOKEN,
 * RBM_SIM_SECRET, RBM_SIM_WEBHOOK (the gateway's /rbm/events/<connector>),
 * RBM_SIM_DELIVERY_MS. See docs/rcs.md.
 */
import { RbmSim } from './server.ts';

const env = process.env;
const sim = await new RbmSim({
  port: Number(env.RBM_SIM_PORT ?? 8790),
  host: env.RBM_SIM_HOST ?? '127.0.0.1',
  token: env.RBM_SIM_TOKEN ?? 'rbm-sim-token',
  secret: env.RBM_SIM_SECRET ?? 'rbm-sim-secret',
  ...(env.RBM_SIM_WEBHOOK ? { webhookUrl: env.RBM_SIM_WEBHOOK } : {}),
  deliveryMs: Number(env.RBM_SIM_DELIVERY_MS ?? 500),
}).start();
console.log(`RBM simulator at ${sim.url}; events to ${sim.webhookUrl ?? '(none: set RBM_SIM_WEBHOOK)'}`);
const stop = () => void sim.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
