/**
 * One SMPP connection and its bind, kept up: connect (TCP or TLS), bind,
 * enquire_link keep-alive, dead-peer detection, answering the SMSC's
 * enquire_link/unbind/deliver_sm, and reconnecting with exponential back-off
 * until stopped. Requests get a promise of their response; a request left
 * unanswered for responseTimeoutMs closes the connection, because after a
 * missing response nothing on that connection can be trusted.
 */
import net from 'node:net';
import tls from 'node:tls';
import { fastSession } from './fast-session.ts';
import smpp, { Status, statusText, type Pdu, type PduParams, type Session, type SmppLogger } from './smpp-lib.ts';

export type BindType = 'transceiver' | 'transmitter' | 'receiver';

export interface BindConfig {
  label: string;
  host: string;
  port: number;
  tls: boolean;
  tlsOptions?: tls.ConnectionOptions;
  systemId: string;
  password: string;
  systemType: string;
  bindType: BindType;
  responseTimeoutMs: number;
  enquireLinkMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export interface BindHooks {
  /** The bind is up; requests can be sent. */
  bound(): void;
  /** A bind that was up is gone; its pending requests have been rejected. */
  unbound(reason: string): void;
  /**
   * deliver_sm/data_sm from the SMSC. Answered when the promise resolves
   * (what it carries is durable), with ESME_RX_T_APPN (the SMSC retries
   * later) when it rejects.
   */
  deliver(pdu: Pdu): Promise<void>;
}

/** A request got no response on this connection: not bound, connection lost, or timed out. */
export class BindError extends Error {}

interface Pending {
  session: Session;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

type State = 'idle' | 'connecting' | 'binding' | 'bound' | 'closing';

export class SmppBind {
  private session: Session | null = null;
  private state: State = 'idle';
  private wasBound = false;
  private stopped = true;
  private closeReason = '';
  private backoffMs = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private enquireTimer: NodeJS.Timeout | null = null;
  private enquireOutstanding = false;
  private readonly pending = new Map<number, Pending>();
  private closedWaiters: Array<() => void> = [];
  private firstAttempt: (() => void) | null = null;

  constructor(
    private readonly config: BindConfig,
    private readonly hooks: BindHooks,
    private readonly log: SmppLogger,
  ) {}

  isBound(): boolean {
    return this.state === 'bound';
  }

  /** Starts connecting; resolves once the first attempt has bound or failed (it keeps retrying after). */
  start(): Promise<void> {
    if (!this.stopped) return Promise.resolve();
    this.stopped = false;
    return new Promise((resolve) => {
      this.firstAttempt = resolve;
      this.connect();
    });
  }

  /** Sends a request on the bound connection; rejects with BindError when there is no answer. */
  request(command: string, params: PduParams = {}): Promise<Pdu> {
    const session = this.session;
    if (!session || this.state !== 'bound') return Promise.reject(new BindError('not bound'));
    return this.send(session, new smpp.PDU(command, params));
  }

  /** Closes the connection now (it reconnects unless stopped). */
  drop(reason: string): void {
    if (this.session) this.dropSession(this.session, reason);
  }

  /** Unbinds gracefully (bounded by responseTimeoutMs, or `withinMs` when sooner; 0 closes at once) and stops reconnecting. */
  async stop(withinMs?: number): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const session = this.session;
    if (!session) {
      this.resolveFirstAttempt();
      return;
    }
    const closed = new Promise<void>((resolve) => this.closedWaiters.push(resolve));
    const wait = Math.min(this.config.responseTimeoutMs, withinMs ?? Number.POSITIVE_INFINITY);
    if (this.state !== 'bound' || wait <= 0) {
      this.dropSession(session, 'stopped');
      return closed;
    }
    this.state = 'closing';
    this.closeReason = 'stopped';
    const force = setTimeout(() => session.socket.destroy(), wait);
    await this.send(session, new smpp.PDU('unbind')).catch(() => undefined);
    session.close();
    await closed;
    clearTimeout(force);
  }

