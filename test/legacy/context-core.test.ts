import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createCore } from '../../src/core.ts';
import { freshDatabase, startGateway } from '../helpers.ts';
import { legacy } from './legacy-helpers.ts';

/**
 * Automatic answers are the core's, not the legacy HTTP plugin's: a process
 * that serves no HTTP at all (a dispatching process) answers a reply by the
 * account's context rule.
 */
test('a core without any HTTP interface answers a reply by its context rule', async () => {
  const db = await freshDatabase();
  // Set up through the legacy interface, in a process that does not dispatch.
  const gw = await startGateway({}, { dispatch: false }, db);
  const alice = await gw.customer({ balance: 10 });
  const rule = {
    Name: 'Confirma',
    Message: 'Confirma? SIM ou NAO',
    PositiveContext: 'sim',
    PositiveResponse: 'Confirmado!',
    DefaultResponse: 'Responda SIM ou NAO.',
  };
  assert.equal((await legacy(gw, alice.key, 'POST', '/sendingcontextrules', rule)).status, 200);
  const phone = '11987651234';
  assert.equal((await legacy(gw, alice.key, 'POST', '/sendcontextmessage', { Receivers: phone, ContextRuleName: rule.Name })).status, 200);
  await gw.close();

  // A core alone: no app, no plugin.
  const config = loadConfig({ SIMULATOR_DELIVERY_MS: '20', DISPATCH_POLL_MS: '20', LOG_LEVEL: 'silent', ...db.env });
  const core = await createCore(config, pino({ level: 'silent' }), db.pgSchema ? { pgSchema: db.pgSchema } : {});
  try {
    const messages = () => core.db.kysely.selectFrom('messages').select(['receiver', 'content', 'status']).where('account_id', '=', alice.accountId).execute();
    const wait = async (what: string, ok: (rows: Awaited<ReturnType<typeof messages>>) => boolean) => {
      for (let i = 0; i < 300; i++) {
        const rows = await messages();
        if (ok(rows)) return rows;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await messages())}`);
    };
    await wait('the context message delivered', (rows) => rows.some((m) => m.status === 'DELIVERED'));
    await core.simulator.inbound(`55${phone}`, null, 'Sim');
    const rows = await wait('the automatic answer', (rows) => rows.some((m) => m.content === rule.PositiveResponse));
    assert.equal(rows.find((m) => m.content === rule.PositiveResponse)?.receiver, `55${phone}`);
  } finally {
    await core.close();
    await db.drop();
  }
});
