import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createCore } from './core.ts';
import { buildApp } from './app.ts';
import { adminToken, createDemoAccount } from './bootstrap.ts';

/** The process: config, logger, core, HTTP listener, graceful shutdown. */
async function main() {
  const config: Config = loadConfig();
  const log = pino({ level: config.LOG_LEVEL });
  const core = await createCore(config, log);
  const token = adminToken(core);
  const demo = config.GATEWAY_DEMO === 'true' ? await createDemoAccount(core) : null;
  const app = await buildApp(core, { adminToken: token.token });
  const address = await app.listen({ host: config.HOST, port: config.PORT });
  const port = app.server.address();
  const base = `http://localhost:${typeof port === 'object' && port ? port.port : config.PORT}`;

  if (token.generated) process.stdout.write(`\nOperator token (also in ${config.GATEWAY_DATA_DIR}/admin-token): ${token.token}\n`);
  if (demo) {
    process.stdout.write(
      [
        '',
        'New database: created a demo account (balance 100.00, SMS route 1 on the simulator carrier).',
        `Demo API key: ${demo.key}`,
        `Try:  curl -s -X POST ${base}/messages/sms/send -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' -d '{"receivers":[5511999998888],"message":"Hello!","route":${demo.routeId}}'`,
        `Then: curl -s ${base}/reports/messages/sent -H 'x-api-key: ${demo.key}'`,
        '',
      ].join('\n'),
    );
  }
  log.info({ address, base, database: core.db.dialect }, 'gateway listening; API docs at /docs');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await app.close();
    await core.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
