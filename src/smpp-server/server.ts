/**
 * The gateway's SMPP 3.4 server (docs/smpp-server.md): customers bind with
 * their SMPP credentials (bind_transmitter, bind_receiver,
 * bind_transceiver), submit texts (submit_sm, answered once durable),
 * ask after them (query_sm, cancel_sm) and receive delivery receipts and
 * replies as deliver_sm (src/smpp-server/deliveries.ts). Built on the
 * `smpp` package's server, over TCP or TLS.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database, RouteRow } from '../db/tables.ts';
import type { AcceptInput, AcceptResult } from '../messaging/accept.ts';
import type { StoredReply } from '../messaging/replies.ts';
import { OVERRUN } from '../carriers/smpp/fast-pdu.ts';
import { fastSession } from '../carriers/smpp/fast-session.ts';
import smpp, { pduString, statusText, type Pdu, type PduParams, type Session } from '../carriers/smpp/smpp-lib.ts';
import { BindGuard } from './bind-guard.ts';
import { SubmitRate } from '../carriers/smpp/submit-rate.ts';
import { checkBind, ipAllowed, usableCredentials, type CredentialRow } from './credentials.ts';
import { Deliverer, type Receiver } from './deliveries.ts';
import { ServerStatus } from './message.ts';
import { expireParts } from './parts.ts';
import { cancelMessage, queryMessage, submitMessage, type SubmitDeps } from './submit.ts';
import { expireWaiting } from './validity.ts';
import { dropOrphanSubmits } from './cleanup.ts';

export interface SmppServerDeps {
  db: { kysely: Kysely<Database> };
  routes: { get(accountId: number, routeId: number): Promise<RouteRow> };
  accept(input: AcceptInput): Promise<AcceptResult>;
  log: Logger;
  /** Hooks run after an inbound text is stored (core.onReply): a reply for a customer wakes its deliveries at once. */
  onReply?: ((reply: StoredReply) => Promise<void>)[];
}

export interface SmppServerOptions {
  port: number;
  host: string;
  /** PEM certificate and key: SMPP over TLS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** Failed binds from one address within bindFailureWindowMs before binds from it are refused for bindBlockMs. */
  bindFailureLimit?: number;
  bindFailureWindowMs?: number;
  bindBlockMs?: number;
  /** Binds being checked at once, in the whole server and from one address; bind attempts of one address a minute (src/smpp-server/bind-guard.ts). */
  bindsCheckedAtOnce?: number;
  bindsCheckedPerAddress?: number;
  bindsPerAddressPerMinute?: number;
  /** How long the parts of a long text wait for the rest. */
  partTimeoutMs?: number;
  /** How often deliveries owed to bound customers are looked for (they are also looked for when a reply comes or a bind opens). */
  deliveryPollMs?: number;
  deliveryLeaseMs?: number;
  /** Unit of the deliveries' retry schedule (1000: seconds). */
  retryBaseMs?: number;
  /** A deliver_sm unanswered this long closes its bind. */
  responseTimeoutMs?: number;
  /** A connection not bound this long after it opened is closed (SMPP's session init timer). */
  bindTimeoutMs?: number;
  /** A bind from which no PDU came for this long is unbound and closed (SMPP's inactivity timer). */
  inactivityMs?: number;
  /** How often parts past their timeout and messages past their validity are looked for. */
  sweepMs?: number;
  /** RETENTION_MESSAGES_DAYS: SMPP records of messages the retention deleted are deleted too (hourly); unset: kept. */
  retentionDays?: number | undefined;
}

type BindType = 'transmitter' | 'receiver' | 'transceiver';

interface Bind {
  session: Session;
  address: string;
  type: BindType | null;
  binding: boolean;
  credential: CredentialRow | null;
  rate: SubmitRate;
  outstanding: number;
  receiver: Receiver | null;
  /** When the last PDU came from it, or it was bound (the inactivity timer). */
  heardAt: number;
}

