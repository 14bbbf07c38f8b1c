import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { hashing } from '../../src/childusers/password.ts';
import { Client, bound, smppGateway, waitFor, type SmppGateway } from './helpers.ts';

const ESME_RINVBNDSTS = 0x04;
const ESME_RALYBND = 0x05;
const ESME_RINVCMDID = 0x03;
const ESME_RBINDFAIL = 0x0d;

describe('binds and session commands', () => {
  let g: SmppGateway;
  before(async () => {
    g = await smppGateway({ credential: { maxBinds: 2 }, server: { bindFailureLimit: 3, bindBlockMs: 60_000 } });
  });
  afterEach(() => g.closeClients());
  after(async () => {
    await g.close();
  });

  for (const type of ['transmitter', 'receiver', 'transceiver'] as const) {
    test(`bind_${type}, enquire_link and unbind`, async () => {
      const client = await Client.connect(g.server.port);
      g.clients.push(client);
      const resp = await client.bind(type, g.systemId, g.password);
      assert.equal(resp.command, `bind_${type}_resp`);
      assert.equal(resp.command_status, 0);
      assert.equal(resp.system_id, 'GATEWAY');
      assert.equal((await client.request('enquire_link')).command_status, 0);
      const again = await client.bind(type, g.systemId, g.password);
      assert.equal(again.command_status, ESME_RALYBND, 'a second bind on a bound session');
      const unbind = await client.request('unbind');
      assert.equal(unbind.command, 'unbind_resp');
      assert.equal(unbind.command_status, 0);
    });
  }

  test('submit_sm before a bind and on a receiver bind: ESME_RINVBNDSTS', async () => {
    const client = await Client.connect(g.server.port);
    g.clients.push(client);
    assert.equal((await client.submit({ destination_addr: '5511999990100', short_message: Buffer.from('x') })).command_status, ESME_RINVBNDSTS);
    await client.bind('receiver', g.systemId, g.password);
    assert.equal((await client.submit({ destination_addr: '5511999990100', short_message: Buffer.from('x') })).command_status, ESME_RINVBNDSTS);
    assert.equal((await client.request('query_sm', { message_id: 'x' })).command_status, ESME_RINVBNDSTS);
  });

  test('an unknown command gets generic_nack ESME_RINVCMDID; an SMPP command not offered gets its response with ESME_RINVCMDID', async () => {
    const client = await bound(g);
    const nack = new Promise<{ command: string; status: number; seq: number }>((resolve) =>
      client.session.once('pdu', (pdu) => resolve({ command: pdu.command, status: pdu.command_status, seq: pdu.sequence_number })),
    );
    await client.raw(0x000000ff, 4242);
    assert.deepEqual(await nack, { command: 'generic_nack', status: ESME_RINVCMDID, seq: 4242 });
    const multi = await client.request('replace_sm', { message_id: 'x', short_message: Buffer.from('y') });
    assert.equal(multi.command, 'replace_sm_resp');
    assert.equal(multi.command_status, ESME_RINVCMDID);
  });

  test('more binds than the credential allows: ESME_RBINDFAIL', async () => {
    await bound(g, 'transmitter');
    await bound(g, 'receiver');
    const third = await Client.connect(g.server.port);
    g.clients.push(third);
    assert.equal((await third.bind('transceiver', g.systemId, g.password)).command_status, ESME_RBINDFAIL);
    g.closeClients();
    // Once one closes, a bind is accepted again.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const next = await Client.connect(g.server.port);
      g.clients.push(next);
      if ((await next.bind('transceiver', g.systemId, g.password)).command_status === 0) break;
      assert.ok(Date.now() < deadline, 'a bind is accepted after the others closed');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  test('a wrong password or unknown system_id: ESME_RBINDFAIL; repeated failures from an address: binds from it refused for a while, even right ones', async () => {
    const client = await Client.connect(g.server.port);
    g.clients.push(client);
    assert.equal((await client.bind('transceiver', g.systemId, 'wrong')).command_status, ESME_RBINDFAIL);
    assert.equal((await client.bind('transceiver', 'nobody', 'wrong')).command_status, ESME_RBINDFAIL);
    assert.equal((await client.bind('transceiver', g.systemId, 'wrong2')).command_status, ESME_RBINDFAIL);
    const right = await Client.connect(g.server.port);
    g.clients.push(right);
    assert.equal((await right.bind('transceiver', g.systemId, g.password)).command_status, ESME_RBINDFAIL, 'refused while the address is blocked');
  });
});

describe('binds in a flood', () => {
  test('one address has at most 4 binds checked at once, the rest refused without a hash; a customer on another address binds meanwhile', async () => {
    // Failures never block here: the limit on binds being checked is what is looked at.
    const g = await smppGateway({ server: { bindFailureLimit: 1_000 } });
    try {
      let most = 0;
      const watch = setInterval(() => {
        most = Math.max(most, hashing.activeCount + hashing.pendingCount);
      }, 1);
      const flood = await Promise.all(Array.from({ length: 40 }, () => Client.connect(g.server.port)));
      g.clients.push(...flood);
      const answers = await Promise.all(flood.map((c) => c.bind('transceiver', 'nobody', 'wrong')));
      const other = await Client.connect(g.server.port, false, '127.0.0.2');
      g.clients.push(other);
      assert.equal((await other.bind('transceiver', g.systemId, g.password)).command_status, 0, 'another address binds');
      clearInterval(watch);
      assert.deepEqual(new Set(answers.map((a) => a.command_status)), new Set([ESME_RBINDFAIL]));
      assert.ok(most <= 4, `${most} passwords were being hashed or waiting at once`);
    } finally {
      await g.close();
    }
  });

  test('an address gets bindsPerAddressPerMinute bind attempts a minute, right ones included; another address is not held by it', async () => {
    const g = await smppGateway({ credential: { maxBinds: 20 }, server: { bindsPerAddressPerMinute: 5 } });
    try {
      for (let i = 0; i < 5; i++) await bound(g);
      const sixth = await Client.connect(g.server.port);
      g.clients.push(sixth);
      assert.equal((await sixth.bind('transceiver', g.systemId, g.password)).command_status, ESME_RBINDFAIL, 'the sixth in a minute');
      const other = await Client.connect(g.server.port, false, '127.0.0.2');
      g.clients.push(other);
      assert.equal((await other.bind('transceiver', g.systemId, g.password)).command_status, 0);
    } finally {
      await g.close();
    }
  });
});

describe('connections that never bind', () => {
  test('are closed after the bind timeout; a bound one stays open past it', async () => {
    const g = await smppGateway({ server: { bindTimeoutMs: 150 } });
    try {
      const idle = await Client.connect(g.server.port);
      g.clients.push(idle);
      const refused = await Client.connect(g.server.port);
      g.clients.push(refused);
      assert.equal((await refused.bind('transceiver', g.systemId, 'wrong-pw')).command_status, ESME_RBINDFAIL);
      const client = await bound(g);
      await waitFor(() => idle.closed && refused.closed, 'the unbound connections to close');
      assert.equal(client.closed, false, 'the bound connection stays');
      assert.equal((await client.submit({ destination_addr: '5511999990190', short_message: Buffer.from('x') })).command_status, 0);
    } finally {
      await g.close();
    }
  });
});

describe('binds that go quiet', () => {
  test('a bind that sends nothing for the inactivity time is unbound and closed; one that keeps talking stays', async () => {
    const g = await smppGateway({ server: { inactivityMs: 1000 }, credential: { maxBinds: 2 } });
    let keep: NodeJS.Timeout | undefined;
    try {
      const talking = await bound(g);
      // An enquire_link every tenth of the inactivity time keeps a bind open, as clients do.
      keep = setInterval(() => void talking.request('enquire_link').catch(() => undefined), 100);
      const silent = await bound(g);
      let unbinds = 0;
      silent.session.on('unbind', () => unbinds++);
      await waitFor(() => silent.closed, 'the silent bind to close');
      assert.equal(unbinds, 1, 'told with an unbind first');
      assert.equal(talking.closed, false, 'the bind that kept talking stays');
      assert.equal((await talking.submit({ destination_addr: '5511999990191', short_message: Buffer.from('x') })).command_status, 0);
      // The closed one's place is free again.
      assert.equal((await bound(g)).closed, false);
    } finally {
      clearInterval(keep);
      await g.close();
    }
  });
});

describe('IP allow-list', () => {
  test('a bind from an address outside the allow-list is refused', async () => {
    const g = await smppGateway({ credential: { allowedIps: ['203.0.113.0/24'] } });
    try {
      const client = await Client.connect(g.server.port);
      g.clients.push(client);
      assert.equal((await client.bind('transceiver', g.systemId, g.password)).command_status, ESME_RBINDFAIL);
      const put = await g.gw.admin('PUT', `/admin/smpp-credentials/${g.systemId}`, { allowedIps: ['127.0.0.0/8', '::1'] });
      assert.equal(put.status, 200);
      assert.deepEqual(put.body.allowedIps, ['127.0.0.0/8', '::1']);
      assert.equal((await client.bind('transceiver', g.systemId, g.password)).command_status, 0);
    } finally {
      await g.close();
    }
  });
});

describe('deactivated accounts and removed credentials', () => {
  test('an open bind is unbound and closed; new binds are refused; reactivated, it binds again', async () => {
    const g = await smppGateway();
    try {
      const client = await bound(g);
      assert.equal((await g.gw.admin('POST', `/admin/accounts/${g.customer.accountId}/deactivate`)).status, 200);
      await waitFor(() => client.closed, 'the bind closed');
      const again = await Client.connect(g.server.port);
      g.clients.push(again);
      assert.equal((await again.bind('transceiver', g.systemId, g.password)).command_status, ESME_RBINDFAIL);
      assert.equal((await g.gw.admin('POST', `/admin/accounts/${g.customer.accountId}/activate`)).status, 200);
      assert.equal((await again.bind('transceiver', g.systemId, g.password)).command_status, 0);
      assert.equal((await g.gw.admin('DELETE', `/admin/smpp-credentials/${g.systemId}`)).status, 204);
      await waitFor(() => again.closed, 'the bind of the removed credential closed');
    } finally {
      await g.close();
    }
  });
});
