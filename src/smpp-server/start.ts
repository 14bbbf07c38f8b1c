import { readFileSync } from 'node:fs';
import type { Config } from '../config.ts';
import { EX_CONFIG, EX_UNAVAILABLE, StartError } from '../start-errors.ts';
import { startSmppServer, type SmppServer, type SmppServerDeps, type SmppServerOptions } from './server.ts';

/**
 * The SMPP server as the configuration asks (docs/smpp-server.md): on
 * SMPP_PORT at HOST, over TLS when SMPP_TLS_CERT and SMPP_TLS_KEY are set,
 * in processes that serve the API (GATEWAY_ROLE all or api; a dispatch
 * process serves no customer). Null when SMPP_PORT is unset. What stops
 * the start is one line naming the setting (src/start-errors.ts).
 */
export async function startConfiguredSmppServer(
  deps: SmppServerDeps & { config: Config; role: string },
  overrides: Partial<SmppServerOptions> = {},
): Promise<SmppServer | null> {
  const { config } = deps;
  if (config.SMPP_PORT === undefined || deps.role === 'dispatch') return null;
  const { SMPP_TLS_CERT: certFile, SMPP_TLS_KEY: keyFile } = config;
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new StartError('SMPP_TLS_CERT and SMPP_TLS_KEY: set both (SMPP over TLS) or neither (plain SMPP)', EX_CONFIG);
  const read = (name: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new StartError(`${name}=${file}: cannot be read (${err instanceof Error ? err.message : String(err)})`, EX_CONFIG);
    }
  };
  const tls = certFile !== undefined && keyFile !== undefined ? { cert: read('SMPP_TLS_CERT', certFile), key: read('SMPP_TLS_KEY', keyFile) } : undefined;
  try {
    return await startSmppServer(deps, {
      port: config.SMPP_PORT,
      host: config.HOST,
      tls,
      retentionDays: config.RETENTION_MESSAGES_DAYS,
      inactivityMs: config.SMPP_INACTIVITY_SECONDS * 1000,
      ...overrides,
    });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const where = `HOST=${JSON.stringify(config.HOST)} SMPP_PORT=${config.SMPP_PORT}`;
    if (code === 'EADDRINUSE')
      throw new StartError(
        `cannot listen for SMPP: port ${config.SMPP_PORT} is in use (${where}); stop the process that holds it or set SMPP_PORT to a free port`,
        EX_UNAVAILABLE,
      );
    if (code === 'EACCES') throw new StartError(`cannot listen for SMPP on ${where}: permission denied (ports below 1024 need privileges)`, EX_CONFIG);
    if (err instanceof Error && /key|cert|PEM/i.test(err.message))
      throw new StartError(`SMPP_TLS_CERT/SMPP_TLS_KEY: not a usable certificate and key (${err.message})`, EX_CONFIG);
    throw err;
  }
}
