import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { eventsDb } from '../src/events/tables.ts';
import { type PanelHarness, skipReason, startPanel, text, until } from './panel-browser.ts';

/*
 * Webhooks in the panel: one registered from the page for a receiver on
 * loopback that answers 503, its delivery log showing the retries and then
 * the FAILED delivery, and "Send again" delivering it once the receiver
 * answers 2xx.
 */

const skip = skipReason();
let h: PanelHarness;
let page: Page;
let user: Awaited<ReturnType<PanelHarness['accountUser']>>;
let server: Server;
let receiverUrl: string;
let answer = 503;
const received: string[] = [];

before(async () => {
  if (skip) return;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (answer < 300) received.push(body);
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  h = await startPanel({ GATEWAY_FETCH_ALLOW: '127.0.0.1', WEBHOOK_RETRY_BASE_MS: '1', WEBHOOK_POLL_MS: '20' });
  user = await h.accountUser('hooks@example.com');
  page = await h.signIn(user.email, user.password);
});
after(async () => {
  if (skip) return;
  await h?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

test("a webhook registered in the panel: its failed delivery in the log, with the receiver's answer", { skip }, async () => {
  await page.goto('/panel/webhooks');
  await page.locator('input[name=webhookUrl]').fill(receiverUrl);
  await page.getByLabel('message.reply').uncheck();
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await page.getByText('The signing secret, shown only now:').waitFor();
  const row = page.locator('tr[data-webhook]', { hasText: receiverUrl });
  await row.waitFor();
  const hookId = Number(await row.getAttribute('data-webhook'));

  assert.equal((await h.gw.call(user.key, 'POST', '/messages/sms/send', { receivers: ['5511944443333'], message: 'Pedido enviado' })).status, 200);
  // Retried with back-off (shrunk to milliseconds here); then aged past the retry window, it fails for good.
  await until(
    async () => (await h.gw.call(user.key, 'GET', `/webhooks/${hookId}/deliveries`)).body.object,
    (list: any[]) => list.length === 2 && list.every((d) => d.attempts >= 2),
    'retried deliveries',
  );
  await until(
    async () => {
      await eventsDb(h.gw.core.db.kysely)
        .updateTable('webhook_deliveries')
        .set({ created_at: Date.now() - 100_000, due_at: Date.now() })
        .where('webhook_id', '=', hookId)
        .where('status', '=', 'PENDING')
        .execute();
      return (await h.gw.call(user.key, 'GET', `/webhooks/${hookId}/deliveries`)).body.object;
    },
    (list: any[]) => list.every((d) => d.status === 'FAILED'),
    'FAILED deliveries',
  );

  await row.getByRole('button', { name: 'Deliveries' }).click();
  const failed = page.locator('tr[data-status="FAILED"]');
  await failed.first().waitFor();
  assert.equal(await failed.count(), 2);
  assert.match(await text(failed.first()), /503/);
  assert.equal(await failed.first().getByRole('button', { name: 'Send again' }).count(), 1);
});

test('"Send again" delivers a failed delivery once the receiver answers', { skip }, async () => {
  answer = 204;
  const failed = page.locator('tr[data-status="FAILED"]').first();
  const id = await failed.getAttribute('data-delivery');
  await failed.getByRole('button', { name: 'Send again' }).click();
  await page.getByRole('status').filter({ hasText: 'The delivery will be sent again.' }).waitFor();
  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return page.locator(`tr[data-delivery="${id}"]`).getAttribute('data-status');
    },
    (s) => s === 'DELIVERED',
    'the delivery sent again and delivered',
  );
  assert.equal(received.length, 1);
});

test("the account's Legacy v2 callback URLs set from the webhooks page: a refused URL says why; saved ones are the operator's too", { skip }, async () => {
  await page.goto('/panel/webhooks');
  await page.getByLabel('Reply URL').fill('http://10.0.0.1/reply');
  await page.getByRole('button', { name: 'Save callback URLs' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /replyUrl: .*10\.0\.0\.1/ })
    .waitFor();
  assert.deepEqual((await h.gw.admin('GET', `/admin/accounts/${user.accountId}/callbacks`)).body, { replyUrl: null, statusUrl: null });

  await page.getByLabel('Reply URL').fill('https://example.com/sms/reply');
  await page.getByLabel('Status URL').fill('https://example.com/sms/status');
  await page.getByRole('button', { name: 'Save callback URLs' }).click();
  await page.getByRole('status').filter({ hasText: 'Callback URLs saved.' }).waitFor();
  assert.deepEqual((await h.gw.admin('GET', `/admin/accounts/${user.accountId}/callbacks`)).body, {
    replyUrl: 'https://example.com/sms/reply',
    statusUrl: 'https://example.com/sms/status',
  });
  // Shown again after a reload; emptied, that callback is off.
  await page.reload();
  await until(
    () => page.getByLabel('Status URL').inputValue(),
    (v) => v === 'https://example.com/sms/status',
    'the saved status URL in the form',
  );
  await page.getByLabel('Status URL').fill('');
  await page.getByRole('button', { name: 'Save callback URLs' }).click();
  await page.getByRole('status').filter({ hasText: 'Callback URLs saved.' }).waitFor();
  assert.deepEqual((await h.gw.admin('GET', `/admin/accounts/${user.accountId}/callbacks`)).body, {
    replyUrl: 'https://example.com/sms/reply',
    statusUrl: null,
  });
});
