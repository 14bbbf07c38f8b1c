import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { bodyText, bound, refuseWrites, smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const S = {
  RINVMSGLEN: 0x01,
  RSYSERR: 0x08,
  RINVDSTADR: 0x0b,
  RINVESMCLASS: 0x43,
  RSUBMITFAIL: 0x45,
  RTHROTTLED: 0x58,
  RINVSCHED: 0x61,
  RINVEXPIRY: 0x62,
  RINVDCS: 0x104,
};

/** An SMPP time `seconds` from now, absolute in UTC+3 (an offset, to check it is applied). */
function absolute(ms: number): string {
  const d = new Date(ms + 3 * 3600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}012+`;
}

async function message(g: SmppGateway, id: string) {
  return g.gw.core.db.kysely.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

describe('submit_sm refusals and options', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway({ balance: '0.25' });
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  test('bad input: each refusal has its status and nothing is charged', async () => {
    const client = await bound(g);
    const cases: [Record<string, unknown>, number][] = [
      [{ destination_addr: '12', short_message: Buffer.from('x') }, S.RINVDSTADR],
      [{ destination_addr: 'ACME', short_message: Buffer.from('x') }, S.RINVDSTADR],
      [{ destination_addr: '5511999990100', data_coding: 4, short_message: Buffer.from('x') }, S.RINVDCS],
      [{ destination_addr: '5511999990100', short_message: Buffer.alloc(0) }, S.RINVMSGLEN],
      [{ destination_addr: '5511999990100', short_message: Buffer.from('a'), message_payload: Buffer.from('b') }, S.RINVMSGLEN],
      [{ destination_addr: '5511999990100', esm_class: 0x40, short_message: Buffer.from([0x09, 0x00]) }, S.RINVMSGLEN],
      [{ destination_addr: '5511999990100', esm_class: 0x04, short_message: Buffer.from('x') }, S.RINVESMCLASS],
      [{ destination_addr: '5511999990100', schedule_delivery_time: '2611xx0000000000', short_message: Buffer.from('x') }, S.RINVSCHED],
      // More than a year ahead, as an HTTP send refuses: relative (two years) and absolute (the year 2099).
      [{ destination_addr: '5511999990100', schedule_delivery_time: '020000000000000R', short_message: Buffer.from('x') }, S.RINVSCHED],
      [{ destination_addr: '5511999990100', schedule_delivery_time: '991231235959000+', short_message: Buffer.from('x') }, S.RINVSCHED],
      [{ destination_addr: '5511999990100', data_coding: 8, short_message: Buffer.from([0, 0x61, 0]) }, S.RINVMSGLEN],
      [{ destination_addr: '5511999990100', validity_period: 'tomorrow at ten', short_message: Buffer.from('x') }, S.RINVEXPIRY],
      [{ destination_addr: '5511999990100', validity_period: '200101000000000+', short_message: Buffer.from('x') }, S.RINVEXPIRY],
    ];
    for (const [params, status] of cases) {
      const resp = await client.submit(params as never);
      assert.equal(resp.command_status, status, JSON.stringify(params));
    }
    const charged = await g.gw.core.db.kysely.selectFrom('messages').select('id').where('account_id', '=', g.customer.accountId).execute();
    assert.equal(charged.length, 0);
  });

  test('out of credit: ESME_RSUBMITFAIL, nothing accepted', async () => {
    const client = await bound(g);
    // 0.25 at 0.10 a credit: two one-credit texts fit, a three-credit one then does not.
    assert.equal((await client.submit({ destination_addr: '5511999990110', short_message: Buffer.from('one') })).command_status, 0);
    assert.equal((await client.submit({ destination_addr: '5511999990111', short_message: Buffer.from('two') })).command_status, 0);
    const long = await client.submit({ destination_addr: '5511999990112', message_payload: Buffer.from('x'.repeat(400)) });
    assert.equal(long.command_status, S.RSUBMITFAIL);
    assert.equal((await client.submit({ destination_addr: '5511999990113', short_message: Buffer.from('three') })).command_status, S.RSUBMITFAIL);
  });

  test('a blocklisted receiver: accepted and not charged, as over HTTP; its receipt says REJECTD', async () => {
    await g.gw.core.db.kysely.insertInto('blocklist').values({ account_id: g.customer.accountId, phone: '5511999990120', created_at: Date.now() }).execute();
    const client = await bound(g);
    const resp = await client.submit({ destination_addr: '5511999990120', registered_delivery: 1, short_message: Buffer.from('blocked') });
    assert.equal(resp.command_status, 0);
    const row = await message(g, resp.message_id as string);
    assert.equal(row?.status, 'BLOCKED');
    assert.equal(row?.cost, 0);
    await waitFor(() => client.delivered.length > 0, 'the receipt of the blocked message');
    assert.match(bodyText(client.delivered[0] as never), /stat:REJECTD/);
  });
});

describe('schedule and validity', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway();
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  test('schedule_delivery_time, absolute (with its UTC offset) and relative, makes a scheduled message', async () => {
    const client = await bound(g);
    const at = Date.now() + 3_600_000;
    const abs = await client.submit({ destination_addr: '5511999990130', schedule_delivery_time: absolute(at), short_message: Buffer.from('later') });
    const rel = await client.submit({ destination_addr: '5511999990131', schedule_delivery_time: '000001020000000R', short_message: Buffer.from('later too') });
    assert.equal(abs.command_status, 0);
    assert.equal(rel.command_status, 0);
    const a = await message(g, abs.message_id as string);
    const r = await message(g, rel.message_id as string);
    assert.equal(a?.status, 'SCHEDULED');
    assert.ok(Math.abs(Number(a?.schedule_at) - at) < 2000, 'absolute time, offset applied');
    assert.equal(r?.status, 'SCHEDULED');
    const expected = Date.now() + (24 + 2) * 3_600_000;
    assert.ok(Math.abs(Number(r?.schedule_at) - expected) < 60_000, 'one day and two hours from now');
  });

  test('a message still waiting when its validity period ends is taken out, refunded, and reported EXPIRED', async () => {
    const client = await bound(g);
    const resp = await client.submit({
      destination_addr: '5511999990132',
      registered_delivery: 1,
      schedule_delivery_time: '000000000002000R',
      validity_period: '000000000001000R',
      short_message: Buffer.from('never sent'),
    });
    assert.equal(resp.command_status, S.RINVEXPIRY, 'validity before the schedule: refused');
    const ok = await client.submit({
      destination_addr: '5511999990132',
      registered_delivery: 1,
      schedule_delivery_time: '000000000030000R',
      validity_period: '000000000001000R',
      short_message: Buffer.from('never sent'),
    });
    assert.equal(ok.command_status, S.RINVEXPIRY);
    const scheduled = await client.submit({
      destination_addr: '5511999990133',
      registered_delivery: 1,
      schedule_delivery_time: '000000000100000R',
      validity_period: '000000000101000R',
      short_message: Buffer.from('never sent'),
    });
    assert.equal(scheduled.command_status, 0);
    // Moved to its validity's end by hand (waiting an hour is not a test): what the sweep does then.
    await g.gw.core.db.kysely
      .updateTable('smpp_submits')
      .set({ valid_until: Date.now() })
      .where('message_id', '=', scheduled.message_id as string)
      .execute();
    await waitFor(async () => (await message(g, scheduled.message_id as string))?.status === 'CANCELLED', 'taken out');
    await waitFor(() => client.delivered.length > 0, 'its receipt');
    assert.match(bodyText(client.delivered[0] as never), /stat:EXPIRED/);
    assert.equal(client.delivered[0]?.message_state, 3);
  });
});

describe('throttling', () => {
  test('over the bind submit rate: ESME_RTHROTTLED', async () => {
    const g = await smppGateway({ credential: { submitsPerSecond: 1 } });
    try {
      const client = await bound(g);
      const [first, second] = await Promise.all([
        client.submit({ destination_addr: '5511999990140', short_message: Buffer.from('1') }),
        client.submit({ destination_addr: '5511999990141', short_message: Buffer.from('2') }),
      ]);
      assert.equal(first.command_status, 0);
      assert.equal(second.command_status, S.RTHROTTLED);
    } finally {
      await g.close();
    }
  });

  test('over the window of unanswered submits: ESME_RTHROTTLED; every submit answered ESME_ROK is in the outbox', async () => {
    const g = await smppGateway({ credential: { windowSize: 1 } });
    try {
      const client = await bound(g);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          client.submit({ destination_addr: `55119999902${String(i).padStart(2, '0')}`, short_message: Buffer.from(`n${i}`) }),
        ),
      );
      const statuses = new Set(answers.map((a) => a.command_status));
      assert.ok(statuses.has(S.RTHROTTLED), 'some were over the window');
      for (const a of answers.filter((x) => x.command_status === 0)) assert.ok(await message(g, a.message_id as string));
    } finally {
      await g.close();
    }
  });
});

describe('the outbox cannot write', () => {
  test('ESME_RSYSERR, and the customer can submit again once it can', async () => {
    const g = await smppGateway();
    const db = g.gw.core.db.kysely;
    try {
      const allow = await refuseWrites(db, 'messages', 'insert');
      const client = await bound(g);
      const refused = await client.submit({ destination_addr: '5511999990150', short_message: Buffer.from('x') });
      assert.equal(refused.command_status, S.RSYSERR);
      await allow();
      const ok = await client.submit({ destination_addr: '5511999990150', short_message: Buffer.from('x') });
      assert.equal(ok.command_status, 0);
    } finally {
      await g.close();
    }
  });
});

describe('retention', () => {
  test("the SMPP record of a message the retention deleted goes too; a living message's stays", async () => {
    const g = await smppGateway();
    try {
      const client = await bound(g);
      const kept = await client.submit({ destination_addr: '5511999990160', short_message: Buffer.from('kept') });
      const db = g.gw.core.db.kysely;
      const old = Date.now() - 40 * 86_400_000;
      await db.updateTable('smpp_submits').set({ created_at: old }).execute();
      await db
        .insertInto('smpp_submits')
        .values({
          message_id: 'deleted-by-retention',
          account_id: g.customer.accountId,
          system_id: g.systemId,
          registered_delivery: 1,
          source_addr: 'ACME',
          source_ton: 5,
          source_npi: 0,
          dest_addr: '5511999990161',
          dest_ton: 1,
          dest_npi: 1,
          valid_until: null,
          created_at: old,
        })
        .execute();
      const { dropOrphanSubmits } = await import('../../src/smpp-server/cleanup.ts');
      assert.equal(await dropOrphanSubmits(db, 30 * 86_400_000), 1);
      const left = await db.selectFrom('smpp_submits').select('message_id').execute();
      assert.deepEqual(
        left.map((r) => r.message_id),
        [kept.message_id],
      );
    } finally {
      await g.close();
    }
  });
});
