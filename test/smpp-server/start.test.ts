import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startConfiguredSmppServer } from '../../src/smpp-server/start.ts';
import { StartError } from '../../src/start-errors.ts';
import { startGateway } from '../helpers.ts';
import { Client } from './helpers.ts';

test('SMPP_PORT: a server in processes of role all and api, none in a dispatch process; TLS needs both files', async () => {
  const api = await startGateway({ GATEWAY_ROLE: 'api', SMPP_PORT: '0' });
  try {
    const server = await startConfiguredSmppServer(api.core);
    assert.ok(server, 'an api process serves SMPP');
    const client = await Client.connect(server.port);
    assert.equal((await client.request('enquire_link')).command_status, 0);
    client.close();
    await server.close();
    assert.equal(await startConfiguredSmppServer({ ...api.core, role: 'dispatch' }), null, 'a dispatch process does not');
    assert.equal(await startConfiguredSmppServer({ ...api.core, config: { ...api.core.config, SMPP_PORT: undefined } }), null, 'unset: off');
    await assert.rejects(
      startConfiguredSmppServer({ ...api.core, config: { ...api.core.config, SMPP_TLS_CERT: '/nonexistent/cert.pem' } }),
      (err: unknown) => err instanceof StartError && /SMPP_TLS_CERT and SMPP_TLS_KEY/.test(err.message),
    );
    await assert.rejects(
      startConfiguredSmppServer({ ...api.core, config: { ...api.core.config, SMPP_TLS_CERT: '/nonexistent/cert.pem', SMPP_TLS_KEY: '/nonexistent/key.pem' } }),
      (err: unknown) => err instanceof StartError && /SMPP_TLS_CERT=\/nonexistent\/cert.pem: cannot be read/.test(err.message),
    );
  } finally {
    await api.close();
  }
});
