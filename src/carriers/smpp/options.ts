/**
 * Options of an SMPP connection, with their defaults and checks, kept apart
 * from the connector so that config loading can import them alone.
 */
import type { ConnectionOptions } from 'node:tls';
import type { IdBase } from './receipt.ts';
import { silentLogger, type SmppLogger } from './smpp-lib.ts';

export interface SmppCarrierOptions {
  /** Carrier name (Carrier.name), also used in logs. */
  name: string;
  host: string;
  port: number;
  /** Connect with TLS ("SMPP over TLS", usually port 3550). */
  tls?: boolean;
  /** Extra TLS options (CA, client certificate, rejectUnauthorized...). */
  tlsOptions?: ConnectionOptions;
  systemId: string;
  password: string;
  systemType?: string;
  /**
   * One transceiver bind (default), or a transmitter plus a receiver bind for
   * SMSCs without transceiver support; then ready() follows the transmitter
   * and the receiver reconnects on its own (the SMSC holds receipts meanwhile).
   */
  bindMode?: 'transceiver' | 'transmitter_receiver';
  /** Default sender; messages may override it. */
  sourceAddr: string;
  /** TON/NPI of sourceAddr and of numeric senders without "+"; default inferred (alphanumeric 5/0, else 1/1). */
  sourceTon?: number;
  sourceNpi?: number;
  /** TON/NPI of receivers (default 1/1: international, E.164 without "+"). */
  destTon?: number;
  destNpi?: number;
  /** Outstanding submit_sm without response (default 10), over all binds of the connection (see maxBinds). */
  windowSize?: number;
  /**
   * Parts held ready beyond the window (default twice the window), so that a
   * slot that frees is refilled at once rather than after the dispatcher's
   * next claim. Under maxSubmitsPerSecond, no more than a second of it.
   */
  queueSize?: number;
  /** Rate limit of the SMSC contract, submit_sm a second over all binds of the connection (see maxBinds); 0 = none (default). */
  maxSubmitsPerSecond?: number;
  /**
   * Binds the SMSC allows on this account (default 1), held by as many
   * gateway processes (src/dispatch/connection-leases.ts): each bind gets
   * 1/maxBinds of windowSize (at least 1) and of maxSubmitsPerSecond.
   */
  maxBinds?: number;
  /** How long every bind may be down before a route's next leg takes this connection's messages (default 10 s). */
  failoverAfterMs?: number;
  /** How long to wait for any response (and for connecting) before closing the connection (default 10 s). */
  responseTimeoutMs?: number;
  /** enquire_link period (default 30 s). */
  enquireLinkMs?: number;
  /** Base of submit_sm_resp message ids (default hex); see receipt.ts for how ids are matched. */
  idBase?: IdBase;
  /** Base of the id in receipt texts when it differs from idBase. */
  receiptIdBase?: IdBase;
  /** registered_delivery of submits (default 1: receipt on final outcome). */
  registeredDelivery?: number;
  /** Reconnect back-off bounds (default 1 s .. 60 s). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Pause after ESME_RTHROTTLED/ESME_RMSGQFUL, doubling while they go on (default 200 ms .. 10 s). */
  throttleBackoffMinMs?: number;
  throttleBackoffMaxMs?: number;
  /** Throttle answers one part may get before its message is handed back with retry (default 100). */
  maxThrottleRetries?: number;
  /** Keep at most one submit per receiver outstanding so that an SMSC sees each receiver's parts and messages in order (default true). */
  orderPerReceiver?: boolean;
  /** How long to wait for missing parts of an inbound message (default 10 min). */
  inboundPartTimeoutMs?: number;
  logger?: SmppLogger;
}

export type ResolvedOptions = Required<Omit<SmppCarrierOptions, 'tlsOptions' | 'receiptIdBase'>> & Pick<SmppCarrierOptions, 'tlsOptions' | 'receiptIdBase'>;