  private connect(): void {
    this.reconnectTimer = null;
    if (this.stopped) return;
    const { host, port, tlsOptions } = this.config;
    const socket = this.config.tls ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...tlsOptions }) : net.connect({ host, port });
    socket.setNoDelay(true);
    const session = fastSession(new smpp.Session({ socket }));
    this.session = session;
    this.state = 'connecting';
    this.closeReason = '';
    const timeout = this.config.responseTimeoutMs;
    const timer = setTimeout(() => this.dropSession(session, `no connection within ${timeout}ms`), timeout);
    socket.once(this.config.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      void this.bind(session);
    });
    session.on('error', (err: Error) => this.dropSession(session, err.message));
    session.on('close', () => {
      clearTimeout(timer);
      this.onClose(session);
    });
    session.on('pdu', (pdu: Pdu) => {
      try {
        this.onPdu(session, pdu);
      } catch (err) {
        // Thrown here it would escape the socket's read loop and crash the process.
        this.log.error({ carrier: this.config.label, err, command: pdu.command }, 'SMPP PDU handling failed');
      }
    });
  }

  private async bind(session: Session): Promise<void> {
    const { bindType, systemId, password, systemType, label } = this.config;
    this.state = 'binding';
    const params = { system_id: systemId, password, system_type: systemType, interface_version: 0x34 };
    let resp: Pdu;
    try {
      resp = await this.send(session, new smpp.PDU(`bind_${bindType}`, params));
    } catch {
      return; // the connection is already being closed
    }
    if (session !== this.session || this.state !== 'binding') return;
    if (resp.command_status !== Status.ROK) {
      const reason = `bind refused: ${statusText(resp.command_status)}`;
      this.log.error({ carrier: label, systemId, bindType }, reason);
      this.dropSession(session, reason);
      return;
    }
    this.state = 'bound';
    this.wasBound = true;
    this.backoffMs = 0;
    this.log.info({ carrier: label, host: this.config.host, port: this.config.port, bindType }, 'SMPP bound');
    this.startEnquireLink(session);
    this.resolveFirstAttempt();
    this.hooks.bound();
  }

  private send(session: Session, pdu: Pdu): Promise<Pdu> {
    return new Promise((resolve, reject) => {
      let seq = 0;
      const written = session.send(pdu, (resp) => {
        const entry = this.pending.get(seq);
        if (entry) clearTimeout(entry.timer);
        this.pending.delete(seq);
        resolve(resp);
      });
      if (!written) {
        reject(new BindError('connection not writable'));
        return;
      }
      seq = pdu.sequence_number;
      const ms = this.config.responseTimeoutMs;
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        const reason = `no ${pdu.command}_resp within ${ms}ms`;
        reject(new BindError(reason));
        this.dropSession(session, reason);
      }, ms);
      this.pending.set(seq, { session, reject, timer });
    });
  }

  private onPdu(session: Session, pdu: Pdu): void {
    if (pdu.isResponse()) {
      if (pdu.command === 'generic_nack' && pdu.command_status !== Status.ROK) {
        this.log.warn({ carrier: this.config.label, status: statusText(pdu.command_status) }, 'SMPP generic_nack');
      }
      return;
    }
    switch (pdu.command) {
      case 'enquire_link':
        session.send(pdu.response());
        return;
      case 'unbind':
        this.closeReason = 'unbound by SMSC';
        this.state = 'closing';
        session.send(pdu.response(), () => session.close());
        setTimeout(() => session.socket.destroy(), this.config.responseTimeoutMs).unref();
        return;
      case 'deliver_sm':
      case 'data_sm':
        this.answerDeliver(session, pdu);
        return;
      case 'alert_notification':
        return; // has no response
      case 'unknown':
        session.send(pdu.response()); // generic_nack ESME_RINVCMDID
        return;
      default:
        session.send(pdu.response({ command_status: Status.RINVCMDID }));
    }
  }

  /**
   * Answered only once what it carries is written: a crash or a failed write
   * before that leaves it unacknowledged, and the SMSC sends it again (on
   * this bind, or the next one after a reconnect). A session closed meanwhile
   * gets no answer: the SMSC re-sends what that connection left unanswered.
   */
  private answerDeliver(session: Session, pdu: Pdu): void {
    let handled: Promise<void>;
    try {
      handled = this.hooks.deliver(pdu);
    } catch (err) {
      handled = Promise.reject(err);
    }
    handled.then(
      () => this.answer(session, pdu.response({ message_id: '' })),
      (err: unknown) => {
        this.log.error({ carrier: this.config.label, err }, 'handling deliver_sm failed; asking SMSC to retry');
        this.answer(session, pdu.response({ command_status: Status.RX_T_APPN }));
      },
    );
  }

  private answer(session: Session, response: Pdu): void {
    if (session === this.session && !session.socket.destroyed) session.send(response);
  }

  private startEnquireLink(session: Session): void {
    this.enquireTimer = setInterval(() => {
      if (this.session !== session || this.state !== 'bound' || this.enquireOutstanding) return;
      this.enquireOutstanding = true;
      this.send(session, new smpp.PDU('enquire_link'))
        .catch(() => undefined) // a missing answer closes the connection in send()
        .finally(() => {
          this.enquireOutstanding = false;
        });
    }, this.config.enquireLinkMs);
  }

  private dropSession(session: Session, reason: string): void {
    if (session !== this.session) return;
    if (!this.closeReason) this.closeReason = reason;
    if (this.state !== 'idle') this.state = 'closing';
    session.socket.destroy();
  }

  private onClose(session: Session): void {
    if (session !== this.session) return;
    const reason = this.closeReason || 'connection closed by peer';
    const wasBound = this.wasBound;
    this.session = null;
    this.state = 'idle';
    this.wasBound = false;
    this.enquireOutstanding = false;
    if (this.enquireTimer) clearInterval(this.enquireTimer);
    this.enquireTimer = null;
    for (const [seq, entry] of this.pending) {
      if (entry.session !== session) continue;
      clearTimeout(entry.timer);
      this.pending.delete(seq);
      entry.reject(new BindError(`connection lost (${reason})`));
    }
    const level = this.stopped ? 'info' : 'warn';
    this.log[level]({ carrier: this.config.label, bindType: this.config.bindType, reason }, 'SMPP connection closed');
    this.resolveFirstAttempt();
    if (wasBound) this.hooks.unbound(reason);
    if (!this.stopped) this.scheduleReconnect();
    const waiters = this.closedWaiters;
    this.closedWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private scheduleReconnect(): void {
    const { reconnectMinMs, reconnectMaxMs } = this.config;
    this.backoffMs = this.backoffMs ? Math.min(reconnectMaxMs, this.backoffMs * 2) : reconnectMinMs;
    // Jitter so that many binds cut by one SMSC restart do not come back in lockstep.
    const delay = Math.round(this.backoffMs * (0.8 + Math.random() * 0.4));
    this.log.info({ carrier: this.config.label, delayMs: delay }, 'SMPP reconnect scheduled');
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private resolveFirstAttempt(): void {
    const resolve = this.firstAttempt;
    this.firstAttempt = null;
    resolve?.();
  }
}
