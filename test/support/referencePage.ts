// The HTML reference pages in a real browser: Debian's chromium driven by playwright-core, with
// every request outside the server's origin refused (the page must work offline, from the server
// alone). The browser must be there: CHROMIUM_PATH (default /usr/bin/chromium); .ci/run installs
// the Debian package when missing. Without it the tests fail, never skip.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Debian's chromium, headless, as every browser test starts it (root needs --no-sandbox); undefined when it is not installed. */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM_PATH)) return undefined;
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface RenderedPage {
  /** The page's text as a reader sees it, after the renderer finished. */
  text: string;
  /** Console errors and uncaught exceptions of the page. */
  errors: string[];
  /** Console warnings of the page: what the renderer says about the document (e.g. Redoc's "Incompatible types in allOf"). */
  warnings: string[];
  /** Requests the page tried to make outside the server's origin (all refused). */
  foreignRequests: string[];
  /** Every same-origin URL the page loaded. */
  loaded: string[];
  /** The ids of the page's elements: the renderer gives each operation's section one (`…/operation/<operationId>`). */
  sectionIds: string[];
}

/** Starts chromium before the file's tests and closes it after them; `render` opens a page and waits for the renderer. */
export function useReferenceBrowser(): { render(url: string): Promise<RenderedPage> } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async render(url: string): Promise<RenderedPage> {
      expect(existsSync(CHROMIUM_PATH), `no browser at ${CHROMIUM_PATH}: install the Debian chromium package (apt-get install -y chromium) or set CHROMIUM_PATH`).toBe(true);
      expect(browser, 'chromium did not start').toBeDefined();
      const origin = new URL(url).origin;
      const context = await browser!.newContext();
      const page = await context.newPage();
      const result: RenderedPage = { text: '', errors: [], warnings: [], foreignRequests: [], loaded: [], sectionIds: [] };
      page.on('console', (message) => {
        if (message.type() === 'error') result.errors.push(message.text());
        if (message.type() === 'warning') result.warnings.push(message.text());
      });
      page.on('pageerror', (error) => result.errors.push(error.message));
      await page.route('**/*', (route) => {
        const requested = route.request().url();
        if (requested.startsWith('data:') || requested.startsWith('blob:')) return route.continue();
        if (new URL(requested).origin !== origin) {
          result.foreignRequests.push(requested);
          return route.abort();
        }
        result.loaded.push(requested);
        return route.continue();
      });
      try {
        const response = await page.goto(url);
        expect(response?.status()).toBe(200);
        await page.waitForSelector('body[data-rendered]', { timeout: 60_000 });
        expect(await page.getAttribute('body', 'data-rendered')).toBe('true');
        result.text = await page.evaluate(() => document.body.innerText);
        result.sectionIds = await page.evaluate(() => Array.from(document.querySelectorAll('[id]'), (element) => element.id));
      } finally {
        await context.close();
      }
      return result;
    },
  };
}

/** The summary of every operation (and webhook) of a served document: what its reference page must show. */
export function operationSummaries(document: Record<string, unknown>): { operationId: string; summary: string }[] {
  const found: { operationId: string; summary: string }[] = [];
  for (const section of ['paths', 'webhooks'] as const) {
    for (const item of Object.values((document[section] ?? {}) as Record<string, Record<string, { operationId?: string; summary?: string }>>)) {
      for (const operation of Object.values(item)) {
        if (operation && typeof operation === 'object' && operation.operationId) found.push({ operationId: operation.operationId, summary: operation.summary ?? operation.operationId });
      }
    }
  }
  return found;
}
