import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { type SmscSimulator, startSmscSimulator } from '../tools/smsc-sim/server.ts';
import { startSmppServer } from '../src/smpp-server/server.ts';
import { DIALECT } from './helpers.ts';
import { Client } from './smpp-server/helpers.ts';
import { OPERATOR, type PanelHarness, skipReason, startPanel, text, until } from './panel-browser.ts';

/*
 * The operator console in a real browser: the operator signs in with the
 * operator token, adds credits to an account, and watches an SMPP carrier
 * connection (to the SMSC simulator on loopback) go down when the SMSC
 * stops and come back up when it starts again, the page refreshing by
 * itself; gives an account SMPP credentials that a customer's SMPP client
 * then binds and sends with.
 */

const skip = skipReason();
const SMSC = { systemId: 'paneltest', password: 'secret1' };
let h: PanelHarness;
let page: Page;
let sim: SmscSimulator;
let port: number;
let dir: string;

before(async () => {
  if (skip) return;
  sim = await startSmscSimulator({ ...SMSC, receiptDelayMs: 5 });
  port = sim.port;
  dir = mkdtempSync(join(tmpdir(), 'gw-panel-carriers-'));
  const file = join(dir, 'carriers.json');
  writeFileSync(
    file,
    JSON.stringify({
      smpp: [
        {
          name: 'smsc',
          host: '127.0.0.1',
          port,
          systemId: SMSC.systemId,
          passwordEnv: 'PANEL_TEST_SMSC_PASSWORD',
          sourceAddr: 'ACME',
          reconnectMinMs: 50,
          reconnectMaxMs: 300,
        },
      ],
    }),
  );
  // The connection reads its password from the process environment.
  process.env.PANEL_TEST_SMSC_PASSWORD = SMSC.password;
  h = await startPanel({ GATEWAY_CARRIERS_FILE: file });
  page = await h.signIn(OPERATOR.email, OPERATOR.password);
});
after(async () => {
  if (skip) return;
  await h?.close();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function carrierRow(name: string) {
  return page.locator(`tr[data-carrier="${name}"]`);
}

test('the operator signs in with the operator token and adds credits to an account', { skip }, async () => {
  const customer = await h.gw.customer({ balance: 10 });
  await page.getByRole('heading', { level: 1, name: 'Carrier connections' }).waitFor();
  await page.getByRole('link', { name: 'Accounts' }).click();
  const row = page.locator('tr', { has: page.locator('td', { hasText: new RegExp(`^${customer.accountId}$`) }) });
  await row.getByRole('button', { name: 'Manage' }).click();
  assert.equal(await text(page.getByTestId('detail-balance')), '10.00');
  await page.locator('input[name=creditAmount]').fill('25.5');
  await page.getByRole('button', { name: 'Add credits' }).click();
  await page.getByRole('status').filter({ hasText: 'Credits added.' }).waitFor();
  assert.equal(await text(page.getByTestId('detail-balance')), '35.50');
  assert.equal((await h.gw.call(customer.key, 'GET', '/balance')).body.object.balance, 35.5);
});

test('an SMPP connection goes down when its SMSC stops and up when it starts again, without a reload', { skip }, async () => {
  await page.getByRole('link', { name: 'Carriers' }).click();
  await page.getByRole('heading', { level: 1, name: 'Carrier connections' }).waitFor();
  await carrierRow('smsc').and(page.locator('[data-ready="true"]')).waitFor();
  await carrierRow('simulator').waitFor();

  const url = page.url();
  await sim.close();
  await carrierRow('smsc').and(page.locator('[data-ready="false"]')).waitFor({ timeout: 30_000 });
  assert.match(await text(carrierRow('smsc')), /down/);
  await page.getByTestId('events').filter({ hasText: 'smsc went down' }).waitFor();

  sim = await startSmscSimulator({ ...SMSC, port, receiptDelayMs: 5 });
  await carrierRow('smsc').and(page.locator('[data-ready="true"]')).waitFor({ timeout: 30_000 });
  await page.getByTestId('events').filter({ hasText: 'smsc is up again' }).waitFor();
  // Refreshed by polling: the same page, never reloaded.
  assert.equal(page.url(), url);
  if (DIALECT === 'sqlite') await page.screenshot({ path: fileURLToPath(new URL('../docs/panel-operator.png', import.meta.url)), fullPage: true });
  const checks = await until(
    async () => (await h.gw.admin('GET', '/admin/carriers')).body.find((c: { name: string }) => c.name === 'smsc')?.ready,
    (ready) => ready === true,
    'smsc ready in the API too',
  );
  assert.equal(checks, true);
});

test("a connection's submit rate, from the counters of GET /admin/carriers (no /metrics)", { skip }, async () => {
  const customer = await h.gw.customer({ balance: 1000 });
  await page.getByRole('link', { name: 'Carriers' }).click();
  const rate = carrierRow('simulator').locator('td').last();
  await until(
    () => text(rate),
    (v) => /\/s$/.test(v),
    'a rate after two refreshes',
  );
  // Messages sent while the page refreshes: some refresh sees the accepted submits grow.
  let n = 0;
  await until(
    async () => {
      const receivers = [0, 1, 2].map(() => `5511977${String(n++).padStart(6, '0')}`);
      assert.equal((await h.gw.call(customer.key, 'POST', '/messages/sms/send', { receivers, message: 'rate' })).status, 200);
      return text(rate);
    },
    (v) => /[1-9]/.test(v) && /\/s$/.test(v),
    'a submit rate above zero',
    60_000,
  );
  assert.ok(((await h.gw.admin('GET', '/admin/carriers')).body as any[]).find((c) => c.name === 'simulator').submitted.accepted >= 3);
});

test('the operator creates a reseller account with a panel user; the reseller creates a child user and moves credits to it', { skip }, async () => {
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.locator('input[name=accountName]').fill('Revenda Sul');
  await page.getByRole('combobox', { name: 'Role' }).selectOption('RESELLER');
  await page.getByLabel('Opening balance').fill('200');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /Account Revenda Sul \(#\d+\) created\./ })
    .waitFor();
  // The new account is open for managing: grant it the simulator route and give it a panel user.
  await page.getByRole('combobox', { name: 'Grant a route' }).selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Grant', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Route granted.' }).waitFor();
  await page.locator('input[name=userEmail]').fill('revenda@example.com');
  await page.locator('input[name=userPassword]').fill('revenda-password-1');
  await page.getByRole('button', { name: 'Add panel user' }).click();
  await page.getByRole('status').filter({ hasText: 'Panel user created.' }).waitFor();
  await page.locator('li', { hasText: 'revenda@example.com' }).waitFor();

  const reseller = await h.signIn('revenda@example.com', 'revenda-password-1');
  await reseller.getByRole('link', { name: 'Child users' }).click();
  const fields: Record<string, string> = {
    fullName: 'Loja Exemplo Ltda',
    email: 'contato@lojaexemplo.com.br',
    phoneNumber: '11987654321',
    document: '11.222.333/0001-81',
    limit: '50',
    ownerCredentialFullName: 'Maria Exemplo',
    ownerCredentialEmail: 'maria@lojaexemplo.com.br',
    ownerCredentialPhoneNumber: '11987654322',
    password: 'senha-da-loja-1',
  };
  for (const [name, value] of Object.entries(fields)) await reseller.locator(`input[name=${name}]`).fill(value);
  await reseller.getByRole('button', { name: 'Create child user' }).click();
  const child = reseller.locator('tr[data-child]', { hasText: 'Loja Exemplo Ltda' });
  await child.waitFor();
  await child.getByLabel('Amount (negative: take back)').fill('25');
  await child.getByRole('button', { name: 'Move' }).click();
  await reseller.getByRole('status').filter({ hasText: 'Moved 25' }).waitFor();

  // The reseller's balance: 200 - 50 - 25; the child signs in to its own panel with 75.
  const accounts = (await h.gw.admin('GET', '/admin/accounts?name=Revenda')).body.records;
  assert.equal(accounts[0].balance, 125);
  const childPage = await h.signIn('contato@lojaexemplo.com.br', 'senha-da-loja-1');
  assert.equal(await text(childPage.getByTestId('balance')), '75.00');
  // A child account has no child users of its own.
  assert.equal(await childPage.getByRole('link', { name: 'Child users' }).count(), 0);
});

test('an operator user added in the console signs in to the console with their own password', { skip }, async () => {
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.locator('input[name=operatorEmail]').fill('ops@example.com');
  await page.locator('input[name=operatorPassword]').fill('ops-password-123');
  await page.getByRole('button', { name: 'Add operator user' }).click();
  await page.locator('li', { hasText: 'ops@example.com' }).waitFor();
  const ops = await h.signIn('ops@example.com', 'ops-password-123');
  await ops.getByRole('heading', { level: 1, name: 'Carrier connections' }).waitFor();
  assert.equal(await text(ops.locator('a.brand')), 'Operator console');
});

test('the operator gives an account SMPP credentials in the console; the customer binds with the password shown once and sends', { skip }, async () => {
  const customer = await h.gw.customer({ balance: 10 });
  const server = await startSmppServer(h.gw.core, { port: 0, host: '127.0.0.1' });
  let client: Client | null = null;
  try {
    // Through another page: the list loads again with the account just made.
    await page.getByRole('link', { name: 'Carriers' }).click();
    await page.getByRole('link', { name: 'Accounts' }).click();
    const row = page.locator('tr', { has: page.locator('td', { hasText: new RegExp(`^${customer.accountId}$`) }) });
    await row.getByRole('button', { name: 'Manage' }).click();
    const section = page.getByTestId('smpp-credentials');
    await section.locator('input[name=smppSystemId]').fill('panel01');
    await section.locator('select[name=smppRoute]').selectOption(String(customer.routeId));
    await section.getByRole('button', { name: 'Give SMPP credentials' }).click();
    await page.getByRole('status').filter({ hasText: 'SMPP credentials panel01 created.' }).waitFor();
    const password = await text(page.getByTestId('smpp-password'));
    assert.equal(password.length, 8, 'a generated password of 8 characters');
    await section.locator('tr[data-system-id="panel01"]').waitFor();

    // The customer's SMPP client binds with what the console showed, and its submit is the account's send.
    client = await Client.connect(server.port);
    assert.equal((await client.bind('transceiver', 'panel01', password)).command_status, 0);
    const resp = await client.submit({ destination_addr: '5511999990300', short_message: Buffer.from('from the console') });
    assert.equal(resp.command_status, 0);
    const sent = await h.gw.call(customer.key, 'GET', '/reports/messages/sent');
    assert.ok(sent.body.object.some((m: { id: string }) => m.id === resp.message_id));

    // Removed in the console: no bind any more.
    await section.locator('tr[data-system-id="panel01"]').getByRole('button', { name: 'remove' }).click();
    await page.getByRole('status').filter({ hasText: 'SMPP credentials panel01 removed.' }).waitFor();
    client.close();
    client = await Client.connect(server.port);
    assert.notEqual((await client.bind('transceiver', 'panel01', password)).command_status, 0);
  } finally {
    client?.close();
    await server.close();
  }
});
