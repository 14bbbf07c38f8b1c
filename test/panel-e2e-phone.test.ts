import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { OPERATOR, type PanelHarness, skipReason, startPanel } from './panel-browser.ts';

/*
 * Every page of the panel at phone width (375 CSS pixels), in both
 * languages: nothing makes the page wider than the screen (wide tables
 * scroll inside their own box), and the menu opens from its button.
 */

const skip = skipReason();
let h: PanelHarness;

const ACCOUNT_PAGES = ['', 'send', 'reports', 'contacts', 'rules', 'links', 'webhooks', 'child-users', 'developer', 'password'];
const OPERATOR_PAGES = ['operator/carriers', 'operator/accounts', 'operator/routes'];

before(async () => {
  if (!skip) h = await startPanel();
});
after(async () => {
  if (!skip) await h.close();
});

/** How much wider than the screen the page is (0: it fits). */
async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

async function checkPages(page: Page, paths: string[]): Promise<void> {
  for (const path of paths) {
    await page.goto(`/panel/${path}`);
    await page.locator('main h1').waitFor();
    // Data loads after the heading: wait until no "Loading…" is left.
    await page.waitForFunction(() => !/Loading…|Carregando…/.test(document.body.textContent ?? ''));
    assert.equal(await page.locator('nav.side a.active').getAttribute('href'), `/panel/${path}`, `/panel/${path} shows its own page`);
    assert.equal(await overflow(page), 0, `/panel/${path} is wider than 375px`);
  }
}

test('the sign-in page fits a phone', { skip }, async () => {
  const page = await (await h.context({ phone: true })).newPage();
  await page.goto('/panel/');
  await page.locator('input[name=email]').waitFor();
  assert.equal(await overflow(page), 0);
});

test('every account page fits a phone, in English and in Portuguese', { skip }, async () => {
  const user = await h.accountUser('phone@example.com', { role: 'RESELLER' });
  // Something in the tables: a sent message, a key.
  await h.gw.call(user.key, 'POST', '/messages/sms/send', {
    receivers: [5511987654321],
    message: 'A message with a rather long text to fill the table cells',
    route: user.routeId,
  });
  for (const locale of ['en-US', 'pt-BR']) {
    const page = await h.signIn(user.email, user.password, { phone: true, locale });
    // The language follows the browser's.
    await page.getByRole('heading', { level: 1, name: locale === 'pt-BR' ? 'Painel' : 'Dashboard' }).waitFor();
    // A reseller's menu has the child users page.
    await page.locator('nav.side a[href="/panel/child-users"]').waitFor({ state: 'attached' });
    await checkPages(page, ACCOUNT_PAGES);
    // The menu is one button away, and fits too.
    await page.locator('.menu-button').click();
    await page.locator('nav.side.open').waitFor();
    assert.equal(await overflow(page), 0);
  }
});

test('every operator page fits a phone', { skip }, async () => {
  await h.gw.customer();
  const page = await h.signIn(OPERATOR.email, OPERATOR.password, { phone: true });
  await checkPages(page, OPERATOR_PAGES);
  // An account opened for managing.
  await page.goto('/panel/operator/accounts');
  await page.getByRole('button', { name: 'Manage' }).first().click();
  await page.getByTestId('detail-balance').waitFor();
  assert.equal(await overflow(page), 0);
});
