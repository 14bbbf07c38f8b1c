/**
 * Runs the RBM simulator: RBM_SIM_PORT (default 8790), RBM_SIM_TOKEN,
 * RBM_SIM_SECRET, RBM_SIM_WEBHOOK (the gateway's /rbm/events/<connector>),
 * RBM_SIM_DELIVERY_MS. Service accounts: RBM_SIM_SERVICE_ACCOUNT (a key
 * JSON file; its private key's public half checks assertions) or
 * RBM_SIM_PUBLIC_KEY (a PEM file) with RBM_SIM_CLIENT_EMAIL;
 * RBM_SIM_TOKEN_LIFETIME_S (default 3600). See docs/rcs.md.
 */
import { readFileSync } from 'node:fs';
import { RbmSim } from './server.ts';
import type { SimServiceAccount } from './token.ts';

const env = process.env;

function serviceAccount(): SimServiceAccount | undefined {
  if (env.RBM_SIM_SERVICE_ACCOUNT) {
    const key = JSON.parse(readFileSync(env.RBM_SIM_SERVICE_ACCOUNT, 'utf8')) as { client_email: string; private_key: string; private_key_id?: string };
    return { clientEmail: key.client_email, publicKey: key.private_key, ...(key.private_key_id ? { keyId: key.private_key_id } : {}) };
  }
  if (env.RBM_SIM_PUBLIC_KEY) {
    if (!env.RBM_SIM_CLIENT_EMAIL) throw new Error('RBM_SIM_PUBLIC_KEY needs RBM_SIM_CLIENT_EMAIL (the service account it belongs to)');
    return { clientEmail: env.RBM_SIM_CLIENT_EMAIL, publicKey: readFileSync(env.RBM_SIM_PUBLIC_KEY, 'utf8') };
  }
  return undefined;
}

const account = serviceAccount();
// The static token stays the default when no service account is configured (as before service accounts).
const token = env.RBM_SIM_TOKEN ?? (account ? undefined : 'rbm-sim-token');
const sim = await new RbmSim({
  port: Number(env.RBM_SIM_PORT ?? 8790),
  host: env.RBM_SIM_HOST ?? '127.0.0.1',
  ...(token ? { token } : {}),
  ...(account ? { serviceAccount: account } : {}),
  tokenLifetimeS: Number(env.RBM_SIM_TOKEN_LIFETIME_S ?? 3600),
  secret: env.RBM_SIM_SECRET ?? 'rbm-sim-secret',
  ...(env.RBM_SIM_WEBHOOK ? { webhookUrl: env.RBM_SIM_WEBHOOK } : {}),
  deliveryMs: Number(env.RBM_SIM_DELIVERY_MS ?? 500),
}).start();
console.log(
  `RBM simulator at ${sim.url}; token endpoint ${account ? sim.tokenUrl : '(none: set RBM_SIM_SERVICE_ACCOUNT)'}; events to ${sim.webhookUrl ?? '(none: set RBM_SIM_WEBHOOK)'}`,
);
const stop = () => void sim.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
