/**
 * The SMPP server with its SQLite data directory on a small tmpfs, filled to
 * the last byte while a customer streams submit_sm (receipts asked for) and
 * while the SMSC still owes receipts of messages it was sent: every submit is
 * answered ESME_ROK or ESME_RSYSERR (never a dropped connection), the bind
 * stays up, and once space is back every message answered ESME_ROK reaches
 * the SMSC once, none refused does, and the customer gets the receipt of
 * every accepted message once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIALECT } from '../helpers.ts';
import { fillDisk, freePort, http, spawnGateway, until } from '../process.ts';
import { smscWithCarriersFile } from '../carriers-file.ts';
import { Client } from './helpers.ts';

const TOKEN = 'smpp-full-disk-operator-token-0';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
const RSYSERR = 0x08;

// The disk is SQLite's: on PostgreSQL the server's disk is not the gateway's to fill.
test('a full disk under an SMPP customer: ESME_RSYSERR, the bind kept, every ESME_ROK sent once with its receipt once space is back', {
  skip: DIALECT !== 'sqlite',
}, async () => {
  const outside = mkdtempSync(join(tmpdir(), 'gw-smpp-full-'));
  const dataDir = join(outside, 'data');
  mkdirSync(dataDir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', dataDir]);
  const filler = join(dataDir, 'filler');
  const smsc = await smscWithCarriersFile({ windowSize: 50 });
  const port = await freePort();
  const gw = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: 'false',
    ...smsc.env,
    SMPP_PORT: String(port),
    // A short lease: an answer or a delivery dropped instead of kept would be sent again soon after.
    DISPATCH_LEASE_MS: '1500',
    DATABASE_URL: '',
  });
  let client: Client | null = null;
  try {
    const account = await http(gw.base, 'POST', '/admin/accounts', { name: 'Full SMPP', balance: 1000 }, ADMIN);
    const route = await http(
      gw.base,
      'POST',
      '/admin/routes',
      { displayName: 'Sim', productName: 'SMS', productId: 1, farePrice: '0.05', replyFarePrice: '0', channel: 'SMS', connector: 'smsc' },
      ADMIN,
    );
    await http(gw.base, 'POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id }, ADMIN);
    const credential = await http(
      gw.base,
      'POST',
      `/admin/accounts/${account.body.id}/smpp-credentials`,
      { systemId: 'fulldisk', password: 'full0001', routeId: route.body.id, windowSize: 20 },
      ADMIN,
    );
    assert.equal(credential.status, 201);
    const c = await Client.connect(port);
    client = c;
    assert.equal((await c.bind('transceiver', 'fulldisk', 'full0001')).command_status, 0);

    const accepted = new Map<string, string>(); // message id -> text
    const refusedTexts: string[] = [];
    let n = 0;
    const submit = async (): Promise<number> => {
      n++;
      const text = `full disk smpp ${n}`;
      const resp = await c.submit({ destination_addr: String(5511987000005 + n * 10), short_message: Buffer.from(text), registered_delivery: 1 });
      const status = resp.command_status as number;
      assert.ok(status === 0 || status === RSYSERR, `submit_sm_resp status ${status}`);
      if (status === 0) accepted.set(resp.message_id as string, text);
      else refusedTexts.push(text);
      return status;
    };
    for (let i = 0; i < 10; i++) assert.equal(await submit(), 0);

    // Messages at the SMSC whose answers and receipts come once the disk is full.
    smsc.sim.setMode({ responseDelayMs: 1000 });
    for (let i = 0; i < 10; i++) assert.equal(await submit(), 0);
    await until(
      'the messages at the SMSC',
      () => smsc.sim.stats.submits.length,
      (count) => count >= 20,
    );
    fillDisk(filler);
    for (let i = 0; i < 4000 && refusedTexts.length < 5; i++) await submit();
    assert.ok(refusedTexts.length > 0, 'the full disk refused some submit');
    // Full for longer than a lease, while the SMSC's answers and receipts come.
    await new Promise((r) => setTimeout(r, 3000));
    smsc.sim.setMode({ responseDelayMs: 0 });
    assert.equal(c.closed, false, 'the bind stays up while the disk is full');
    assert.equal((await c.request('enquire_link')).command_status, 0);

    rmSync(filler);
    await until(
      'a submit accepted again',
      () => submit(),
      (s) => s === 0,
      30_000,
    );

    // Every accepted message reaches the SMSC once; nothing refused does.
    const sentTexts = await until(
      'every accepted message at the SMSC',
      () => smsc.sim.messages().map((m) => m.text),
      (texts) => [...accepted.values()].every((t) => texts.includes(t)),
      30_000,
    );
    assert.deepEqual(
      sentTexts.filter((t, i) => sentTexts.indexOf(t) !== i),
      [],
      'messages sent more than once',
    );
    assert.deepEqual(
      refusedTexts.filter((t) => sentTexts.includes(t)),
      [],
      'a submit answered ESME_RSYSERR was sent',
    );
    // A receipt back for every accepted message: none lost while the disk was full ...
    const receipted = () => new Set(c.delivered.filter((p) => ((p.esm_class as number) & 0x04) !== 0).map((p) => String(p.receipted_message_id)));
    await until(
      'a receipt for every accepted message',
      () => [...accepted.keys()].filter((id) => !receipted().has(id)),
      (missing) => missing.length === 0,
      60_000,
    );
    // ... and once.
    await new Promise((r) => setTimeout(r, 1000));
    const ids = c.delivered.filter((p) => ((p.esm_class as number) & 0x04) !== 0).map((p) => String(p.receipted_message_id));
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'receipts sent more than once',
    );
  } finally {
    client?.close();
    await gw.stop().catch(() => undefined);
    await smsc.close();
    execFileSync('umount', ['-l', dataDir]);
    rmSync(outside, { recursive: true, force: true });
  }
});
