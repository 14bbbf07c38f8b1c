import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createCore } from './core.ts';
import { buildApp } from './app.ts';
import { createDemoAccount, operatorToken } from './bootstrap.ts';
import { startConfiguredSmppServer } from './smpp-server/start.ts';
import { StartError, databaseStartError, listenStartError } from './start-errors.ts';

/** The process: config, logger, core, HTTP listener, graceful shutdown. */
async function main() {
  const args = startArguments();
  const config: Config = loadConfig();
  // Under load most garbage is requests that lived through a few young collections while their commit reached the disk;
  // V8 would let the old generation grow to several times what is alive before collecting it (docs/operations.md, "Memory").
  if (config.HEAP_GROWTH_PERCENT > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWTH_PERCENT}`);
  // Asynchronous writes of at least 4 KiB or every quarter second: log lines (one per request with the access log) share a
  // write instead of one each (docs/operations.md, "Access log"); flushed at exit.
  const log = pino({ level: config.LOG_LEVEL }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }));
  // A database that does not answer or refuses us, a port in use: one line naming the setting (src/start-errors.ts).
  const core = await createCore(config, log).catch((err: unknown) => {
    throw databaseStartError(err, config) ?? err;
  });
  // One operator token per database, shared by every process (docs/operator.md).
  const token = await operatorToken(core);
  // The demo account only when asked for (--demo or GATEWAY_DEMO=true), and only on a new database.
  const demoWanted = args.demo || config.GATEWAY_DEMO === 'true';
  const demo = demoWanted ? await createDemoAccount(core) : null;
  const app = await buildApp(core, { adminToken: { sha256: token.sha256 } });
  const address = await app.listen({ host: config.HOST, port: config.PORT }).catch((err: unknown) => {
    throw listenStartError(err, config) ?? err;
  });
  // The SMPP server customers bind to (docs/smpp-server.md): SMPP_PORT, roles all and api.
  const smppServer = await startConfiguredSmppServer(core);
  const port = app.server.address();
  // The address to call this process at: 127.0.0.1 when listening on every interface.
  const host = ['0.0.0.0', '::'].includes(config.HOST) ? '127.0.0.1' : config.HOST;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${typeof port === 'object' && port ? port.port : config.PORT}`;

  if (token.source === 'generated') {
    const kept = token.file ? `also in ${token.file}` : 'shown only now: keep it';
    process.stdout.write(`\nOperator token: ${token.token}\n  (every gateway process on this database accepts it; ${kept})\n`);
  } else if (token.source === 'adopted') {
    log.info({ file: token.file }, 'operator token: the one in the data directory, now stored (as a digest) for every process on this database');
  } else if (token.source === 'database') {
    log.info({ file: token.file }, "operator token: this database's (printed once by the process that generated it; see docs/operator.md)");
  }
  if (token.staleFile) log.warn({ file: token.staleFile }, "the data directory's admin-token held another token than this database's; renamed");
  if (demoWanted && !demo) process.stdout.write('\nDemo: not created, the database already has accounts (a demo account is made only on a new database).\n');
  if (demo) {
    process.stdout.write(
      [
        '',
        `New database: created a demo account (balance 100.00, SMS route ${demo.routeId} on the simulator carrier).`,
        `Demo API key: ${demo.key}`,
        `Try:  curl -s -X POST ${base}/messages/sms/send -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' -d '{"receivers":[5511999998888],"message":"Hello!","route":${demo.routeId}}'`,
        `Then: curl -s ${base}/reports/messages/sent -H 'x-api-key: ${demo.key}'`,
        `Panel: ${base}/panel/  (sign in as ${demo.panelEmail} / ${demo.panelPassword})`,
        '',
      ].join('\n'),
    );
  }
  log.info({ address, base, database: core.db.dialect, role: core.role }, 'gateway listening; API docs at /docs');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await smppServer?.close();
    await app.close();
    await core.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** `npm start -- --demo`: the only argument; anything else is a usage error (exit 64). */
function startArguments(): { demo: boolean } {
  try {
    const { values } = parseArgs({ options: { demo: { type: 'boolean', default: false } }, strict: true, allowPositionals: false });
    return { demo: values.demo === true };
  } catch (err) {
    process.stderr.write(
      `${err instanceof Error ? err.message : String(err)}\nUsage: npm start [-- --demo]   (--demo: create a demo account on a new database)\n`,
    );
    process.exit(64);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  if (err instanceof StartError) {
    process.stderr.write(`gateway failed to start: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
