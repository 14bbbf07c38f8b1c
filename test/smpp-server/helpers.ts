/** Set-up for the SMPP server tests: a gateway with its SMPP server on loopback, and a customer's SMPP client (the `smpp` package). */
import net from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.ts';
import tls from 'node:tls';
import smpp, { type Pdu, type PduParams, type Session } from '../../src/carriers/smpp/smpp-lib.ts';
import { startSmppServer, type SmppServer, type SmppServerOptions } from '../../src/smpp-server/server.ts';
import { DIALECT, startGateway, type Customer, type TestGateway } from '../helpers.ts';

export interface SmppGateway {
  gw: TestGateway;
  server: SmppServer;
  customer: Customer;
  systemId: string;
  password: string;
  /** Clients opened with bound(): closed by closeClients() and close(). */
  clients: Client[];
  closeClients(): void;
  close(): Promise<void>;
}

let counter = 0;

/** A gateway (simulator carrier), a customer account and its SMPP credential, and the SMPP server on a free port. */
export async function smppGateway(
  options: { env?: Record<string, string>; server?: Partial<SmppServerOptions>; credential?: Record<string, unknown>; balance?: number | string } = {},
): Promise<SmppGateway> {
  const gw = await startGateway(options.env ?? {});
  const customer = await gw.customer({ balance: options.balance ?? 100 });
  const systemId = `cust${++counter}`;
  const created = await gw.admin('POST', `/admin/accounts/${customer.accountId}/smpp-credentials`, {
    systemId,
    password: 'pw123456',
    routeId: customer.routeId,
    ...options.credential,
  });
  if (created.status !== 201) throw new Error(`credential not created: ${JSON.stringify(created.body)}`);
  const server = await startSmppServer(gw.core, {
    port: 0,
    host: '127.0.0.1',
    deliveryPollMs: 20,
    retryBaseMs: 50,
    sweepMs: 100,
    ...options.server,
  });
  const clients: Client[] = [];
  const closeClients = () => {
    for (const c of clients.splice(0)) c.close();
  };
  return {
    gw,
    server,
    customer,
    systemId,
    password: created.body.password as string,
    clients,
    closeClients,
    close: async () => {
      closeClients();
      await server.close();
      await gw.close();
    },
  };
}

/** A customer's SMPP client: requests with their responses, and the deliver_sm it got (answered ESME_ROK unless told otherwise). */
export class Client {
  readonly delivered: Pdu[] = [];
  /** command_status to answer deliver_sm with; a function may decide per PDU (null: leave it unanswered). */
  answerWith: (pdu: Pdu) => number | null = () => 0;
  closed = false;

  private constructor(readonly session: Session) {
    session.on('pdu', (pdu: Pdu) => {
      if (pdu.command === 'deliver_sm') {
        this.delivered.push(pdu);
        const status = this.answerWith(pdu);
        if (status !== null) session.send(pdu.response({ command_status: status, message_id: '' }));
      } else if (pdu.command === 'enquire_link') session.send(pdu.response());
      else if (pdu.command === 'unbind') session.send(pdu.response());
    });
    session.on('error', () => undefined);
    session.on('close', () => {
      this.closed = true;
    });
  }

  /** `localAddress`: another loopback address (127.0.0.2...) to connect from, as a second customer host. */
  static async connect(port: number, useTls = false, localAddress?: string): Promise<Client> {
    const socket = useTls ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : net.connect({ host: '127.0.0.1', port, localAddress });
    await new Promise<void>((resolve, reject) => {
      socket.once(useTls ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new Client(new smpp.Session({ socket }));
  }

  request(command: string, params: PduParams = {}): Promise<Pdu> {
    return new Promise((resolve, reject) => {
      if (!this.session.send(new smpp.PDU(command, params), resolve)) reject(new Error('not writable'));
    });
  }

  /** Sends raw octets (an unknown command). */
  async raw(commandId: number, sequence: number): Promise<void> {
    const buf = Buffer.alloc(16);
    buf.writeUInt32BE(16, 0);
    buf.writeUInt32BE(commandId, 4);
    buf.writeUInt32BE(0, 8);
    buf.writeUInt32BE(sequence, 12);
    this.session.socket.write(buf);
  }

  bind(type: 'transmitter' | 'receiver' | 'transceiver', systemId: string, password: string): Promise<Pdu> {
    return this.request(`bind_${type}`, { system_id: systemId, password, interface_version: 0x34 });
  }

  submit(params: PduParams): Promise<Pdu> {
    return this.request('submit_sm', {
      source_addr_ton: 5,
      source_addr_npi: 0,
      source_addr: 'ACME',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      ...params,
    });
  }

  close(): void {
    this.session.socket.destroy();
  }
}

/** Binds a new client; fails unless the bind is answered ESME_ROK. */
export async function bound(g: SmppGateway, type: 'transmitter' | 'receiver' | 'transceiver' = 'transceiver'): Promise<Client> {
  const client = await Client.connect(g.server.port);
  g.clients.push(client);
  const resp = await client.bind(type, g.systemId, g.password);
  if (resp.command_status !== 0) throw new Error(`bind refused: ${resp.command_status}`);
  return client;
}

/** Polls until `check` holds (generous time limit: tests never depend on speed). */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The text of a deliver_sm's body (short_message or message_payload) as latin1. */
export function bodyText(pdu: Pdu): string {
  const short = pdu.short_message;
  const payload = pdu.message_payload;
  const b = Buffer.isBuffer(short) && short.length > 0 ? short : Buffer.isBuffer(payload) ? payload : Buffer.alloc(0);
  return b.toString('latin1');
}

/** Makes every `op` on `table` fail (a trigger, as a full disk would); the returned function lets it work again. */
export async function refuseWrites(db: Kysely<Database>, table: string, op: 'insert' | 'delete'): Promise<() => Promise<void>> {
  const name = sql.raw(`refuse_${op}_${table}`);
  const on = sql.raw(`${op} on ${table}`);
  if (DIALECT === 'sqlite') {
    await sql`create trigger ${name} before ${on} begin select raise(abort, 'cannot write'); end`.execute(db);
    return async () => void (await sql`drop trigger ${name}`.execute(db));
  }
  await sql`create function ${name}() returns trigger as $$ begin raise exception 'cannot write'; end $$ language plpgsql`.execute(db);
  await sql`create trigger ${name} before ${on} for each row execute function ${name}()`.execute(db);
  return async () => void (await sql`drop function ${name} cascade`.execute(db));
}
