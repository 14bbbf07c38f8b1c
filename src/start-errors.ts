import type { Config } from './config.ts';
import { redactUrl } from './config-errors.ts';

/**
 * A start that failed for a reason the operator can act on: one line that
 * names the setting and what to do, instead of a stack trace, and the exit
 * code a supervisor can tell apart (docs/operations.md, "Start errors"):
 * 78 (EX_CONFIG) when a setting is wrong and starting again will fail the
 * same way, 69 (EX_UNAVAILABLE) when something outside is not there yet
 * (the port is taken, the database does not answer) and a restart later
 * may work.
 */
export class StartError extends Error {
  constructor(
    message: string,
    readonly exitCode: 69 | 78,
  ) {
    super(message);
  }
}

export const EX_UNAVAILABLE = 69;
export const EX_CONFIG = 78;

type ErrnoLike = { code?: unknown; errors?: unknown; message?: unknown };

/** The error's code, or the code its parts share (Node connects to every address of a name and fails with an AggregateError). */
function codeOf(err: unknown): string | undefined {
  const e = err as ErrnoLike | null;
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors)) return e.errors.map(codeOf).find((c) => c !== undefined);
  return undefined;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Opening the database failed: say which database and why, or null when the error is not one of those known here. */
export function databaseStartError(err: unknown, config: Config): StartError | null {
  const code = codeOf(err);
  if (config.DATABASE_URL) {
    const url = `DATABASE_URL=${redactUrl(config.DATABASE_URL)}`;
    const unreachable: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ETIMEDOUT: 'connection timed out',
      EHOSTUNREACH: 'host unreachable',
      ENETUNREACH: 'network unreachable',
      ECONNRESET: 'connection reset',
      EAI_AGAIN: 'its host name does not resolve now',
      '57P03': 'the server is starting up or shutting down',
    };
    const reason = code ? unreachable[code] : undefined;
    if (reason)
      return new StartError(`database unreachable: ${url}: ${reason} (${code}); check that PostgreSQL runs there and accepts connections`, EX_UNAVAILABLE);
    if (code === 'ENOTFOUND')
      return new StartError(`database unreachable: ${url}: its host name is unknown (ENOTFOUND); check the host in DATABASE_URL`, EX_CONFIG);
    if (code === '28P01' || code === '28000')
      return new StartError(`database refused the login: ${url}: ${messageOf(err)}; check the user and password in DATABASE_URL`, EX_CONFIG);
    if (code === '3D000') return new StartError(`database missing: ${url}: ${messageOf(err)}; create it or fix the name in DATABASE_URL`, EX_CONFIG);
    return null;
  }
  const dir = `GATEWAY_DATA_DIR=${JSON.stringify(config.GATEWAY_DATA_DIR)}`;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN')
    return new StartError(`cannot write the data directory: ${dir}: ${messageOf(err)}; make it writable by this user or choose another directory`, EX_CONFIG);
  if (code === 'ENOTDIR' || code === 'EEXIST')
    return new StartError(`the data directory is not a directory: ${dir}: ${messageOf(err)}; point GATEWAY_DATA_DIR at a directory`, EX_CONFIG);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
    return new StartError(`the SQLite database in ${dir} is not readable as a database (${code}); restore a backup (docs/operations.md)`, EX_CONFIG);
  return null;
}

/** Listening failed: name HOST or PORT and what to do, or null when the error is not one of those known here. */
export function listenStartError(err: unknown, config: Config): StartError | null {
  const code = codeOf(err);
  const where = `HOST=${JSON.stringify(config.HOST)} PORT=${config.PORT}`;
  switch (code) {
    case 'EADDRINUSE':
      return new StartError(
        `cannot listen: port ${config.PORT} is in use (${where}); stop the process that holds it or set PORT to a free port`,
        EX_UNAVAILABLE,
      );
    case 'EACCES':
      return new StartError(
        `cannot listen: not allowed to use port ${config.PORT} (${where}); ports below 1024 need privileges: set PORT to 1024 or above`,
        EX_CONFIG,
      );
    case 'EADDRNOTAVAIL':
      return new StartError(
        `cannot listen: HOST=${JSON.stringify(config.HOST)} is not an address of this machine; use one of its addresses, 127.0.0.1, or 0.0.0.0 for all`,
        EX_CONFIG,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new StartError(
        `cannot listen: HOST=${JSON.stringify(config.HOST)} does not resolve to an address (${code}); use an IP address of this machine, 127.0.0.1, or 0.0.0.0 for all`,
        EX_CONFIG,
      );
    default:
      return null;
  }
}
