/**
 * The SMPP sink of `npm run bench:peer`: an SMPP 3.4 server (the `smpp`
 * package's server side) on loopback that binds anyone, answers every
 * submit_sm at once with a decimal message id, and, when the submit asks
 * for one (registered_delivery bit 0) and receipts are on, sends a
 * DELIVRD receipt right after the answer (Appendix B text plus the
 * receipted_message_id and message_state TLVs). It keeps nothing but
 * counters: submits (total, per second, first and last time), binds,
 * receipts sent and answered.
 *
 * It runs as its own process (`tsx bench/kannel/sink.ts`), so that its CPU
 * is its own: it prints `{"sink": port}` when it listens, and answers each
 * line `stats` on stdin with one JSON line of counters.
 */
import { createInterface } from 'node:readline';
import smpp, { pduNumber, pduString, type Pdu, type Session } from '../../src/carriers/smpp/smpp-lib.ts';

export interface SinkStats {
  binds: number;
  submits: number;
  /** Date.now() of the first and the last submit_sm (0 before any). */
  firstAt: number;
  lastAt: number;
  receiptsSent: number;
  receiptsAnswered: number;
  /** Submits per whole second (Date.now() / 1000, floored), the last 600 seconds. */
  perSecond: Record<string, number>;
}

const two = (n: number): string => String(n).padStart(2, '0');
const yymmddhhmm = (d: Date): string =>
  `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;

function startSink(receipts: boolean): Promise<{ port: number; stats: () => SinkStats }> {
  const stats: SinkStats = { binds: 0, submits: 0, firstAt: 0, lastAt: 0, receiptsSent: 0, receiptsAnswered: 0, perSecond: {} };
  let nextId = 1_000_000_000;
  const onSubmit = (session: Session, pdu: Pdu): void => {
    const now = Date.now();
    stats.submits++;
    if (stats.firstAt === 0) stats.firstAt = now;
    stats.lastAt = now;
    const second = String(Math.floor(now / 1000));
    stats.perSecond[second] = (stats.perSecond[second] ?? 0) + 1;
    const id = String(nextId++);
    session.send(pdu.response({ message_id: id }));
    if (!receipts || ((pduNumber(pdu, 'registered_delivery') ?? 0) & 1) === 0) return;
    const date = yymmddhhmm(new Date(now));
    stats.receiptsSent++;
    session.send(
      new smpp.PDU('deliver_sm', {
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: pduString(pdu, 'destination_addr'),
        dest_addr_ton: 0,
        dest_addr_npi: 1,
        destination_addr: pduString(pdu, 'source_addr'),
        esm_class: 0x04,
        data_coding: 0,
        short_message: Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:${date} done date:${date} stat:DELIVRD err:000 text:`, 'latin1'),
        receipted_message_id: id,
        message_state: 2,
      }),
      () => void stats.receiptsAnswered++,
    );
  };
  const server = smpp.createServer({}, (session: Session) => {
    session.on('error', () => undefined);
    session.on('pdu', (pdu: Pdu) => {
      switch (pdu.command) {
        case 'submit_sm':
          return onSubmit(session, pdu);
        case 'bind_transceiver':
        case 'bind_transmitter':
        case 'bind_receiver':
          stats.binds++;
          return void session.send(pdu.response({ system_id: 'PEERSINK' }));
        case 'enquire_link':
          return void session.send(pdu.response());
        case 'unbind':
          return void session.send(pdu.response(), () => session.close());
        default:
          return;
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const cut = (): void => {
        const oldest = Math.floor(Date.now() / 1000) - 600;
        for (const s of Object.keys(stats.perSecond)) if (Number(s) < oldest) delete stats.perSecond[s];
      };
      resolve({
        port,
        stats: () => {
          cut();
          return stats;
        },
      });
    });
  });
}

const sink = await startSink(process.env.PEER_SINK_RECEIPTS !== 'false');
process.stdout.write(`${JSON.stringify({ sink: sink.port })}\n`);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === 'stats') process.stdout.write(`${JSON.stringify(sink.stats())}\n`);
});
lines.on('close', () => process.exit(0)); // the bench is gone or done
process.on('SIGTERM', () => process.exit(0));
