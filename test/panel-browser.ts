/**
 * The panel's browser tests (test/panel-e2e*.test.ts): a gateway listening
 * on a loopback port with the built panel (web/dist, built first when
 * missing or stale), and Debian's chromium driven by Playwright
 * (playwright-core: no browser of its own is downloaded).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Locator, type Page, chromium } from 'playwright-core';
import { ADMIN_TOKEN, type Customer, startGateway, type TestGateway } from './helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The system's Chromium (apt-get install chromium), or null. */
export function chromiumPath(): string | null {
  for (const path of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) {
    if (path && existsSync(path)) return path;
  }
  return null;
}

/** Why the browser tests cannot run here, or false (node:test's `skip`). */
export function skipReason(): string | false {
  return chromiumPath() ? false : 'no Chromium: apt-get install chromium (or set CHROMIUM_PATH)';
}

/** Builds web/dist when it is missing or older than web/src (scripts/build-web.mjs). */
export function buildPanel(): void {
  const res = spawnSync(process.execPath, ['scripts/build-web.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (res.status !== 0) throw new Error('building the panel (web/dist) failed');
}

export interface PanelHarness {
  gw: TestGateway;
  /** http://127.0.0.1:<port> */
  base: string;
  browser: Browser;
  /** A new browser context (its own cookies), at phone or desktop size. */
  context(options?: { phone?: boolean; locale?: string }): Promise<BrowserContext>;
  /** A page signed in with these credentials, at /panel/. */
  signIn(email: string, password: string, options?: { phone?: boolean; locale?: string }): Promise<Page>;
  /** An account (SMS simulator route, credits, API key) with a panel user who signs in as `email`. */
  accountUser(email: string, options?: { balance?: number; role?: 'CUSTOMER' | 'RESELLER' }): Promise<Customer & { email: string; password: string }>;
  close(): Promise<void>;
}

export const PASSWORD = 'panel-password-123';

/** A gateway on a fresh database listening on a loopback port, and a browser. */
export async function startPanel(env: Record<string, string> = {}): Promise<PanelHarness> {
  buildPanel();
  const gw = await startGateway(env);
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const address = gw.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the gateway is not listening');
  const base = `http://127.0.0.1:${address.port}`;
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium');
  const browser = await chromium.launch({ executablePath, args: ['--disable-gpu', '--disable-dev-shm-usage'] });
  const contexts: BrowserContext[] = [];

  const harness: PanelHarness = {
    gw,
    base,
    browser,
    async context({ phone = false, locale = 'en-US' } = {}) {
      const context = await browser.newContext({
        baseURL: base,
        locale,
        viewport: phone ? { width: 375, height: 740 } : { width: 1280, height: 860 },
        ...(phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
      });
      context.setDefaultTimeout(20_000);
      contexts.push(context);
      return context;
    },
    async signIn(email, password, options) {
      const page = await (await harness.context(options)).newPage();
      await page.goto('/panel/');
      await page.locator('input[name=email]').fill(email);
      await page.locator('input[name=password]').fill(password);
      await page.locator('button[type=submit]').click();
      await page.locator('header.top').waitFor();
      return page;
    },
    async accountUser(email, options = {}) {
      const customer = await gw.customer({ balance: options.balance ?? 100, role: options.role ?? 'CUSTOMER' });
      const res = await gw.admin('POST', `/admin/accounts/${customer.accountId}/panel-users`, { email, password: PASSWORD });
      if (res.status !== 201 && res.status !== 200) throw new Error(`creating the panel user: ${res.status} ${JSON.stringify(res.body)}`);
      return { ...customer, email, password: PASSWORD };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      await gw.close();
    },
  };
  return harness;
}

/** The operator's sign-in: e-mail `operator`, the operator token as password. */
export const OPERATOR = { email: 'operator', password: ADMIN_TOKEN };

/** Waits (generously) until `probe` answers something `done` accepts. */
export async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The text of an element ('' when it has none). */
export async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? '';
}
