import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { DIALECT } from './helpers.ts';
import { type PanelHarness, skipReason, startPanel, text, until } from './panel-browser.ts';

/*
 * The account panel in a real browser (docs/panel.md, "Using the panel"):
 * a customer's panel user signs in, sends an SMS from the form and sees it
 * DELIVERED in the report, creates and revokes an API key (and the API
 * refuses the revoked key), imports a CSV contact group and sends to it,
 * sets an automatic reply that answers an inbound message, and reads a
 * short link's click counters.
 */

const skip = skipReason();
let h: PanelHarness;
let page: Page;
let user: Awaited<ReturnType<PanelHarness['accountUser']>>;

before(async () => {
  if (skip) return;
  h = await startPanel();
  user = await h.accountUser('ana@example.com', { balance: 100 });
  page = await h.signIn(user.email, user.password);
});
after(async () => {
  if (!skip) await h.close();
});

async function open(path: string, heading: RegExp): Promise<void> {
  await page.goto(`/panel/${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The sent report's row for a receiver, once it shows `status`. */
async function waitForStatus(receiver: string, status: string): Promise<void> {
  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).first().click();
      const row = page.locator('tbody tr', { hasText: receiver }).first();
      return (await row.count()) ? await text(row) : '';
    },
    (text) => text.includes(status),
    `${receiver} ${status} in the sent report`,
  );
}

test('sign in, send an SMS from the form and see it DELIVERED in the report', { skip }, async () => {
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  assert.equal(await text(page.getByTestId('balance')), '100.00');

  await open('send', /Send messages/);
  await page.locator('textarea[name=numbers]').fill('5511988881234');
  const sms = 'Olá! Seu pedido saiu para entrega.';
  await page.locator('textarea[name=message]').fill(sms);
  // The live count: 34 characters; "á" is not in the GSM 7-bit alphabet, so UCS-2 (70 a part): one part, one credit.
  const counter = await text(page.getByTestId('counter'));
  assert.match(counter, /34 characters/);
  assert.match(counter, /1 part\(s\)/);
  assert.match(counter, /1 recipient\(s\) · about 0\.10 credits/);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Accepted 1 message(s)' }).waitFor();

  await page.getByRole('link', { name: 'see it in the report' }).click();
  await page.getByRole('heading', { level: 1, name: 'Reports' }).waitFor();
  await waitForStatus('5511988881234', 'DELIVERED');
  const row = await text(page.locator('tbody tr', { hasText: '5511988881234' }));
  assert.match(row, /Seu pedido saiu para entrega/);

  // The CSV export link carries the filters and answers the same message.
  const href = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
  assert.ok(href?.startsWith('/panel/api/export/sent.csv'), href ?? '');
  const csv = await page.evaluate(async (url) => (await fetch(url)).text(), href as string);
  assert.match(csv, /5511988881234/);
});

test('a key created in the panel works until it is revoked there; then the API refuses it', { skip }, async () => {
  await open('developer', /Developer/);
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await text(page.getByTestId('new-key'))).trim();
  assert.ok(key.length >= 20, key);
  // The curl example shows the whole key while it is on screen, and the gateway's own address.
  assert.ok((await text(page.getByTestId('curl'))).includes(key));
  assert.equal(await text(page.getByTestId('gateway-base')), h.base);

  const balance = () => fetch(`${h.base}/balance`, { headers: { 'x-api-key': key } });
  assert.equal((await balance()).status, 200);

  const row = page.locator('tbody tr', { hasText: key.slice(-4) }).filter({ hasText: 'active' });
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Revoke' }).click();
  await page
    .locator('tbody tr', { hasText: key.slice(-4) })
    .filter({ hasText: 'revoked' })
    .waitFor();
  await until(
    async () => (await balance()).status,
    (s) => s === 401,
    'the revoked key refused',
  );
});

test("a key's address allow-list set in the panel: refused from elsewhere, accepted once the address is listed", { skip }, async () => {
  await open('developer', /Developer/);
  await page.locator('input[name=allowedIps]').fill('10.0.0.0/8');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await text(page.getByTestId('new-key'))).trim();
  await page.locator('tbody tr', { hasText: '10.0.0.0/8' }).waitFor();
  const row = page.locator(`tr[data-key-id="${await page.locator('tbody tr', { hasText: '10.0.0.0/8' }).getAttribute('data-key-id')}"]`);
  const balance = () => fetch(`${h.base}/balance`, { headers: { 'x-api-key': key } });
  assert.equal((await balance()).status, 401, 'this test calls from 127.0.0.1');

  await row.getByRole('button', { name: 'Addresses' }).click();
  await row.getByLabel('Allowed addresses').fill('10.0.0.0/8, 127.0.0.1');
  await row.getByRole('button', { name: 'Save' }).click();
  await page.locator('tbody tr', { hasText: '10.0.0.0/8, 127.0.0.1' }).waitFor();
  await until(
    async () => (await balance()).status,
    (s) => s === 200,
    'the key accepted from 127.0.0.1',
  );
});

test('a CSV file imported as a contact group, then an SMS sent to the group', { skip }, async () => {
  await open('contacts', /Contacts/);
  await page.locator('input[name=groupName]').fill('Clientes');
  const csv = 'name,phone\nAna,11977771234\n"Souza, Bia",(21) 97777-5678\nCarlos,31977779999\n';
  await page.locator('input[name=csv]').setInputFiles({ name: 'clientes.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByRole('button', { name: 'Create and import' }).click();
  await page.getByRole('status').filter({ hasText: 'Group "Clientes": 3 number(s) added, 0 refused.' }).waitFor();
  assert.equal(await page.locator('progress').getAttribute('value'), '3');
  await page.locator('tr[data-group="Clientes"]', { hasText: '3' }).waitFor();

  await open('send', /Send messages/);
  await page.getByLabel('Clientes (3)').check();
  await page.locator('textarea[name=message]').fill('Promoção de hoje');
  assert.match(await text(page.getByTestId('counter')), /3 recipient\(s\)/);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Accepted 3 message(s)' }).waitFor();

  await page.getByRole('link', { name: 'see it in the report' }).click();
  for (const receiver of ['5511977771234', '5521977775678', '5531977779999']) await waitForStatus(receiver, 'DELIVERED');
});

test('an automatic reply answers an inbound message', { skip }, async () => {
  await open('rules', /Automatic replies/);
  await page.locator('input[name=ruleName]').fill('Consulta');
  await page.locator('textarea[name=ruleMessage]').fill('Confirma a consulta de amanhã? Responda SIM ou NÃO');
  await page.locator('input[name=positiveContext]').fill('sim,confirmo');
  await page.locator('input[name=positiveResponse]').fill('Consulta confirmada!');
  await page.locator('input[name=negativeContext]').fill('nao,cancelar');
  await page.locator('input[name=negativeResponse]').fill('Consulta cancelada.');
  await page.getByRole('button', { name: 'Save' }).click();
  const rule = page.locator('tr[data-rule="Consulta"]');
  await rule.waitFor();
  await rule.getByLabel('Send to').fill('11966664321');
  await rule.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('status').filter({ hasText: '1 destinat' }).waitFor();

  // The phone answers "Sim" (as the simulator carrier would receive it).
  await until(
    async () => (await h.gw.call(user.key, 'GET', '/reports/messages/sent?receiver=5511966664321')).body.object?.[0]?.status,
    (s) => s === 'DELIVERED',
    'the rule message delivered',
  );
  const inbound = await h.gw.admin('POST', '/admin/simulator/inbound', { from: '5511966664321', text: 'Sim, confirmo' });
  assert.ok(inbound.status < 300, JSON.stringify(inbound.body));

  await open('reports', /Reports/);
  await page.locator('input[name=receiver]').fill('5511966664321');
  await page.getByRole('button', { name: 'Search' }).click();
  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).first().click();
      return text(page.locator('tbody'));
    },
    (text) => text.includes('Consulta confirmada!'),
    'the automatic answer in the sent report',
  );
  await page.getByRole('tab', { name: 'Received' }).click();
  await page.locator('tbody tr', { hasText: 'Sim, confirmo' }).waitFor();
});

test("a short link's counters after a click", { skip }, async () => {
  await open('links', /Short links/);
  await page.locator('input[name=destinationUrl]').fill('https://example.com/promo?utm_source=sms');
  await page.getByRole('button', { name: 'Create' }).click();
  const row = page.locator('tr[data-link]').first();
  await row.waitFor();
  const code = await row.getAttribute('data-link');
  assert.equal(await text(row.getByTestId('clicks')), '0');

  // A person's click (a browser's user agent): the redirect, counted.
  const click = await fetch(`${h.base}/s/${code}`, {
    redirect: 'manual',
    headers: { 'user-agent': 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36' },
  });
  assert.equal(click.status, 302);
  assert.equal(click.headers.get('location'), 'https://example.com/promo?utm_source=sms');

  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return [await text(row.getByTestId('clicks')), await text(row.getByTestId('humans'))];
    },
    ([clicks, humans]) => clicks === '1' && humans === '1',
    'one click counted',
  );
});

test('an RCS text sent from the RCS form on an RCS route', { skip }, async () => {
  const route = await h.gw.admin('POST', '/admin/routes', {
    displayName: 'RCS Simulator',
    productName: 'RCS',
    productId: 2,
    farePrice: '0.08',
    replyFarePrice: '0',
    channel: 'RCS',
    connector: 'simulator',
  });
  await h.gw.admin('POST', `/admin/accounts/${user.accountId}/routes`, { routeId: route.body.id });
  await open('send', /Send messages/);
  await page.getByRole('tab', { name: 'RCS (text)' }).click();
  // Only the RCS route is offered here.
  assert.deepEqual(await page.locator('select[name=route] option').allTextContents(), [`${route.body.id} · RCS Simulator (0.08)`]);
  await page.locator('textarea[name=numbers]').fill('5511922221234');
  await page.locator('textarea[name=message]').fill('Seu pedido chegou! 📦');
  assert.match(await text(page.getByTestId('counter')), /1 recipient\(s\) · about 0\.08 credits/);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Accepted 1 message(s)' }).waitFor();
  await page.getByRole('link', { name: 'see it in the report' }).click();
  await waitForStatus('5511922221234', 'DELIVERED');
  assert.match(await text(page.locator('tbody tr', { hasText: '5511922221234' })), /RCS Simulator/);
});

test('a number on the blocklist gets nothing: the send records it BLOCKED', { skip }, async () => {
  await open('contacts', /Contacts/);
  await page.locator('input[name=blockPhone]').fill('11911112222');
  await page.getByRole('button', { name: 'Block' }).click();
  await page.locator('tbody tr', { hasText: '5511911112222' }).waitFor();
  assert.equal((await h.gw.call(user.key, 'POST', '/messages/sms/send', { receivers: ['5511911112222'], message: 'Oferta' })).status, 200);
  await open('reports', /Reports/);
  await page.locator('input[name=receiver]').fill('5511911112222');
  await page.getByRole('button', { name: 'Search' }).click();
  await waitForStatus('5511911112222', 'BLOCKED');
  // Unblocked from the same page.
  await open('contacts', /Contacts/);
  await page.locator('tbody tr', { hasText: '5511911112222' }).getByRole('button', { name: 'Unblock' }).click();
  await page.locator('tbody tr', { hasText: '5511911112222' }).waitFor({ state: 'detached' });
});

test('a send scheduled from the form, then cancelled from the requests report (and refunded)', { skip }, async () => {
  const balance = async () => (await h.gw.call(user.key, 'GET', '/balance')).body.object.balance as number;
  const before = await balance();
  await open('send', /Send messages/);
  await page.locator('textarea[name=numbers]').fill('5511933332222');
  await page.locator('textarea[name=message]').fill('Lembrete agendado');
  const tomorrow = new Date(Date.now() + 86_400_000);
  const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  await page.locator('input[name=schedule]').fill(local);
  await page.getByRole('button', { name: 'Schedule', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Scheduled 1 message(s)' }).waitFor();
  const requestId = await text(page.locator('code', { hasText: /^[0-9a-f-]{36}$/ }));
  assert.equal(Math.round((before - (await balance())) * 100), 10);

  await open('reports', /Reports/);
  await page.getByRole('tab', { name: 'Requests' }).click();
  const row = page.locator('tbody tr', { hasText: requestId });
  await row.getByRole('button', { name: 'Cancel' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /cancel/i })
    .waitFor();
  assert.equal(await balance(), before);
  await page.getByRole('tab', { name: 'Sent' }).click();
  await page.locator('input[name=receiver]').fill('5511933332222');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('tbody tr', { hasText: '5511933332222' }).filter({ hasText: 'CANCELLED' }).waitFor();
});

test('the language switch turns the panel into Portuguese and back', { skip }, async () => {
  await open('', /Dashboard/);
  await page.getByRole('combobox', { name: 'Language' }).first().selectOption('pt-BR');
  await page.getByRole('heading', { level: 1, name: 'Painel' }).waitFor();
  assert.ok(await page.getByRole('link', { name: 'Relatórios' }).isVisible());
  await page.getByRole('combobox', { name: 'Idioma' }).first().selectOption('en');
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
});

test('the dashboard after the day: balance, counts by status, the chart and the latest replies', { skip }, async () => {
  // Two more outcomes for the chart: the simulator reports ...0001 undelivered and ...0002 expired.
  for (const receiver of ['5511955550001', '5511955550002'])
    assert.equal((await h.gw.call(user.key, 'POST', '/messages/sms/send', { receivers: [receiver], message: 'Lembrete: sua consulta é amanhã' })).status, 200);
  await until(
    async () => (await h.gw.call(user.key, 'GET', '/reports/messages/sent?receiver=5511955550002')).body.object?.[0]?.status,
    (s) => s === 'EXPIRED',
    'the second message expired',
  );
  // And the days before, for the chart: messages sent now, then dated back (the dashboard counts by creation day).
  const DAY = 86_400_000;
  for (let days = 1; days <= 12; days++) {
    const receivers = Array.from(
      { length: 2 + ((days * 7) % 5) },
      (_, i) => `55119${String(days).padStart(2, '0')}7${i}${i % 3 === 0 && days % 2 ? '0001' : '4321'}`,
    );
    assert.equal((await h.gw.call(user.key, 'POST', '/messages/sms/send', { receivers, message: `Campanha dia ${days}` })).status, 200);
    await until(
      async () => (await h.gw.call(user.key, 'GET', `/reports/messages/sent?content=${encodeURIComponent(`Campanha dia ${days}`)}`)).body.object ?? [],
      (list: any[]) => list.length === receivers.length && list.every((m) => m.status === 'DELIVERED' || m.status === 'UNDELIVERED'),
      `day ${days} sent`,
    );
    await h.gw.core.db.kysely
      .updateTable('messages')
      .set((eb) => ({ created_at: eb('created_at', '-', days * DAY) }))
      .where('account_id', '=', user.accountId)
      .where('content', '=', `Campanha dia ${days}`)
      .execute();
  }
  await open('', /Dashboard/);
  await page.locator('canvas').waitFor();
  const tiles = await text(page.locator('.tiles'));
  assert.match(tiles, /DELIVERED/);
  assert.match(tiles, /UNDELIVERED/);
  assert.match(tiles, /EXPIRED/);
  await page.locator('tbody tr', { hasText: 'Sim, confirmo' }).waitFor();
  if (DIALECT === 'sqlite') await page.screenshot({ path: fileURLToPath(new URL('../docs/panel-dashboard.png', import.meta.url)), fullPage: true });
});

test('the password changed in the panel; sign out, and only the new one signs in', { skip }, async () => {
  await open('password', /Change password/);
  await page.getByLabel('Current password').fill(user.password);
  await page.getByLabel('New password').fill('a-brand-new-password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('input[name=email]').waitFor();
  // The session is gone on the server too.
  assert.equal((await page.evaluate(async () => (await fetch('/panel/api/session')).status)) as number, 401);

  await page.locator('input[name=email]').fill(user.email);
  await page.locator('input[name=password]').fill(user.password);
  await page.locator('button[type=submit]').click();
  await page.getByRole('alert').filter({ hasText: 'Email or password is wrong' }).waitFor();
  await page.locator('input[name=password]').fill('a-brand-new-password');
  await page.locator('button[type=submit]').click();
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
});
