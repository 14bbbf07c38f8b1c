/** Dispatcher tests' tools: a carrier that answers when told to, an account routed to it, and a record of the claims. */
import type { Carrier, CarrierEvents, OutboundMessage, SubmitResult } from '../src/carriers/carrier.ts';
import { claimJob, renewJob, type ClaimRequest } from '../src/dispatch/claim.ts';
import type { TestGateway } from './helpers.ts';

/** A carrier that answers only when told to: it keeps a message past its lease. */
export class HoldingCarrier implements Carrier {
  readonly name = 'holding';
  // Two binds: each of two dispatchers on one database holds one and claims (src/dispatch/connection-leases.ts).
  readonly maxBinds = 2;
  readonly channels = ['SMS'] as const;
  /** Receivers of the messages submitted, in order. */
  readonly submitted: string[] = [];
  /** Ids of the messages submitted, in order. */
  readonly submittedIds: string[] = [];
  /** Each submit still unanswered (a message sent twice is here twice). */
  private waiting: { id: string; answer: (result: SubmitResult) => void }[] = [];
  up = true;

  constructor(private readonly window = 10) {}

  async start(_events: CarrierEvents): Promise<void> {}
  async stop(): Promise<void> {}
  ready(): boolean {
    return this.up;
  }
  capacity(): number {
    return this.window - this.waiting.length;
  }
  submit(messages: OutboundMessage[], onResult: (id: string, result: SubmitResult) => void): Promise<void> {
    const answered = messages.map((m) => {
      this.submitted.push(m.receiver);
      this.submittedIds.push(m.id);
      return new Promise<void>((resolve) =>
        this.waiting.push({
          id: m.id,
          answer: (result) => {
            onResult(m.id, result);
            resolve();
          },
        }),
      );
    });
    return Promise.all(answered).then(() => undefined);
  }
  /** Answers every submit of the message still waiting: accepted, unless `result` says otherwise. */
  answer(id: string, result: SubmitResult = { ok: true, carrierIds: [`c-${id}`] }): void {
    for (const w of this.waiting.filter((w) => w.id === id)) w.answer(result);
    this.waiting = this.waiting.filter((w) => w.id !== id);
  }
  held(): string[] {
    return this.waiting.map((w) => w.id);
  }
}

/** An account with a route on the holding carrier, its API key and ids. */
export async function holdingCustomer(gw: TestGateway, name: string): Promise<{ accountId: number; key: string; route: number }> {
  const account = await gw.admin('POST', '/admin/accounts', { name, balance: 10 });
  const route = await gw.admin('POST', '/admin/routes', {
    displayName: 'Holding',
    productName: 'SMS',
    productId: 1,
    farePrice: '0.10',
    replyFarePrice: '0',
    channel: 'SMS',
    connector: 'holding',
  });
  await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id });
  const { key } = (await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {})).body;
  return { accountId: account.body.id, key, route: route.body.id };
}

/** Records every claim a gateway's dispatcher makes; `refuseRenewals`: its leases cannot be renewed (a database refusing them). */
export function recordClaims(gw: TestGateway, options: { refuseRenewals?: boolean } = {}): ClaimRequest[] {
  const claims: ClaimRequest[] = [];
  const run = gw.core.db.run.bind(gw.core.db);
  gw.core.db.run = ((job, items) => {
    if ((job as unknown) === claimJob) claims.push(...(items as ClaimRequest[]));
    if ((job as unknown) === renewJob && options.refuseRenewals) return Promise.reject(new Error('renewal refused'));
    return run(job, items);
  }) as typeof run;
  return claims;
}
