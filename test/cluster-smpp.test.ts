/**
 * Three gateway processes on one database and one SMSC (docs/operations.md,
 * "Running several processes"): each accepts over HTTP; the carrier
 * connection is held by one process at a time (maxBinds 1); kill -9 of the
 * holder hands it to another within the connection lease. The SMSC here is
 * a sink on loopback built on the `smpp` package that counts the binds open
 * at once and the submits in each second, as the carrier would see them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import smpp, { pduBody, type Pdu, type Session } from '../src/carriers/smpp/smpp-lib.ts';
import { decodeText } from '../src/carriers/smpp/encoding.ts';
import { DIALECT, freshDatabase } from './helpers.ts';
import { http, spawnGateway, until, type GatewayProcess } from './process.ts';

const TOKEN = 'cluster-smpp-operator-token-00';
const admin = { authorization: `Bearer ${TOKEN}` };
const RATE = 40;

interface Sink {
  port: number;
  /** Most binds open at the same time. */
  maxBinds: number;
  binds: number;
  /** Submits by the second they arrived in. */
  perSecond: Map<number, number>;
  /** Texts in arrival order. */
  texts: string[];
  close(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  let open = 0;
  let next = 1;
  const sessions = new Set<Session>();
  const sink: Sink = {
    port: 0,
    maxBinds: 0,
    binds: 0,
    perSecond: new Map(),
    texts: [],
    close: () => {
      for (const s of sessions) (s.socket as Socket).destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = smpp.createServer((session: Session) => {
    sessions.add(session);
    let bound = false;
    const gone = () => {
      if (bound) open--;
      bound = false;
      sessions.delete(session);
    };
    session.on('close', gone);
    session.on('error', gone);
    session.on('pdu', (pdu: Pdu) => {
      if (pdu.command === 'bind_transceiver' || pdu.command === 'bind_transmitter') {
        bound = true;
        open++;
        sink.binds++;
        sink.maxBinds = Math.max(sink.maxBinds, open);
        session.send(pdu.response({ system_id: 'SINK' }));
      } else if (pdu.command === 'submit_sm') {
        const second = Math.floor(Date.now() / 1000);
        sink.perSecond.set(second, (sink.perSecond.get(second) ?? 0) + 1);
        sink.texts.push(decodeText(pduBody(pdu), Number(pdu.data_coding ?? 0)));
        session.send(pdu.response({ message_id: (next++).toString(16) }));
      } else if (pdu.command === 'enquire_link' || pdu.command === 'unbind') {
        session.send(pdu.response());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.port = (server.address() as { port: number }).port;
  return sink;
}

// On PostgreSQL: several processes are what it is for (on SQLite, one data dir serves an api and a dispatch process, test/cluster.test.ts).
test('three processes on PostgreSQL, one SMPP connection held by one at a time; kill -9 of the holder hands it over', {
  skip: DIALECT !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const db = await freshDatabase();
  const sink = await startSink();
  const dir = mkdtempSync(join(tmpdir(), 'gw-cluster-smpp-'));
  const carriers = join(dir, 'carriers.json');
  writeFileSync(
    carriers,
    JSON.stringify({
      smpp: [
        {
          name: 'smsc',
          host: '127.0.0.1',
          port: sink.port,
          systemId: 'gw',
          passwordEnv: 'CLUSTER_SMSC_PASSWORD',
          sourceAddr: 'ACME',
          windowSize: 10,
          maxSubmitsPerSecond: RATE,
          maxBinds: 1,
          reconnectMinMs: 50,
          reconnectMaxMs: 200,
          registeredDelivery: 0,
        },
      ],
    }),
  );
  const env = {
    ...db.env,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    GATEWAY_CARRIERS_FILE: carriers,
    CLUSTER_SMSC_PASSWORD: 'secret',
    CONNECTION_LEASE_MS: '3000',
    DISPATCH_LEASE_MS: '3000',
    DISPATCH_POLL_MS: '50',
  };
  const running: GatewayProcess[] = [];
  try {
    for (let i = 0; i < 3; i++) running.push(await spawnGateway(env));
    const [a] = running as [GatewayProcess];
    const account = await http(a.base, 'POST', '/admin/accounts', { name: 'Cluster', balance: 100_000 }, admin);
    const route = await http(
      a.base,
      'POST',
      '/admin/routes',
      { displayName: 'SMSC', productName: 'SMS', productId: 1, farePrice: '0.01', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' },
      admin,
    );
    await http(a.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, admin);
    const key = (await http(a.base, 'POST', `/admin/accounts/${account.body.id}/api-keys`, {}, admin)).body.key as string;

    let adminBase = a.base;
    const holders = async () => {
      const view = (await http(adminBase, 'GET', '/admin/cluster', undefined, admin)).body as { processes: { pid: number; connectors: string[] }[] };
      return view.processes.filter((p) => p.connectors.includes('smsc')).map((p) => p.pid);
    };
    const [holderPid] = await until('one process holds the connection', holders, (pids) => pids.length === 1);
    assert.equal(sink.maxBinds, 1);

    // Load split over the three processes' HTTP.
    let sent = 0;
    const sendRound = async (round: number, over: GatewayProcess[]) => {
      await Promise.all(
        over.map(async (gw, i) => {
          const receivers = Array.from({ length: 10 }, (_, j) => 5511970000000 + i * 100 + j);
          const res = await http(gw.base, 'POST', '/messages/sms/send', { receivers, message: `r${round}p${i}`, route: route.body.id }, { 'x-api-key': key });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          sent += receivers.length;
        }),
      );
    };
    for (let round = 0; round < 6; round++) await sendRound(round, running);
    await until(
      'some messages at the SMSC',
      () => sink.texts.length,
      (n) => n >= 60,
    );

    // kill -9 the holder; the others keep accepting, and one of them takes the connection.
    const holder = running.find((gw) => gw.child.pid === holderPid) as GatewayProcess;
    await holder.kill();
    const alive = running.filter((gw) => gw !== holder);
    adminBase = alive[0]?.base ?? '';
    for (let round = 6; round < 12; round++) await sendRound(round, alive);
    await until('another process holds the connection', holders, (pids) => pids.length === 1 && pids[0] !== holderPid);

    // Every accepted message reaches the SMSC (those in flight at the kill possibly twice).
    await until(
      'every accepted message at the SMSC',
      async () =>
        (await http(alive[0]?.base ?? '', 'GET', '/reports/messages/sent?limit=1&statuses=QUEUED,SCHEDULED,SENDING', undefined, { 'x-api-key': key })).body
          .totalRecords as number,
      (n) => n === 0,
      120_000,
    );
    assert.ok(sink.texts.length >= sent, `${sink.texts.length} submits for ${sent} messages`);
    const perText = new Map<string, number>();
    for (const t of sink.texts) perText.set(t, (perText.get(t) ?? 0) + 1);
    // 12 rounds x (3 or 2 processes) x 10 receivers; each text names round and process, so a text counts its 10 receivers.
    for (let round = 0; round < 12; round++)
      for (let p = 0; p < (round < 6 ? 3 : 2); p++) assert.ok((perText.get(`r${round}p${p}`) ?? 0) >= 10, `r${round}p${p}: ${perText.get(`r${round}p${p}`)}`);
    const duplicates = sink.texts.length - sent;
    // Only what the killed process had in flight is sent twice: its window, and answers it got but had not written yet
    // (written in batches, well within a second: at most a second of the contract's rate).
    assert.ok(duplicates <= 10 + RATE, `${duplicates} duplicates`);

    // The SMSC never saw more binds than maxBinds, nor more submits in a second than the contract allows.
    assert.equal(sink.maxBinds, 1);
    const busiest = Math.max(...sink.perSecond.values());
    assert.ok(busiest <= RATE, `${busiest} submits in one second, contract ${RATE}`);
  } finally {
    for (const gw of running.reverse()) if (gw.child.exitCode === null && gw.child.signalCode === null) await gw.stop();
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
});
