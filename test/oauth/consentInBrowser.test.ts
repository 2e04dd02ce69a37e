// The consent page in a real browser: Debian's chromium driven by playwright-core. A person signs
// in with a session token, reads what each scope allows, unticks one, approves, and lands on the
// client's redirect URI (a local HTTP server of this test) with a code and the state; the page
// logs no console error. A form without its CSRF token is refused. The browser must be there:
// CHROMIUM_PATH (default /usr/bin/chromium); .ci/run installs the Debian package when missing.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_PATH, launchChromium } from '../support/referencePage.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopeDescriptions } from '../../generated/work-platform/rules.js';
import { authorizationRequest, discover, insecure, registerTestClient, type RegisteredClient, exchangeCode } from '../support/oauth.js';
import { useTestApp, type TestApp } from '../support/testApp.js';
import { makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

const REQUESTED = ['tasks:read', 'tasks:write', 'projects:read'] as const;

let t: TestApp;
let ws: TestWorkspace;
let as: oauth.AuthorizationServer;
let registered: RegisteredClient;
let browser: Browser | undefined;
let receiver: Server;
let redirectUri: string;
const received: URL[] = [];

useTestApp((app) => {
  t = app;
});

const MISSING_BROWSER = `no browser at ${CHROMIUM_PATH}: install the Debian chromium package (apt-get install -y chromium) or set CHROMIUM_PATH`;

/** Every test fails, none is skipped, without the browser: the consent page must be proven in one. */
function launched(): Browser {
  expect(existsSync(CHROMIUM_PATH), MISSING_BROWSER).toBe(true);
  expect(browser, 'chromium did not start').toBeDefined();
  return browser!;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      // The browser asks the client's origin for a favicon.
      res.writeHead(204).end();
      return;
    }
    received.push(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Client</title><p>Authorization answer received.</p>');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
  ws = await makeTestWorkspace(t.db, t.sessionSecret, { name: 'Browser workspace' });
  registered = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: [...REQUESTED], redirectUris: [redirectUri], name: 'Planner <b>Pro</b>' });
  as = await discover(t.app.publicBaseUrl);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (receiver) await new Promise((resolve) => receiver.close(resolve));
});

async function requestFor(scope: string) {
  const request = await authorizationRequest(as, registered.id, scope);
  const url = new URL(request.url);
  url.searchParams.set('redirect_uri', redirectUri);
  return { ...request, url: url.href };
}

/** A fresh browser context (no cookies), with every console error and page error collected. */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await launched().newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { page, problems };
}

async function signIn(page: Page): Promise<void> {
  await page.waitForURL(/\/oauth\/sign-in/);
  await page.fill('textarea[name="session_token"]', ws.session);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/oauth\/interaction\//);
}

describe('the consent page in chromium', () => {
  it('has chromium to drive', () => {
    expect(launched().version()).toMatch(/^\d+\./);
  });

  it('signs in, words every requested scope from the contract, grants what stays ticked, and lands on the redirect URI with code and state', async () => {
    const { page, problems } = await openPage();
    const request = await requestFor(REQUESTED.join(' '));
    await page.goto(request.url);
    await signIn(page);

    // The client's name is shown as text, never as markup.
    expect(await page.textContent('#client-name')).toBe('Planner <b>Pro</b>');
    const wording = await page.locator('#scopes li').allTextContents();
    expect(wording).toHaveLength(REQUESTED.length);
    REQUESTED.forEach((scope, index) => {
      expect(wording[index]).toContain(scopeDescriptions[scope]);
      expect(wording[index]).toContain(scope);
    });
    for (const scope of REQUESTED) expect(await page.isChecked(`input[name="scope"][value="${scope}"]`)).toBe(true);

    await page.uncheck('input[name="scope"][value="tasks:write"]');
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click('button[value="allow"]')]);

    const answer = received.at(-1)!;
    expect(answer.searchParams.get('state')).toBe(request.state);
    expect(answer.searchParams.get('iss')).toBe(as.issuer);
    expect(answer.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.textContent('p')).toBe('Authorization answer received.');

    const tokens = await exchangeCode(as, registered, answer, request, redirectUri);
    expect(tokens.scope).toBe('tasks:read projects:read');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('refuses the approval when the form comes without its CSRF token, and sends the client nothing', async () => {
    const { page } = await openPage();
    const request = await requestFor('tasks:read');
    await page.goto(request.url);
    await signIn(page);
    const before = received.length;
    await page.locator('input[name="csrf"]').evaluate((input) => input.remove());
    const [response] = await Promise.all([page.waitForResponse((candidate) => candidate.request().method() === 'POST'), page.click('button[value="allow"]')]);
    expect(response.status()).toBe(403);
    expect(await page.textContent('h1')).toBe('Request refused');
    expect(received.length).toBe(before);
    await page.context().close();
  });

  it('sends the application session only as an HttpOnly, SameSite=Lax cookie scoped to /oauth', async () => {
    const { page } = await openPage();
    await page.goto((await requestFor('tasks:read')).url);
    await signIn(page);
    const cookie = (await page.context().cookies()).find((candidate) => candidate.name === 'oauth_app_session');
    expect(cookie).toMatchObject({ value: ws.session, path: '/oauth', httpOnly: true, sameSite: 'Lax' });
    await page.context().close();
  });
});
