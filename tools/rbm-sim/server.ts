/**
 * An RCS Business Messaging platform simulator: the v1 agent API subset the
 * RBM connector speaks (capabilities, agentMessages), the OAuth token
 * endpoint of service accounts (POST /token, tools/rbm-sim/token.ts) and the
 * agent webhook (DELIVERED and READ events, user replies), signed like RBM
 * signs them. Receivers ending in 0009 have no RCS capability (404).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SIGNATURE_HEADER, signBody, type RbmAgentMessage, type RbmCardContent } from '../../src/carriers/rbm/wire.ts';
import { IssuedTokens, checkGrant, type SimServiceAccount } from './token.ts';

export interface RbmSimOptions {
  port?: number;
  host?: string;
  /** A static bearer token the agent API accepts (besides the tokens it issued). */
  token?: string;
  /** The service account POST /token mints tokens for. */
  serviceAccount?: SimServiceAccount;
  /** Lifetime of issued tokens, in seconds (expires_in). Default 3600. */
  tokenLifetimeS?: number;
  /** The `aud` assertions must name. Default: this simulator's /token URL. */
  audience?: string;
  /** Shared secret the events are signed with. */
  secret: string;
  /** Where events go (the gateway's POST /rbm/events/:connector); can be set later. */
  webhookUrl?: string;
  /** Delay before DELIVERED (READ follows after the same delay). */
  deliveryMs?: number;
}

export interface ReceivedMessage {
  phone: string;
  messageId: string;
  agentId: string | null;
  body: RbmAgentMessage;
}

const MAX_TEXT = 3072;

