/**
 * The whole gateway against the SMSC simulator over TCP on loopback: HTTP
 * send -> outbox -> dispatcher -> SMPP connector -> simulator, and receipts
 * and MO back into the reports. Each test has its own simulator and gateway;
 * the SMPP connection comes from a carriers file (GATEWAY_CARRIERS_FILE), as
 * an operator configures it. SMPP_TEST_LOG=1 prints the simulator's log.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ESM_UDHI } from '../src/carriers/smpp/encoding.ts';
import { Status } from '../src/carriers/smpp/smpp-lib.ts';
import { parseUdh } from '../src/carriers/smpp/udh.ts';
import { startSmscSimulator, type AssembledMessage, type OutcomeRule, type SmscSimulator } from '../tools/smsc-sim/server.ts';
import { startGateway, type TestGateway } from './helpers.ts';

const CONNECTION = 'smsc-test';
const PASSWORD_ENV = 'SMPP_GATEWAY_TEST_PASSWORD';
const SOURCE = 'ACME';
const FARE = 0.1;
const REPLY_FARE = 0.05;

/** Outcomes the simulated SMSC gives by receiver suffix. */
const RULES: OutcomeRule[] = [
  { suffix: '1001', stat: 'UNDELIV', err: '001' },
  { suffix: '1002', stat: 'EXPIRED', err: '000' },
  { suffix: '1003', submitStatus: Status.RSUBMITFAIL },
  { suffix: '1004', stat: 'REJECTD', err: '002' },
];

interface SentRecord {
  id: string;
  receiver: string;
  content: string;
  status: string;
  statusDetails: string | null;
}

interface ReceivedRecord {
  sender: string;
  content: string;
  receivedAt: string | null;
  messageId: string | null;
}

interface Setup {
  sim: SmscSimulator;
  gw: TestGateway;
  key: string;
  send(receiver: string, message: string): Promise<void>;
  sent(): Promise<SentRecord[]>;
  received(): Promise<ReceivedRecord[]>;
  balance(): Promise<number>;
  /** Waits until the sent report has `count` messages, each with a status in `statuses`. */
  settled(count: number, statuses: string[]): Promise<SentRecord[]>;
  close(): Promise<void>;
}

let current: Setup | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

/** A simulator, a carriers file naming it, a gateway reading that file, and a customer with a route on it. */
async function setup(connection: Record<string, number> = {}): Promise<Setup> {
  const verbose = process.env.SMPP_TEST_LOG === '1';
  const sim = await startSmscSimulator({
    systemId: 'gwtest',
    password: 'secret1',
    receiptDelayMs: 5,
    rules: RULES,
    ...(verbose ? { log: (line: string) => console.log('sim', line) } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'gw-carriers-'));
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({
      smpp: [
        {
          name: CONNECTION,
          host: '127.0.0.1',
          port: sim.port,
          systemId: 'gwtest',
          passwordEnv: PASSWORD_ENV,
          sourceAddr: SOURCE,
          windowSize: 10,
          responseTimeoutMs: 5_000,
          enquireLinkMs: 5_000,
          reconnectMinMs: 20,
          reconnectMaxMs: 200,
          throttleBackoffMinMs: 10,
          throttleBackoffMaxMs: 100,
          ...connection,
        },
      ],
    }),
  );
  // The password is read from the process environment, never from the file.
  process.env[PASSWORD_ENV] = 'secret1';
  let gw: TestGateway | null = null;
  try {
    gw = await startGateway({ GATEWAY_CARRIERS_FILE: file });
    return await customerOn(sim, gw, dir);
  } catch (err) {
    await gw?.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** An account with a route on the SMPP connection (operator API), and the helpers the tests use. */
async function customerOn(sim: SmscSimulator, gw: TestGateway, dir: string): Promise<Setup> {
  const account = await gw.admin('POST', '/admin/accounts', { name: 'SMPP customer', balance: 100 });
  assert.equal(account.status, 201, JSON.stringify(account.body));
  const route = await gw.admin('POST', '/admin/routes', {
    displayName: 'SMPP route',
    productName: 'SMS',
    productId: 7,
    farePrice: String(FARE),
    replyFarePrice: String(REPLY_FARE),
    channel: 'SMS',
    connector: CONNECTION,
  });
  assert.equal(route.status, 201, JSON.stringify(route.body));
  assert.equal(route.body.connector, CONNECTION);
  const grant = await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id });
  assert.equal(grant.status, 204);
  const issued = await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {});
  const key = issued.body.key as string;
  const routeId = route.body.id as number;

  const sent = async (): Promise<SentRecord[]> => {
    const res = await gw.call(key, 'GET', '/reports/messages/sent?limit=1000');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.object as SentRecord[];
  };
  const s: Setup = {
    sim,
    gw,
    key,
    sent,
    async send(receiver, message) {
      const res = await gw.call(key, 'POST', '/messages/sms/send', { receivers: [receiver], message, route: routeId });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.hasError, false);
    },
    async received() {
      const res = await gw.call(key, 'GET', '/reports/messages/received?limit=1000');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.object as ReceivedRecord[];
    },
    async balance() {
      const res = await gw.call(key, 'GET', '/balance');
      assert.equal(res.status, 200);
      return res.body.object.balance as number;
    },
    settled: (count, statuses) =>
      gw.eventually(sent, (rows) => rows.length === count && rows.every((r) => statuses.includes(r.status)), `${count} messages in ${statuses.join('/')}`),
    async close() {
      await gw.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return s;
}