/** SMPP address, TON and NPI for a number or name as we get it ("+4912...", "4912...", "ACME"). */
export function smppAddress(value: string, fallback?: { ton: number; npi: number }): { addr: string; ton: number; npi: number } {
  if (/^\+\d+$/.test(value)) return { addr: value.slice(1), ton: 1, npi: 1 };
  if (/^\d+$/.test(value)) return { addr: value, ...(fallback ?? { ton: 1, npi: 1 }) };
  return { addr: value, ton: 5, npi: 0 };
}

/** Fills in defaults; throws on values that cannot work. */
export function resolveOptions(o: SmppCarrierOptions): ResolvedOptions {
  const source = smppAddress(o.sourceAddr);
  const binds = o.maxBinds ?? 1;
  if (!Number.isInteger(binds) || binds < 1) throw new RangeError('SMPP option maxBinds must be an integer >= 1');
  const r: ResolvedOptions = {
    name: o.name,
    host: o.host,
    port: o.port,
    tls: o.tls ?? false,
    tlsOptions: o.tlsOptions,
    systemId: o.systemId,
    password: o.password,
    systemType: o.systemType ?? '',
    bindMode: o.bindMode ?? 'transceiver',
    sourceAddr: o.sourceAddr,
    sourceTon: o.sourceTon ?? source.ton,
    sourceNpi: o.sourceNpi ?? source.npi,
    destTon: o.destTon ?? 1,
    destNpi: o.destNpi ?? 1,
    // This bind's share of the connection's window and rate.
    windowSize: Math.max(1, Math.floor((o.windowSize ?? 10) / binds)),
    queueSize: o.queueSize ?? 2 * Math.max(1, Math.floor((o.windowSize ?? 10) / binds)),
    maxSubmitsPerSecond: (o.maxSubmitsPerSecond ?? 0) / binds,
    maxBinds: binds,
    failoverAfterMs: o.failoverAfterMs ?? 10_000,
    responseTimeoutMs: o.responseTimeoutMs ?? 10_000,
    enquireLinkMs: o.enquireLinkMs ?? 30_000,
    idBase: o.idBase ?? 'hex',
    receiptIdBase: o.receiptIdBase,
    registeredDelivery: o.registeredDelivery ?? 1,
    reconnectMinMs: o.reconnectMinMs ?? 1_000,
    reconnectMaxMs: o.reconnectMaxMs ?? 60_000,
    throttleBackoffMinMs: o.throttleBackoffMinMs ?? 200,
    throttleBackoffMaxMs: o.throttleBackoffMaxMs ?? 10_000,
    maxThrottleRetries: o.maxThrottleRetries ?? 100,
    orderPerReceiver: o.orderPerReceiver ?? true,
    inboundPartTimeoutMs: o.inboundPartTimeoutMs ?? 10 * 60_000,
    logger: o.logger ?? silentLogger,
  };
  const positive = ['port', 'windowSize', 'responseTimeoutMs', 'enquireLinkMs', 'reconnectMinMs', 'throttleBackoffMinMs'] as const;
  for (const key of positive) {
    if (!Number.isFinite(r[key]) || r[key] <= 0) throw new RangeError(`SMPP option ${key} must be > 0`);
  }
  if (!Number.isInteger(r.queueSize) || r.queueSize < 0) throw new RangeError('SMPP option queueSize must be an integer >= 0');
  if (r.reconnectMaxMs < r.reconnectMinMs) throw new RangeError('SMPP option reconnectMaxMs must be >= reconnectMinMs');
  if (r.throttleBackoffMaxMs < r.throttleBackoffMinMs) throw new RangeError('SMPP option throttleBackoffMaxMs must be >= throttleBackoffMinMs');
  // SMPP 3.4 limits (§5.2.1-2); some SMSCs accept more, so only warn.
  if (r.systemId.length > 15 || r.password.length > 8) {
    r.logger.warn({ carrier: r.name }, 'SMPP system_id over 15 or password over 8 characters; strict SMSCs will refuse the bind');
  }
  return r;
}