/** Problems of an agent message, as RBM would answer 400 INVALID_ARGUMENT. */
export function agentMessageProblems(body: unknown): string[] {
  if (body === null || typeof body !== 'object' || !('contentMessage' in body)) return ['contentMessage is required'];
  const m = (body as RbmAgentMessage).contentMessage;
  const kinds = [m.text !== undefined, m.contentInfo !== undefined, m.richCard !== undefined].filter(Boolean).length;
  const problems: string[] = [];
  if (kinds !== 1) problems.push('contentMessage needs exactly one of text, contentInfo, richCard');
  if (m.text !== undefined && (typeof m.text !== 'string' || m.text.length === 0 || m.text.length > MAX_TEXT)) problems.push('text must be 1..3072 characters');
  if (m.contentInfo && !/^https?:\/\//.test(m.contentInfo.fileUrl)) problems.push('contentInfo.fileUrl must be an http(s) URL');
  const card = (c: RbmCardContent, at: string) => {
    if (!c.title && !c.description && !c.media) problems.push(`${at} needs a title, description or media`);
    if ((c.title?.length ?? 0) > 200) problems.push(`${at}.title is longer than 200`);
    if ((c.description?.length ?? 0) > 2000) problems.push(`${at}.description is longer than 2000`);
    if ((c.suggestions?.length ?? 0) > 4) problems.push(`${at} has more than 4 suggestions`);
    if (c.media && !/^https?:\/\//.test(c.media.contentInfo.fileUrl)) problems.push(`${at}.media.contentInfo.fileUrl must be an http(s) URL`);
    for (const s of c.suggestions ?? []) {
      const text = s.action?.text ?? s.reply?.text ?? '';
      if (text.length === 0 || text.length > 25) problems.push(`${at} suggestion text must be 1..25 characters`);
      if (s.action && !/^https?:\/\//.test(s.action.openUrlAction.url)) problems.push(`${at} openUrlAction.url must be http(s)`);
    }
  };
  if (m.richCard?.standaloneCard) card(m.richCard.standaloneCard.cardContent, 'standaloneCard');
  const cards = m.richCard?.carouselCard?.cardContents;
  if (cards) {
    if (cards.length < 2 || cards.length > 10) problems.push('carouselCard needs 2..10 cards');
    for (const [i, c] of cards.entries()) card(c, `cardContents[${i}]`);
  }
  return problems;
}

export class RbmSim {
  readonly received: ReceivedMessage[] = [];
  readonly tokens = new IssuedTokens();
  /** Agent API calls refused for their bearer token (401). */
  unauthorized = 0;
  /** Lifetime of the tokens issued from now on, in seconds. */
  tokenLifetimeS: number;
  /** When set, POST /token answers this HTTP status (an outage of the token service). */
  tokenOutage: number | null = null;
  webhookUrl: string | null;
  private server: Server | null = null;
  private timers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: RbmSimOptions) {
    this.webhookUrl = options.webhookUrl ?? null;
    this.tokenLifetimeS = options.tokenLifetimeS ?? 3600;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('the RBM simulator is not listening');
    return `http://${this.options.host ?? '127.0.0.1'}:${address.port}`;
  }

  /** The token endpoint: a service-account key's token_uri. */
  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => json(res, 500, { error: { code: 500, message: String(err), status: 'INTERNAL' } }));
    });
    await new Promise<void>((resolve) => this.server?.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The user types a reply on their phone. */
  async userMessage(from: string, text: string): Promise<number> {
    return this.post({ senderPhoneNumber: from.startsWith('+') ? from : `+${from}`, messageId: randomUUID(), sendTime: new Date().toISOString(), text });
  }

  /** Posts a signed event to the webhook; answers the webhook's HTTP status. */
  async post(event: Record<string, unknown>): Promise<number> {
    if (!this.webhookUrl) return 0;
    const body = JSON.stringify(event);
    const res = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(this.options.secret, body) },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'POST' && (req.url ?? '').split('?')[0] === '/token') return this.token(req, res);
    if (!this.authorized(req.headers.authorization)) {
      this.unauthorized++;
      return json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    }
    const url = new URL(req.url ?? '/', 'http://sim');
    url.pathname = decodeURIComponent(url.pathname);
    const match = /^\/v1\/phones\/(\+\d{8,15})\/(capabilities|agentMessages)$/.exec(url.pathname);
    if (!match) return json(res, 404, { error: { code: 404, message: 'no such method', status: 'NOT_FOUND' } });
    const phone = match[1] ?? '';
    const rcs = !phone.endsWith('0009');
    if (match[2] === 'capabilities' && req.method === 'GET') {
      return rcs
        ? json(res, 200, { features: ['RICHCARD_STANDALONE', 'RICHCARD_CAROUSEL', 'ACTION_OPEN_URL'] })
        : json(res, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
    }
    if (match[2] !== 'agentMessages' || req.method !== 'POST')
      return json(res, 405, { error: { code: 405, message: 'method not allowed', status: 'UNIMPLEMENTED' } });
    const messageId = url.searchParams.get('messageId');
    if (!messageId) return json(res, 400, { error: { code: 400, message: 'messageId is required', status: 'INVALID_ARGUMENT' } });
    if (!rcs) return json(res, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return json(res, 400, { error: { code: 400, message: 'invalid JSON', status: 'INVALID_ARGUMENT' } });
    }
    const problems = agentMessageProblems(body);
    if (problems.length) return json(res, 400, { error: { code: 400, message: problems.join('; '), status: 'INVALID_ARGUMENT' } });
    if (this.received.some((m) => m.messageId === messageId))
      return json(res, 409, { error: { code: 409, message: 'message id exists', status: 'ALREADY_EXISTS' } });
    this.received.push({ phone, messageId, agentId: url.searchParams.get('agentId'), body: body as RbmAgentMessage });
    this.later(phone, messageId, 'DELIVERED', 1);
    this.later(phone, messageId, 'READ', 2);
    return json(res, 200, { name: `phones/${phone}/agentMessages/${messageId}`, sendTime: new Date().toISOString(), ...(body as object) });
  }

  private authorized(header: string | undefined): boolean {
    const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : null;
    if (!token) return false;
    return (this.options.token !== undefined && token === this.options.token) || this.tokens.valid(token);
  }

  /** POST /token: the JWT bearer grant of service accounts. */
  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.tokenOutage !== null)
      return json(res, this.tokenOutage, { error: 'internal_failure', error_description: 'the token service is down (simulated)' });
    const account = this.options.serviceAccount;
    if (!account) return json(res, 400, { error: 'invalid_grant', error_description: 'no service account is configured in the simulator' });
    const form = new URLSearchParams(await readBody(req));
    const refusal = checkGrant(form, account, this.options.audience ?? this.tokenUrl);
    if (refusal) return json(res, refusal.status, { error: refusal.error, error_description: refusal.description });
    const expiresIn = this.tokenLifetimeS;
    return json(res, 200, { access_token: this.tokens.issue(expiresIn), expires_in: expiresIn, token_type: 'Bearer' });
  }

  private later(phone: string, messageId: string, eventType: 'DELIVERED' | 'READ', factor: number): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.post({ senderPhoneNumber: phone, eventType, eventId: randomUUID(), messageId, sendTime: new Date().toISOString() }).catch(() => undefined);
      },
      (this.options.deliveryMs ?? 200) * factor,
    );
    this.timers.add(timer);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > 1_048_576) throw new Error('body too large');
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