/** GSM 03.38 septets (unpacked) of the characters these tests use, written out independently of the encoder. */
const GSM_TEST_CHARS: Record<string, number[]> = {
  '@': [0x00],
  $: [0x02],
  _: [0x11],
  '€': [0x1b, 0x65],
  '{': [0x1b, 0x28],
  '}': [0x1b, 0x29],
  '[': [0x1b, 0x3c],
  ']': [0x1b, 0x3e],
  '~': [0x1b, 0x3d],
  '\\': [0x1b, 0x2f],
  '^': [0x1b, 0x14],
  '|': [0x1b, 0x40],
  é: [0x05],
  Ü: [0x5e],
};
function gsmBytes(text: string): Buffer {
  return Buffer.from(
    [...text].flatMap((ch) => {
      const mapped = GSM_TEST_CHARS[ch];
      if (mapped) return mapped;
      assert.match(ch, /^[A-Za-z0-9 .,:;!?%&'()*+\-/<=>"#]$/, `test text character ${JSON.stringify(ch)} needs a septet in GSM_TEST_CHARS`);
      return [ch.charCodeAt(0)];
    }),
  );
}
/** An amount as the API shows it (micro-unit precision). */
const money = (n: number): number => Math.round(n * 1e6) / 1e6;

const ucs2Bytes = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16();

/** The message the simulator assembled for a receiver (exactly one expected). */
function arrived(sim: SmscSimulator, receiver: string): AssembledMessage {
  const found = sim.messages().filter((m) => m.receiver === receiver);
  assert.equal(found.length, 1, `messages at the SMSC for ${receiver}: ${found.length}`);
  const [message] = found;
  assert.ok(message);
  return message;
}

/** Bodies of the parts without UDH, joined; checks the concatenation header of each part on the way. */
function joinedBody(message: AssembledMessage): Buffer {
  const total = message.parts.length;
  const refs = new Set<number>();
  const bodies = message.parts.map((part, i) => {
    if (total === 1) {
      assert.equal(part.esmClass & ESM_UDHI, 0, 'a single-part message has no UDH');
      return part.bytes;
    }
    assert.equal(part.esmClass & ESM_UDHI, ESM_UDHI);
    const udh = parseUdh(part.bytes);
    assert.ok(udh?.concat, 'part has a concatenation UDH');
    assert.equal(udh.concat.total, total);
    assert.equal(udh.concat.sequence, i + 1);
    refs.add(udh.concat.reference);
    return udh.body;
  });
  assert.ok(refs.size <= 1, 'all parts share one reference');
  return Buffer.concat(bodies);
}

/** Texts that arrived at the SMSC for a receiver, in arrival order, with at-least-once repeats (the same message twice in a row) folded. */
function arrivalOrder(sim: SmscSimulator, receiver: string): { texts: string[]; repeats: number } {
  const texts: string[] = [];
  let repeats = 0;
  for (const m of sim.messages()) {
    if (m.receiver !== receiver || !m.complete) continue;
    if (texts[texts.length - 1] === m.text) repeats++;
    else texts.push(m.text);
  }
  return { texts, repeats };
}

/** 60 messages to 3 receivers, each its own request, sent one after the other; `during(i)` runs before the i-th. */
async function orderedRun(s: Setup, during: (i: number) => void): Promise<{ receivers: string[]; expected: Map<string, string[]> }> {
  const receivers = ['5511987652001', '5511987652002', '5511987652003'];
  const expected = new Map<string, string[]>(receivers.map((r) => [r, []]));
  for (let i = 0; i < 60; i++) {
    during(i);
    const receiver = receivers[i % 3] ?? '';
    // Every seventh message is long (two parts), so parts are throttled and cut off too.
    const text = i % 7 === 3 ? `run ${i} ${'long text '.repeat(20)}` : `run ${i}`;
    expected.get(receiver)?.push(text);
    await s.send(receiver, text);
  }
  return { receivers, expected };
}

describe('gateway over SMPP against the SMSC simulator', () => {
  it('delivers plain GSM, long GSM with extension characters and long UCS-2 texts byte-exact', async () => {
    const s = (current = await setup());
    const plain = 'Hello from the gateway: 100% @home, $5 & _under_score_ (test) e Ü!';
    const longGsm = `Prices {EUR}: 5€ [promo] ~ a|b \\ x^2. ${'Every {brace} and € doubles up. '.repeat(6)}End.`;
    const longUcs2 = `Olá! Привет 😀 ${'Mensagem longa com acentuação e emoji 🎉 '.repeat(4)}fim`;
    const texts: Array<[string, string]> = [
      ['5511987650101', plain],
      ['5511987650102', longGsm],
      ['5511987650103', longUcs2],
    ];
    for (const [receiver, text] of texts) await s.send(receiver, text);
    await s.settled(3, ['DELIVERED']);

    const a = arrived(s.sim, '5511987650101');
    assert.equal(a.text, plain);
    assert.equal(a.dataCoding, 0);
    assert.equal(a.sender, SOURCE);
    assert.equal(a.parts.length, 1);
    assert.deepEqual(joinedBody(a), gsmBytes(plain));

    const b = arrived(s.sim, '5511987650102');
    assert.equal(b.text, longGsm);
    assert.equal(b.dataCoding, 0);
    assert.ok(b.complete);
    const gsm = gsmBytes(longGsm);
    assert.ok(gsm.length > 160 && b.parts.length >= 2, `parts: ${b.parts.length}`);
    assert.deepEqual(joinedBody(b), gsm);
    for (const part of b.parts) {
      const body = parseUdh(part.bytes)?.body ?? Buffer.alloc(0);
      assert.ok(body.length <= 153, 'at most 153 septets per part');
      assert.notEqual(body[body.length - 1], 0x1b, 'no escape split from its character');
    }

    const c = arrived(s.sim, '5511987650103');
    assert.equal(c.text, longUcs2);
    assert.equal(c.dataCoding, 8);
    assert.ok(c.complete && c.parts.length >= 3);
    assert.deepEqual(joinedBody(c), ucs2Bytes(longUcs2));
    for (const part of c.parts) {
      const body = parseUdh(part.bytes)?.body ?? Buffer.alloc(0);
      assert.ok(body.length <= 134, 'at most 67 UTF-16 units per part');
      const last = body.readUInt16BE(body.length - 2);
      assert.ok(last < 0xd800 || last > 0xdbff, 'no surrogate pair split across parts');
    }

    const report = await s.sent();
    for (const [receiver, text] of texts) assert.equal(report.find((r) => r.receiver === receiver)?.content, text);
  });

  it('turns DELIVRD, UNDELIV, EXPIRED and REJECTD receipts into report statuses and details', async () => {
    const s = (current = await setup());
    const cases: Array<[string, string, string]> = [
      ['5511987651000', 'DELIVERED', 'stat:DELIVRD err:000'],
      ['5511987651001', 'UNDELIVERED', 'stat:UNDELIV err:001'],
      ['5511987651002', 'EXPIRED', 'stat:EXPIRED err:000'],
      ['5511987651004', 'FAILED', 'stat:REJECTD err:002'],
    ];
    for (const [receiver] of cases) await s.send(receiver, `receipt test to ${receiver}`);
    const rows = await s.settled(cases.length, ['DELIVERED', 'UNDELIVERED', 'EXPIRED', 'FAILED']);
    for (const [receiver, status, details] of cases) {
      const row = rows.find((r) => r.receiver === receiver);
      assert.equal(row?.status, status, receiver);
      assert.equal(row?.statusDetails, details, receiver);
    }
    assert.equal(s.sim.stats.submits.length, cases.length);
    // A receipt is not a refusal: nothing is refunded.
    assert.equal(await s.balance(), money(100 - cases.length * FARE));
  });

  it('fails a submit the SMSC refuses, with the SMPP error, and refunds it', async () => {
    const s = (current = await setup());
    await s.send('5511987651003', 'refused at submit');
    await s.send('5511987651000', 'accepted');
    const rows = await s.settled(2, ['FAILED', 'DELIVERED']);
    const refused = rows.find((r) => r.receiver === '5511987651003');
    assert.equal(refused?.status, 'FAILED');
    assert.match(refused?.statusDetails ?? '', /ESME_RSUBMITFAIL \(0x45\)/);
    assert.equal(rows.find((r) => r.receiver === '5511987651000')?.status, 'DELIVERED');
    assert.deepEqual(s.sim.stats.refused, [{ receiver: '5511987651003', status: Status.RSUBMITFAIL }]);
    assert.equal(await s.balance(), money(100 - FARE), 'only the accepted message is charged');
  });

  it('turns an MO into a reply matched to the message sent to that number, charged replyFarePrice', async () => {
    const s = (current = await setup());
    await s.send('5511987653001', 'Reply YES to confirm');
    await s.send('5511987653002', 'Another customer');
    const rows = await s.settled(2, ['DELIVERED']);
    const before = await s.balance();
    assert.equal(before, money(100 - 2 * FARE));

    await s.sim.injectMo({ from: '+5511987653001', to: SOURCE, text: 'YES' });
    const longReply = `Sim, confirmo 👍 ${'obrigado pela mensagem, '.repeat(5)}tchau`;
    await s.sim.injectMo({ from: '+5511987653002', to: SOURCE, text: longReply, reverse: true });
    const replies = await s.gw.eventually(
      () => s.received(),
      (r) => r.length === 2,
      'two replies',
    );
    const yes = replies.find((r) => r.sender === '5511987653001');
    assert.equal(yes?.content, 'YES');
    assert.equal(yes?.messageId, rows.find((r) => r.receiver === '5511987653001')?.id);
    const long = replies.find((r) => r.sender === '5511987653002');
    assert.equal(long?.content, longReply, 'a multi-part UCS-2 MO arriving last part first is put together');
    assert.equal(long?.messageId, rows.find((r) => r.receiver === '5511987653002')?.id);
    assert.equal(await s.balance(), money(before - 2 * REPLY_FARE));
  });

  it("loses nothing and keeps each receiver's order through a throttling storm", async () => {
    const s = (current = await setup());
    const { receivers, expected } = await orderedRun(s, (i) => {
      if (i === 20) s.sim.setMode({ throttleNext: 15, queueFullNext: 8 });
    });
    await s.settled(60, ['DELIVERED']);
    assert.equal(s.sim.stats.throttled, 23, 'the whole storm was answered');
    for (const r of receivers) assert.deepEqual(arrivalOrder(s.sim, r).texts, expected.get(r), r);
  });

  it("keeps each receiver's order when a throttled message is handed back for a later retry", async () => {
    // One throttle answer too many and the connector gives the message back to the dispatcher, which sends it again after a delay.
    const s = (current = await setup({ maxThrottleRetries: 1 }));
    const { receivers, expected } = await orderedRun(s, (i) => {
      if (i === 10) s.sim.setMode({ throttleNext: 6 });
    });
    await s.settled(60, ['DELIVERED']);
    assert.equal(s.sim.stats.throttled, 6);
    const retried = await s.gw.core.db.kysely.selectFrom('messages').select('id').where('attempts', '>', 1).execute();
    assert.ok(retried.length > 0, 'some messages were handed back and sent again');
    for (const r of receivers) assert.deepEqual(arrivalOrder(s.sim, r).texts, expected.get(r), r);
  });

  it("loses nothing and keeps each receiver's order through dropped connections", async () => {
    const s = (current = await setup());
    const { receivers, expected } = await orderedRun(s, (i) => {
      if (i === 15) s.sim.setMode({ dropAfterSubmits: 3 });
      if (i === 40) s.sim.dropConnections();
    });
    await s.settled(60, ['DELIVERED']);
    assert.equal(s.sim.stats.drops, 2);
    assert.ok(s.sim.stats.binds >= 3, `binds: ${s.sim.stats.binds}`);
    for (const r of receivers) {
      const { texts } = arrivalOrder(s.sim, r);
      assert.deepEqual(texts, expected.get(r), r);
    }
  });

  it("lets the SMSC answer what it has before closing a connection whose lease can't be renewed: nothing sent twice", async () => {
    const s = (current = await setup());
    // Answers take a while, so that submits are in flight when the connection is let go.
    s.sim.setMode({ responseDelayMs: 300 });
    // From now on the connection's lease cannot be renewed, as on a full disk (the accepts still write).
    const leases = (s.gw.core.dispatcher as unknown as { leases: { renew: () => Promise<boolean> } }).leases;
    const renew = leases.renew;
    leases.renew = () => Promise.reject(new Error('database or disk is full'));
    let n = 0;
    const sending = async () => {
      await s.send(`55119876${String(53000 + n)}`, `lease ${n}`);
      n++;
      await new Promise((r) => setTimeout(r, 40));
    };
    while (s.gw.core.dispatcher.holds(CONNECTION)) await sending();
    const atRelease = s.sim.stats.submits.length;
    for (let i = 0; i < 5; i++) await sending();
    leases.renew = renew;
    await s.settled(n, ['DELIVERED']);
    assert.ok(atRelease > 5, `submits before the connection was let go: ${atRelease}`);
    const texts = s.sim.messages().map((m) => m.text);
    assert.deepEqual(
      texts.filter((t, i) => texts.indexOf(t) !== i),
      [],
      'messages sent more than once',
    );
    assert.equal(texts.length, n);
  });

  it('matches a receipt that arrives before its submit_sm_resp', async () => {
    const s = (current = await setup());
    s.sim.setMode({ receiptBeforeResp: true });
    await s.send('5511987654001', 'early receipt');
    await s.send('5511987654002', `early receipts for every part ${'x'.repeat(300)}`);
    await s.send('5511987654003', 'third');
    const rows = await s.settled(3, ['DELIVERED']);
    for (const row of rows) assert.equal(row.statusDetails, 'stat:DELIVRD err:000');
    assert.equal(s.sim.stats.submits.length, 1 + 3 + 1);
    const waiting = await s.gw.core.db.kysely.selectFrom('pending_receipts').select('carrier_id').execute();
    assert.deepEqual(waiting, [], 'no receipt left waiting for its message');
  });
});
