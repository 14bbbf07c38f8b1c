import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type Customer } from '../helpers.ts';
import { legacy } from './legacy-helpers.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';

let gw: TestGateway;
let alice: Customer;

before(async () => {
  gw = await startGateway({ LEGACY_LANGUAGE: 'en' });
  alice = await gw.customer();
});
after(() => gw.close());

test('Message texts in English with LEGACY_LANGUAGE=en; statuses and envelope unchanged', async () => {
  const bad = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '', Content: 'x' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.Message, /^Give at least one receiver/);
  const ok = await legacy(gw, alice.key, 'POST', '/send', { Receivers: '11999998888', Content: 'x' });
  assert.equal(ok.status, 200);
  assert.match(ok.body.Message, /^Message accepted/);
  const missing = await legacy(gw, alice.key, 'GET', '/nothing');
  assert.equal(missing.status, 404);
  assert.match(missing.body.Message, /There is no operation/);
  const token = await legacy(gw, alice.key, 'PUT', '/tokenmanager', { TokenCode: '000000' });
  assert.equal(token.status, 400);
  assert.equal(token.body.Message, 'Invalid code.');
});

test('Brazilian Portuguese is the default; other languages are refused at start', () => {
  assert.equal(loadConfig({}).LEGACY_LANGUAGE, 'pt-BR');
  assert.throws(() => loadConfig({ LEGACY_LANGUAGE: 'fr' }), ConfigError);
});
