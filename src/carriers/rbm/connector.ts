import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Carrier, CarrierEvents, OutboundMessage, SubmitResult } from '../carrier.ts';
import { isRcsPayload, type RcsPayload } from '../rcs-message.ts';
import { agentMessage, digits, e164, type RbmEvent } from './wire.ts';
import { ServiceAccountTokens, StaticToken, type ServiceAccountKey, type TokenSource } from './auth.ts';

export interface RbmOptions {
  name: string;
  /** API root, e.g. https://rcsbusinessmessaging.googleapis.com (or the simulator's URL). */
  baseUrl: string;
  agentId: string;
  /** A static bearer token for the API; or: */
  token?: string;
  /** A service account whose key mints short-lived tokens (Google's way, src/carriers/rbm/auth.ts). */
  serviceAccount?: ServiceAccountKey;
  /** Shared secret the platform signs webhook events with (POST /rbm/events/:name). */
  webhookSecret: string;
  /** Requests in flight at once. Default 16. */
  concurrency?: number;
  /** Per API call. Default 10 s. */
  timeoutMs?: number;
  /** How long a capability answer is reused. Default 10 min. */
  capabilityTtlMs?: number;
  logger: Logger;
}

type Capability = 'RCS' | 'NONE';

const NO_RCS: SubmitResult = { ok: false, retry: false, error: 'RBM: the receiver has no RCS capability', noRcs: true };

/**
 * An RCS Business Messaging agent connection. Each message is sent with our
 * message id as the RBM messageId, so a retry after an unknown outcome is
 * idempotent (the platform answers 409 for an id it has) and receipts and
 * replies correlate without a lookup table. A receiver without RCS
 * capability is a `noRcs` failure: the route's SMS fallback carries it, or
 * it fails (refunded).
 */
export class RbmCarrier implements Carrier {
  readonly name: string;
  readonly channels = ['RCS'] as const;
  private events: CarrierEvents | null = null;
  private inFlight = 0;
  private readonly capabilities = new Map<string, { value: Capability; until: number }>();
  private readonly tokens: TokenSource;

  constructor(private readonly options: RbmOptions) {
    this.name = options.name;
    if ((options.token === undefined) === (options.serviceAccount === undefined))
      throw new Error(`RBM connection "${options.name}": give either a token or a service account`);
    this.tokens = options.serviceAccount
      ? new ServiceAccountTokens(options.serviceAccount, options.timeoutMs ?? 10_000, options.logger)
      : new StaticToken(options.token ?? '');
  }

  get webhookSecret(): string {
    return this.options.webhookSecret;
  }

  async start(events: CarrierEvents): Promise<void> {
    this.events = events;
  }

  async stop(): Promise<void> {
    this.events = null;
  }

  ready(): boolean {
    return this.events !== null;
  }

  capacity(): number {
    return Math.max(0, (this.options.concurrency ?? 16) - this.inFlight);
  }

  async submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void> {
    const queue = [...messages];
    const worker = async () => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        this.inFlight++;
        try {
          onResult(m.id, await this.sendOne(m));
        } finally {
          this.inFlight--;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(queue.length, this.options.concurrency ?? 16) }, worker));
  }

  /**
   * A webhook event, already authenticated: statuses become receipts, user
   * texts become inbound messages. Resolves once what it carries is written
   * (the platform is answered only then); rejects when it could not be.
   */
  async handleEvent(event: RbmEvent): Promise<'receipt' | 'inbound' | 'ignored'> {
    const events = this.events;
    if (!events) return 'ignored';
    // The body is the platform's JSON: every field is checked before use.
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
    const sendTime = str(event.sendTime);
    const at = sendTime && !Number.isNaN(Date.parse(sendTime)) ? new Date(sendTime) : new Date();
    const eventType = str(event.eventType);
    const messageId = str(event.messageId);
    if (eventType && messageId) {
      if (eventType !== 'DELIVERED' && eventType !== 'READ') return 'ignored';
      // READ implies delivered; once DELIVERED it changes nothing (receipts only move forward).
      await events.receipt({ carrierId: messageId, status: 'DELIVERED', details: `rbm:${eventType}`, at });
      return 'receipt';
    }
    const response = event.suggestionResponse;
    const text = str(event.text) ?? (response && typeof response === 'object' ? str(response.text) : null);
    const sender = str(event.senderPhoneNumber);
    if (sender && /^\+?\d{8,15}$/.test(sender) && text) {
      await events.inbound({ from: digits(sender), to: null, text, at });
      return 'inbound';
    }
    return 'ignored';
  }

  private async sendOne(m: OutboundMessage): Promise<SubmitResult> {
    const payload: RcsPayload | null =
      m.channel === 'SMS' || m.payload === null ? { kind: 'basic', text: m.content } : isRcsPayload(m.payload) ? m.payload : null;
    if (!payload) return { ok: false, retry: false, error: 'RBM: the message has no RCS payload' };
    try {
      const capability = await this.capability(m.receiver);
      if (capability === 'NONE') return NO_RCS;
      const res = await this.call(
        'POST',
        `/v1/phones/${e164(m.receiver)}/agentMessages?messageId=${encodeURIComponent(m.id)}&agentId=${encodeURIComponent(this.options.agentId)}`,
        agentMessage(payload),
      );
      // 409: the platform has this message id already (a retry after a lost answer): sent.
      if (res.status === 200 || res.status === 409) return { ok: true, carrierIds: [m.id] };
      if (res.status === 404) {
        this.capabilities.set(m.receiver, { value: 'NONE', until: Date.now() + this.ttl() });
        return NO_RCS;
      }
      // 401 after a fresh token (see call): our credentials, not this message, so it waits for them to work.
      if (res.status === 401 || res.status === 429 || res.status >= 500) return { ok: false, retry: true, error: `RBM: HTTP ${res.status} ${res.text}` };
      return { ok: false, retry: false, error: `RBM: HTTP ${res.status} ${res.text}` };
    } catch (err) {
      return { ok: false, retry: true, error: `RBM: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private ttl(): number {
    return this.options.capabilityTtlMs ?? 600_000;
  }

  private async capability(receiver: string): Promise<Capability> {
    const cached = this.capabilities.get(receiver);
    if (cached && cached.until > Date.now()) return cached.value;
    const res = await this.call(
      'GET',
      `/v1/phones/${e164(receiver)}/capabilities?requestId=${randomUUID()}&agentId=${encodeURIComponent(this.options.agentId)}`,
    );
    if (res.status !== 200 && res.status !== 404) throw new Error(`capability check answered HTTP ${res.status}`);
    const value: Capability = res.status === 200 ? 'RCS' : 'NONE';
    this.capabilities.set(receiver, { value, until: Date.now() + this.ttl() });
    return value;
  }

  /** One API call; a 401 (token expired or revoked early) drops the token and tries once more with a new one. */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const token = await this.tokens.token();
    const res = await this.callWith(token, method, path, body);
    if (res.status !== 401 || !this.tokens.invalidate(token)) return res;
    this.options.logger.info({ path: path.split('?')[0] }, 'RBM answered 401: refreshing the access token and trying again');
    return this.callWith(await this.tokens.token(), method, path, body);
  }

  private async callWith(token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const res = await fetch(`${this.options.baseUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    });
    const text = (await res.text()).slice(0, 300);
    return { status: res.status, text };
  }
}
