import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { freshDatabase, startGateway, type TestGateway } from '../helpers.ts';
import { startSmppServer } from '../../src/smpp-server/server.ts';
import { Client } from './helpers.ts';

describe('SMPP credentials: operator API', () => {
  let gw: TestGateway;
  let account: number;
  let route: number;
  before(async () => {
    gw = await startGateway();
    const c = await gw.customer();
    account = c.accountId;
    route = c.routeId;
  });
  after(async () => {
    await gw.close();
  });

  test('create (password generated, 8 characters, shown once), list, change, remove', async () => {
    const created = await gw.admin('POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'acme01', routeId: route, submitsPerSecond: 50 });
    assert.equal(created.status, 201);
    assert.match(created.body.password, /^[!-~]{8}$/);
    assert.deepEqual(
      { ...created.body, password: undefined, createdAt: undefined },
      {
        systemId: 'acme01',
        accountId: account,
        routeId: route,
        allowedIps: null,
        windowSize: 100,
        submitsPerSecond: 50,
        maxBinds: 4,
        password: undefined,
        createdAt: undefined,
      },
    );
    const list = await gw.admin('GET', `/admin/accounts/${account}/smpp-credentials`);
    assert.equal(list.status, 200);
    assert.equal(list.body.records.length, 1);
    assert.equal(list.body.records[0].password, undefined, 'never the password');
    const hash = await gw.core.db.kysely.selectFrom('smpp_accounts').select('password_hash').where('system_id', '=', 'acme01').executeTakeFirstOrThrow();
    assert.match(hash.password_hash, /^\$scrypt\$/);

    const changed = await gw.admin('PUT', '/admin/smpp-credentials/acme01', { password: 'n3wpass', windowSize: 10, maxBinds: 1, allowedIps: ['10.0.0.0/8'] });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.windowSize, 10);
    assert.deepEqual(changed.body.allowedIps, ['10.0.0.0/8']);
    assert.equal((await gw.admin('PUT', '/admin/smpp-credentials/acme01', { allowedIps: null })).body.allowedIps, null);

    const server = await startSmppServer(gw.core, { port: 0, host: '127.0.0.1' });
    try {
      const client = await Client.connect(server.port);
      assert.equal((await client.bind('transceiver', 'acme01', 'n3wpass')).command_status, 0, 'the new password binds');
      client.close();
      assert.equal((await gw.admin('DELETE', '/admin/smpp-credentials/acme01')).status, 204);
      const after = await Client.connect(server.port);
      assert.equal((await after.bind('transceiver', 'acme01', 'n3wpass')).command_status, 0x0d, 'removed: refused');
      after.close();
    } finally {
      await server.close();
    }
    assert.equal((await gw.admin('DELETE', '/admin/smpp-credentials/acme01')).status, 404);
  });

  test('refusals name what to fix', async () => {
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'longpass', password: '123456789', routeId: route }, 400, /at most 8 characters/],
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'a-very-long-system-id', routeId: route }, 400, /at most 15 characters/],
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'nospace', password: 'a b', routeId: route }, 400, /printable ASCII/],
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'noroute' }, 400, /routeId/],
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'badroute', routeId: 999 }, 400, /not granted/],
      ['POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'badip', routeId: route, allowedIps: ['300.1.1.1'] }, 400, /not an IP address/],
      ['POST', '/admin/accounts/999/smpp-credentials', { systemId: 'nobody', routeId: route }, 404, /Account 999/],
      ['PUT', '/admin/smpp-credentials/nobody', { windowSize: 5 }, 404, /nobody/],
      ['PUT', '/admin/smpp-credentials/nobody', { windowSize: 0 }, 400, /windowSize/],
      ['GET', '/admin/accounts/999/smpp-deliveries', undefined, 404, /Account 999/],
    ];
    for (const [method, url, body, status, message] of cases) {
      const res = await gw.admin(method as 'POST', url, body);
      assert.equal(res.status, status, `${method} ${url} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, message);
    }
    assert.equal((await gw.admin('POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'twice', routeId: route })).status, 201);
    const dup = await gw.admin('POST', `/admin/accounts/${account}/smpp-credentials`, { systemId: 'twice', routeId: route });
    assert.equal(dup.status, 409);
    assert.match(dup.body.error, /already exists/);
  });
});

describe('SMPP credentials: CLI', () => {
  test('smpp-credential add, list, remove', async () => {
    const db = await freshDatabase();
    try {
      const env = { ...process.env, ...db.env, GATEWAY_DEMO: 'false' };
      const cli = (...args: string[]) => {
        const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env, encoding: 'utf8' });
        return { code: res.status, out: res.stdout, err: res.stderr };
      };
      const account = JSON.parse(cli('account', 'create', '--name', 'Acme', '--balance', '10').out);
      const route = JSON.parse(cli('route', 'create', '--name', 'SMS', '--price', '0.05', '--reply-price', '0').out);
      assert.equal(cli('route', 'grant', '--account', String(account.id), '--route', String(route.id)).code, 0);
      const added = cli(
        'smpp-credential',
        'add',
        '--account',
        String(account.id),
        '--system-id',
        'acme',
        '--password',
        'secret12',
        '--route',
        String(route.id),
        '--rate',
        '20',
      );
      assert.equal(added.code, 0, added.err);
      assert.equal(JSON.parse(added.out).submitsPerSecond, 20);
      assert.equal(JSON.parse(added.out).password, 'secret12');
      const tooLong = cli(
        'smpp-credential',
        'add',
        '--account',
        String(account.id),
        '--system-id',
        'acme2',
        '--password',
        'secret123',
        '--route',
        String(route.id),
      );
      assert.equal(tooLong.code, 65);
      assert.match(tooLong.err, /at most 8 characters/);
      const list = cli('smpp-credential', 'list', '--account', String(account.id), '--json');
      assert.equal(list.code, 0, list.err);
      assert.equal(JSON.parse(list.out).records[0].systemId, 'acme');
      assert.match(cli('smpp-credential', 'list', '--account', String(account.id)).out, /SYSTEM ID/);
      assert.equal(cli('smpp-credential', 'remove', '--system-id', 'acme').code, 0);
      assert.equal(JSON.parse(cli('smpp-credential', 'list', '--account', String(account.id), '--json').out).records.length, 0);
    } finally {
      await db.drop();
    }
  });
});