/** system_id the gateway answers binds with. */
const SERVER_SYSTEM_ID = 'GATEWAY';

export class SmppServer {
  private server: ReturnType<typeof smpp.createServer> | null = null;
  private readonly binds = new Set<Bind>();
  private readonly bySystemId = new Map<string, Set<Bind>>();
  private readonly guard: BindGuard;
  private readonly deliverer: Deliverer;
  private readonly log: Logger;
  private readonly o: Required<Omit<SmppServerOptions, 'tls' | 'retentionDays'>> & Pick<SmppServerOptions, 'tls' | 'retentionDays'>;
  private cleanedAt = 0;
  private readonly submitDeps: SubmitDeps;
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;
  private idle: Array<() => void> = [];
  private outstanding = 0;

  constructor(
    private readonly deps: SmppServerDeps,
    options: SmppServerOptions,
  ) {
    this.o = {
      bindFailureLimit: 5,
      bindFailureWindowMs: 60_000,
      bindBlockMs: 5 * 60_000,
      bindsCheckedAtOnce: 32,
      bindsCheckedPerAddress: 4,
      bindsPerAddressPerMinute: 60,
      partTimeoutMs: 10 * 60_000,
      deliveryPollMs: 100,
      deliveryLeaseMs: 60_000,
      retryBaseMs: 1000,
      responseTimeoutMs: 30_000,
      bindTimeoutMs: 30_000,
      inactivityMs: 300_000,
      sweepMs: 5_000,
      ...options,
    };
    this.log = deps.log.child({ component: 'smpp-server' });
    this.guard = new BindGuard({
      atOnce: this.o.bindsCheckedAtOnce,
      perAddress: this.o.bindsCheckedPerAddress,
      perAddressPerMinute: this.o.bindsPerAddressPerMinute,
      failureLimit: this.o.bindFailureLimit,
      failureWindowMs: this.o.bindFailureWindowMs,
      blockMs: this.o.bindBlockMs,
    });
    this.deliverer = new Deliverer(deps.db.kysely, `smpp-${randomUUID()}`, this.log, {
      pollMs: this.o.deliveryPollMs,
      leaseMs: this.o.deliveryLeaseMs,
      retryBaseMs: this.o.retryBaseMs,
      responseTimeoutMs: this.o.responseTimeoutMs,
    });
    this.submitDeps = { db: deps.db.kysely, routes: deps.routes, accept: (input) => deps.accept(input), log: this.log };
  }

  /** The port it listens on (the one given, or the one chosen for port 0). */
  get port(): number {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : 0;
  }

  async start(): Promise<void> {
    const server = smpp.createServer(this.o.tls ? { cert: this.o.tls.cert, key: this.o.tls.key } : {}, (session) => this.onSession(session));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err: Error) => this.log.error({ err }, 'SMPP server error'));
    this.deliverer.start();
    this.deps.onReply?.push(async () => this.deliverer.wake());
    this.sweeper = setInterval(() => void this.sweep(), this.o.sweepMs);
    this.sweeper.unref();
    void this.sweep();
    this.log.info({ port: this.port, host: this.o.host, tls: Boolean(this.o.tls) }, 'SMPP server listening');
  }

  /** Stops taking binds and submits, answers the submits being written, unbinds every customer, and stops the deliveries. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const server = this.server;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    if (this.outstanding > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await Promise.all(
      [...this.binds].map(
        (bind) =>
          new Promise<void>((resolve) => {
            // Resolved once the connection is closed (what its bind left unanswered is given back then).
            if (bind.session.socket.destroyed) return resolve();
            bind.session.socket.once('close', () => resolve());
            const done = () => {
              clearTimeout(timer);
              bind.session.socket.destroy();
            };
            const timer = setTimeout(done, 1000);
            if (!bind.type || !bind.session.send(new smpp.PDU('unbind'), done)) done();
          }),
      ),
    );
    await this.deliverer.stop();
    await closed;
  }

  private async sweep(): Promise<void> {
    try {
      await expireParts(this.deps.db.kysely, this.o.partTimeoutMs);
      await expireWaiting(this.deps.db.kysely);
      await this.closeUnusable();
      if (this.o.retentionDays !== undefined && Date.now() - this.cleanedAt > 3_600_000) {
        this.cleanedAt = Date.now();
        while ((await dropOrphanSubmits(this.deps.db.kysely, this.o.retentionDays * 86_400_000)) > 0 && !this.closing);
      }
    } catch (err) {
      this.log.error({ err }, 'SMPP server: could not expire old parts or messages past their validity; trying again later');
    }
  }

  /** Binds of a credential removed, or of an account deactivated, since they bound: unbound and closed. */
  private async closeUnusable(): Promise<void> {
    const bound = [...this.bySystemId].filter(([, binds]) => binds.size > 0).map(([systemId]) => systemId);
    const usable = await usableCredentials(this.deps.db.kysely, bound);
    for (const systemId of bound) {
      if (usable.has(systemId)) continue;
      for (const bind of this.bySystemId.get(systemId) ?? []) {
        this.log.warn({ systemId, address: bind.address }, 'SMPP bind closed: its credential was removed or its account deactivated');
        this.hangUp(bind);
      }
    }
  }

  /** Takes no more from a bind, sends it an unbind and closes it on the answer, or a second later. */
  private hangUp(bind: Bind): void {
    bind.type = null;
    if (!bind.session.send(new smpp.PDU('unbind'), () => bind.session.socket.destroy())) bind.session.socket.destroy();
    setTimeout(() => bind.session.socket.destroy(), 1000).unref();
  }

  private onSession(raw: Session): void {
    const session = fastSession(raw);
    session.socket.setNoDelay(true);
    const bind: Bind = {
      session,
      address: session.socket.remoteAddress ?? '',
      type: null,
      binding: false,
      credential: null,
      rate: new SubmitRate(0),
      outstanding: 0,
      receiver: null,
      heardAt: Date.now(),
    };
    this.binds.add(bind);
    if (this.closing) session.socket.destroy();
    session.on('error', (err: Error) => {
      this.log.debug({ err: err.message, address: bind.address }, 'SMPP connection error');
      session.socket.destroy();
    });
    session.on('close', () => this.onClose(bind));
    // One timer a connection, SMPP's two: a connection that never binds would hold its socket for good, closed
    // bindTimeoutMs after it opened (later while a bind is being checked); a bound one that goes quiet (a client
    // gone without a word, a dead link) would hold one of its credential's binds, unbound and closed after
    // inactivityMs without a PDU from it.
    const opened = Date.now();
    let timer: NodeJS.Timeout;
    const watch = () => {
      const bound = bind.type !== null;
      const limit = bound ? this.o.inactivityMs : this.o.bindTimeoutMs;
      const elapsed = Date.now() - (bound ? bind.heardAt : opened);
      if (elapsed < limit || bind.binding) {
        timer = setTimeout(watch, bind.binding ? limit : limit - elapsed).unref();
        return;
      }
      if (bound) {
        this.log.info({ systemId: bind.credential?.system_id, address: bind.address, inactivityMs: limit }, 'SMPP bind closed: nothing came from it in time');
        this.hangUp(bind);
      } else {
        this.log.debug({ address: bind.address, bindTimeoutMs: limit }, 'SMPP connection closed: no bind in time');
        session.socket.destroy();
      }
    };
    timer = setTimeout(watch, Math.min(this.o.bindTimeoutMs, this.o.inactivityMs)).unref();
    session.socket.once('close', () => clearTimeout(timer));
    session.on('pdu', (pdu: Pdu) => {
      bind.heardAt = Date.now();
      try {
        this.onPdu(bind, pdu);
      } catch (err) {
        // Thrown here it would escape the socket's read loop and stop the process.
        this.log.error({ err, command: pdu.command }, 'SMPP PDU handling failed');
        this.answer(bind, pdu, { command_status: ServerStatus.RSYSERR });
      }
    });
  }

  private onClose(bind: Bind): void {
    this.binds.delete(bind);
    if (bind.credential) this.bySystemId.get(bind.credential.system_id)?.delete(bind);
    if (bind.receiver) this.deliverer.remove(bind.receiver);
    if (bind.type) this.log.info({ systemId: bind.credential?.system_id, bindType: bind.type, address: bind.address }, 'SMPP customer disconnected');
  }

  private answer(bind: Bind, pdu: Pdu, params: PduParams = {}): void {
    if (!bind.session.socket.writable) return;
    try {
      bind.session.send(pdu.response(params));
    } catch {
      // A command without a response (alert_notification, outbind): nothing to answer.
    }
  }

  private onPdu(bind: Bind, pdu: Pdu): void {
    if (pdu.isResponse()) return; // deliver_sm_resp: the send's callback; enquire_link_resp, unbind_resp, generic_nack: nothing to do
    // A field running past the end of the PDU (its length octet or a TLV's length, a C-string without its NUL): refused, never read cut.
    const overrun = (pdu as unknown as Record<symbol, string | undefined>)[OVERRUN];
    if (overrun !== undefined) {
      this.log.debug({ command: pdu.command, field: overrun, address: bind.address }, 'SMPP PDU refused: a field runs past its end');
      const text = overrun === 'short_message' || overrun === 'message_payload';
      this.answer(bind, pdu, { command_status: text ? ServerStatus.RINVMSGLEN : ServerStatus.RINVCMDLEN });
      return;
    }
    switch (pdu.command) {
      case 'bind_transmitter':
      case 'bind_receiver':
      case 'bind_transceiver':
        void this.onBind(bind, pdu);
        return;
      case 'unbind':
        this.answer(bind, pdu);
        bind.type = null;
        setTimeout(() => bind.session.socket.destroy(), 1000).unref();
        return;
      case 'enquire_link':
        this.answer(bind, pdu);
        return;
      case 'submit_sm':
        this.onSubmit(bind, pdu);
        return;
      case 'query_sm':
      case 'cancel_sm':
        this.onQuery(bind, pdu);
        return;
      case 'unknown':
        this.answer(bind, pdu); // generic_nack ESME_RINVCMDID
        return;
      default:
        // Known to SMPP 3.4, not offered here (submit_multi, data_sm, replace_sm...).
        this.answer(bind, pdu, { command_status: bind.type ? ServerStatus.RINVCMDID : ServerStatus.RINVBNDSTS });
    }
  }

  private async onBind(bind: Bind, pdu: Pdu): Promise<void> {
    const type = pdu.command.slice('bind_'.length) as BindType;
    if (bind.type || bind.binding) return this.answer(bind, pdu, { command_status: ServerStatus.RALYBND, system_id: SERVER_SYSTEM_ID });
    const systemId = pduString(pdu, 'system_id');
    const refuse = (reason: string) => {
      this.log.warn({ systemId, address: bind.address, bindType: type, reason }, 'SMPP bind refused');
      this.answer(bind, pdu, { command_status: ServerStatus.RBINDFAIL, system_id: SERVER_SYSTEM_ID });
    };
    if (this.closing) return refuse('server closing');
    const refusal = this.guard.admit(bind.address, Date.now());
    if (refusal) return refuse(refusal);
    bind.binding = true;
    let credential: CredentialRow | null = null;
    let usable = new Set<string>();
    let unreadable: unknown = null;
    try {
      credential = await checkBind(this.deps.db.kysely, systemId, pduString(pdu, 'password'));
      if (credential) usable = await usableCredentials(this.deps.db.kysely, [systemId]);
    } catch (err) {
      unreadable = err;
    }
    bind.binding = false;
    const wrong = unreadable === null && (!credential || !ipAllowed(credential.allowed_ips, bind.address));
    if (this.guard.done(bind.address, wrong, Date.now()))
      this.log.warn({ address: bind.address, blockedMs: this.o.bindBlockMs }, 'SMPP binds from this address refused for a while after repeated failures');
    if (unreadable !== null) {
      this.log.error({ err: unreadable }, 'SMPP bind: could not read the credentials');
      return this.answer(bind, pdu, { command_status: ServerStatus.RSYSERR, system_id: SERVER_SYSTEM_ID });
    }
    if (!credential || wrong) return refuse(credential ? 'address not in the allow-list' : 'unknown system_id or wrong password');
    if (!usable.has(systemId)) return refuse('the account is deactivated');
    let mine = this.bySystemId.get(systemId);
    if (!mine) {
      mine = new Set();
      this.bySystemId.set(systemId, mine);
    }
    if (mine.size >= Number(credential.max_binds)) return refuse(`already ${mine.size} bind(s) open, the most this credential may have`);
    if (!bind.session.socket.writable) return;
    mine.add(bind);
    bind.type = type;
    bind.heardAt = Date.now();
    bind.credential = credential;
    bind.rate = new SubmitRate(Number(credential.submits_per_second));
    this.answer(bind, pdu, { system_id: SERVER_SYSTEM_ID });
    this.log.info({ systemId, bindType: type, address: bind.address }, 'SMPP customer bound');
    if (type !== 'transmitter') {
      const session = bind.session;
      bind.receiver = {
        systemId,
        window: Number(credential.window_size),
        unanswered: 0,
        send: (params, answered) => {
          if (!session.socket.writable) return false;
          return session.send(new smpp.PDU('deliver_sm', params), (resp) => answered(resp.command_status));
        },
        drop: (reason) => {
          this.log.warn({ systemId, address: bind.address, reason }, 'SMPP customer connection closed');
          session.socket.destroy();
        },
      };
      this.deliverer.add(bind.receiver);
    }
  }

  private onSubmit(bind: Bind, pdu: Pdu): void {
    const credential = bind.credential;
    if (!credential || (bind.type !== 'transmitter' && bind.type !== 'transceiver')) return this.answer(bind, pdu, { command_status: ServerStatus.RINVBNDSTS });
    if (this.closing) return this.answer(bind, pdu, { command_status: ServerStatus.RSYSERR });
    if (bind.outstanding >= Number(credential.window_size) || !bind.rate.take()) return this.answer(bind, pdu, { command_status: ServerStatus.RTHROTTLED });
    bind.outstanding++;
    this.outstanding++;
    void submitMessage(this.submitDeps, credential, pdu).then((answer) => {
      bind.outstanding--;
      if (--this.outstanding === 0) for (const resolve of this.idle.splice(0)) resolve();
      if (answer.status !== ServerStatus.ROK)
        this.log.info({ systemId: credential.system_id, status: statusText(answer.status), reason: answer.reason }, 'SMPP submit refused');
      this.answer(bind, pdu, { command_status: answer.status, message_id: answer.messageId ?? '' });
    });
  }

  private onQuery(bind: Bind, pdu: Pdu): void {
    const credential = bind.credential;
    if (!credential || (bind.type !== 'transmitter' && bind.type !== 'transceiver')) return this.answer(bind, pdu, { command_status: ServerStatus.RINVBNDSTS });
    const messageId = pduString(pdu, 'message_id').trim();
    const work =
      pdu.command === 'query_sm'
        ? queryMessage(this.submitDeps, credential, messageId).then((a) => ({ command_status: a.status, ...(a.params ?? { message_id: messageId }) }))
        : cancelMessage(this.submitDeps, credential, messageId).then((a) => ({ command_status: a.status }));
    void work.then((params) => this.answer(bind, pdu, params));
  }
}

/** Starts the SMPP server; the caller closes it before the core. */
export async function startSmppServer(deps: SmppServerDeps, options: SmppServerOptions): Promise<SmppServer> {
  const server = new SmppServer(deps, options);
  await server.start();
  return server;
}
