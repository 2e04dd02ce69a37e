// Every key rotated while the server runs (issue 28, item 4): the server in this process on port 0
// over a SQLite file, `admin keys …` as child processes on the same file and key files, as an
// operator runs them. No client sees an error at any step.
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadKeyRing } from '../../src/auth/keyRings.js';
import { issueSessionToken } from '../../src/auth/sessionTokens.js';
import { createCursorCodec } from '../../src/paging/cursor.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { startGithubApiServer, makeIssues, type GithubApiServer } from '../support/githubApiServer.js';
import { runAdmin } from '../../src/cli/admin.js';
import { runAdminInProcess } from '../support/serverProcess.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { expectSuccess, jsonHeaders, liftCallLimits } from '../support/workPlatform.js';
import { startReceiver, waitFor, type Receiver } from '../webhooks/deliveryFixtures.js';
import * as oauth from 'oauth4webapi';
import { approve, authorizationRequest, authorizeAndExchange, discover, hiddenField, insecure, offeredScopes, openConsentPage, registerTestClient, TestBrowser, TEST_REDIRECT_URI, exchangeCode } from '../support/oauth.js';

let t: TestApp;
let github: GithubApiServer;
let receiver: Receiver;

beforeAll(async () => {
  github = await startGithubApiServer();
  receiver = await startReceiver();
  t = await startTestApp({
    env: { WEBHOOK_WORKER: 'on', WEBHOOK_ALLOW_LOOPBACK: 'on', GITHUB_API_BASE_URL: github.baseUrl, LOG_REQUESTS: 'off' },
  });
  await liftCallLimits(t.store, t.fixture.workPlatform.workspaceId);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await github?.close();
});

// The CLI's commands in this process (runAdminInProcess), beside the app that keeps serving; the CLI as a process is test/cli/admin.test.ts's.
async function admin(args: string[]): Promise<{ json: any; stderr: string }> {
  const run = await runAdminInProcess([...args, '--json'], {
    env: { DATABASE_PATH: path.join(t.dataDir, 'app.db'), SESSION_JWT_SECRET: '', CURSOR_SECRET: '', WEBHOOK_SECRET_KEY: '', OAUTH_COOKIE_SECRET: '', OAUTH_SIGNING_JWK: '' },
  });
  expect(run.code, run.stderr).toBe(0);
  return { json: JSON.parse(run.stdout), stderr: run.stderr };
}

const sealedColumns = () =>
  t.sql.rows<{ sealed: string }>(
    `SELECT sealed_secret AS sealed FROM webhook_subscriptions
     UNION ALL SELECT sealed_previous_secret FROM webhook_subscriptions WHERE sealed_previous_secret IS NOT NULL
     UNION ALL SELECT sealed_credential FROM connectors WHERE sealed_credential IS NOT NULL
     UNION ALL SELECT body FROM idempotency_keys WHERE body NOT LIKE '{%'`,
  );

describe('admin keys rotate, reseal and retire while the server runs', () => {
  it('keeps every session, cursor, webhook signature, idempotent replay and connector credential working', async () => {
    const session = t.fixture.workPlatform.tokens.session;
    const call = (method: string, url: string, body?: unknown, extra: Record<string, string> = {}, token = session) =>
      t.workPlatformClient.request(method, url, { headers: jsonHeaders(token, extra), body: body === undefined ? undefined : JSON.stringify(body) });
    const projectId = t.fixture.workPlatform.projectId;

    // Before: a cursor, a webhook whose creation answer (with its secret) is stored sealed, a connected connector, a rotated webhook secret (previous one sealed too).
    const firstPage = expectSuccess(await call('GET', '/v1/tasks?limit=2'), 200);
    const oldCursor = String(firstPage.nextCursor);
    const webhookRequest = { url: receiver.url, eventTypes: ['task.created'] };
    const created = expectSuccess(await call('POST', '/v1/webhooks', webhookRequest, { 'idempotency-key': 'rotation-webhook' }), 201);
    const rotatedSecret = expectSuccess(await call('POST', `/v1/webhooks/${created.id}/rotate-key`, undefined, { 'idempotency-key': 'rotation-key' }), 200);
    const secret = String(rotatedSecret.secret);
    const connector = expectSuccess(await call('POST', '/v1/connectors', { kind: 'github', name: 'Rotation' }), 201);
    expectSuccess(await call('PUT', `/v1/connectors/${connector.id}/connection`, { token: `ghp_rotation${'x'.repeat(30)}` }), 200);
    github.setRepository('acme/rotation', makeIssues(3));
    const sealedBefore = await sealedColumns();
    expect(sealedBefore.length).toBeGreaterThan(4);
    expect(sealedBefore.every((row) => row.sealed.startsWith('v2.k0.'))).toBe(true);

    const everythingWorks = async (label: string) => {
      expectSuccess(await call('GET', '/v1/tasks?limit=2'), 200);
      expectSuccess(await call('GET', `/v1/tasks?limit=2&cursor=${encodeURIComponent(oldCursor)}`), 200);
      const replay = await call('POST', '/v1/webhooks', webhookRequest, { 'idempotency-key': 'rotation-webhook' });
      expect(expectSuccess(replay, 201)).toEqual(created);
      expect(replay.headers['idempotent-replayed'], label).toBe('true');
      const before = receiver.received.length;
      expectSuccess(await call('POST', '/v1/tasks', { projectId, title: `After ${label}` }), 201);
      await waitFor(() => receiver.received.length > before, `the delivery ${label}`, 10_000);
      const delivery = receiver.received.at(-1)!;
      expect(verifyWebhook(delivery.body, delivery.headers, secret).type).toBe('task.created');
      const imported = await call('POST', `/v1/connectors/${connector.id}/issue-imports`, { repository: 'acme/rotation', projectId });
      expect(expectSuccess(imported, 200).issuesRead, label).toBe(3);
    };
    await everythingWorks('before rotation');

    const rotated = await admin(['keys', 'rotate']);
    expect(rotated.json.rotated.map((entry: { name: string; id: string }) => `${entry.name}:${entry.id}`)).toEqual([
      'sealing:k1',
      'session:k1',
      'cursor:k1',
      'oauth-cookies:k1',
      expect.stringMatching(/^oauth-signing:es256-/),
    ]);
    await everythingWorks('right after rotation');

    // A session signed with the new key (as admin session create signs) is accepted at once: an unknown kid makes the server read the file again.
    const newSession = issueSessionToken(loadKeyRing(undefined, path.join(t.dataDir, 'session-jwt.key'), { name: 'SESSION_JWT_SECRET' }).newest(), {
      userId: (await t.sql.value<string>("SELECT id FROM users WHERE workspace_id = ? AND role = 'owner'", t.fixture.workPlatform.workspaceId))!,
      workspaceId: t.fixture.workPlatform.workspaceId,
      lifetimeSeconds: 600,
      now: Date.now(),
    });
    expect(JSON.parse(Buffer.from(newSession.split('.')[0]!, 'base64url').toString()).kid).toBe('k1');
    expectSuccess(await call('GET', '/v1/tasks?limit=2', undefined, {}, newSession), 200);

    const resealed = await admin(['keys', 'reseal', '--batch-size', '2']);
    expect(resealed.json.keyId).toBe('k1');
    expect(Object.values(resealed.json.unreadable as Record<string, number>).every((count) => count === 0)).toBe(true);
    expect(resealed.json.resealed['connectors.sealed_credential']).toBeGreaterThan(0);
    expect(resealed.json.resealed['idempotency_keys.body']).toBeGreaterThan(0);
    expect(resealed.json.resealed['webhook_subscriptions.sealed_previous_secret']).toBeGreaterThan(0);
    expect(resealed.stderr).toMatch(/connectors\.sealed_credential: \d+ resealed/);
    expect((await sealedColumns()).filter((row) => !row.sealed.startsWith('v2.k1.'))).toEqual([]);

    // Cursors are signed with the new key once the server has looked at the file again (at most a second after the
    // rotation; the reseal in this process may take less), kept list pages included, in the form the contract fixes.
    const cursorKeys = loadKeyRing(undefined, path.join(t.dataDir, 'cursor.key'), { name: 'CURSOR_SECRET' });
    const binding = { resource: 'tasks', workspaceId: t.fixture.workPlatform.workspaceId, sort: 'createdAt', order: 'desc' } as const;
    let newCursor = '';
    await vi.waitFor(
      async () => {
        newCursor = String(expectSuccess(await call('GET', '/v1/tasks?limit=2'), 200).nextCursor);
        expect(() => createCursorCodec(cursorKeys.keys()[0]!.key).decode(newCursor, binding)).toThrow(/does not match/);
      },
      { timeout: 5_000, interval: 100 },
    );
    expectSuccess(await call('GET', `/v1/tasks?limit=2&cursor=${encodeURIComponent(newCursor)}`), 200);

    const listed = await admin(['keys', 'list']);
    for (const perKey of Object.values(listed.json.sealed as Record<string, Record<string, number>>)) expect(Object.keys(perKey).filter((id) => id !== 'k1')).toEqual([]);
    const retired = await admin(['keys', 'retire', 'sealing', 'k0']);
    expect(retired.json.retired).toBe('k0');
    expect(readFileSync(path.join(t.dataDir, 'webhook-secrets.key'), 'utf8')).not.toMatch(/^k0 /m);
    await everythingWorks('after reseal and retire');
  }, 180_000);

  it('keeps an OAuth authorization under way working across a cookie and signing key rotation, and publishes the new signing key', async () => {
    const jwksKids = async () => {
      const response = await fetch(`${new URL(t.app.publicBaseUrl).origin}/oauth/jwks`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { keys: Array<{ kid: string; d?: string }> }).keys.map((key) => {
        expect(key.d, 'a private member published').toBeUndefined();
        return key.kid;
      });
    };
    const session = t.fixture.workPlatform.tokens.session;
    const registered = await registerTestClient(t.db, { workspaceId: t.fixture.workPlatform.workspaceId, scopes: ['tasks:read'], name: 'Rotation client' });
    const as = await discover(t.app.publicBaseUrl);
    const kidsBefore = await jwksKids();

    // A consent page opened before the rotation: its interaction cookie and CSRF token are signed with the key in use then.
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, registered.id, 'tasks:read');
    const consent = await openConsentPage(browser, request.url, session);
    expect(offeredScopes(consent.html)).toEqual(['tasks:read']);

    const cookieKeyFile = path.join(t.dataDir, 'oauth-cookies.key');
    /** The consent form's CSRF token as the server makes it with `key` (src/auth/oauth/interactions.ts). */
    const csrfWith = (key: Uint8Array, page: { url: string }) => {
      const uid = /\/oauth\/interaction\/([^/?#]+)/.exec(page.url)![1]!;
      return createHmac('sha256', createHmac('sha256', key).update('oauth consent csrf').digest()).update(`${uid}\n${session}`).digest('base64url');
    };
    const keyBefore = loadKeyRing(undefined, cookieKeyFile, { name: 'OAUTH_COOKIE_SECRET' }).newest();
    expect(hiddenField(consent.html, 'csrf')).toBe(csrfWith(keyBefore.key, consent));

    const rotated = await admin(['keys', 'rotate', 'oauth-cookies', 'oauth-signing']);
    const [cookieKeyId, signingKey] = rotated.json.rotated.map((entry: { id: string }) => entry.id);
    const newCookieKey = loadKeyRing(undefined, cookieKeyFile, { name: 'OAUTH_COOKIE_SECRET' }).newest();
    expect(newCookieKey.id).toBe(cookieKeyId);
    await waitFor(async () => (await jwksKids()).includes(signingKey), 'the new signing key published', 10_000);
    expect(await jwksKids()).toEqual([signingKey, ...kidsBefore]);
    // The server signs with the new cookie key once it has read the file (within a second): another consent page shows it.
    await waitFor(
      async () => {
        const other = await openConsentPage(new TestBrowser(), (await authorizationRequest(as, registered.id, 'tasks:read')).url, session);
        return hiddenField(other.html, 'csrf') === csrfWith(newCookieKey.key, other);
      },
      'consent forms signed with the new cookie key',
      10_000,
      100,
    );

    // The page opened before, its cookies and form signed with the replaced key, is approved all the same.
    const landed = await approve(browser, consent, ['tasks:read']);
    expect(landed.url.startsWith(TEST_REDIRECT_URI), `${landed.status} ${landed.url} ${landed.html.slice(0, 300)}`).toBe(true);
    const tokens = await exchangeCode(as, registered, new URL(landed.url), request);
    expectSuccess(await t.workPlatformClient.get('/v1/tasks?limit=1', { authorization: `Bearer ${tokens.access_token}` }), 200);

    // The replaced keys retired: a new authorization runs on the new keys alone, and the old signing keys are no longer published.
    const replacedCookieKeys = loadKeyRing(undefined, cookieKeyFile, { name: 'OAUTH_COOKIE_SECRET' }).keys().filter((key) => key.id !== cookieKeyId);
    for (const key of replacedCookieKeys) await admin(['keys', 'retire', 'oauth-cookies', key.id, '--force']);
    for (const kid of kidsBefore) await admin(['keys', 'retire', 'oauth-signing', kid]);
    await waitFor(async () => (await jwksKids()).length === 1, 'the old signing keys withdrawn', 10_000);
    expect(await jwksKids()).toEqual([signingKey]);
    const fresh = await authorizeAndExchange(as, registered, { sessionToken: session, scope: 'tasks:read' });
    expectSuccess(await t.workPlatformClient.get('/v1/tasks?limit=1', { authorization: `Bearer ${fresh.access_token}` }), 200);
  }, 120_000);

  it('refuses to retire the newest key, a sealing key still in use, and a session key in its grace period', async () => {
    const run = (args: string[]) => runAdminInProcess([...args, '--json'], { env: { DATABASE_PATH: path.join(t.dataDir, 'app.db'), SESSION_JWT_SECRET: '', CURSOR_SECRET: '', WEBHOOK_SECRET_KEY: '' } });
    const newest = await run(['keys', 'retire', 'sealing', 'k1']);
    expect(newest.code).toBe(1);
    expect(JSON.parse(newest.stdout).error.message).toMatch(/newest/);
    const grace = await run(['keys', 'retire', 'session', 'k0']);
    expect(grace.code).toBe(1);
    expect(JSON.parse(grace.stdout).error.message).toMatch(/still verifies sessions .* until/);
    await admin(['keys', 'rotate', 'sealing']);
    const inUse = await run(['keys', 'retire', 'sealing', 'k1']);
    expect(inUse.code).toBe(1);
    expect(JSON.parse(inUse.stdout).error.message).toMatch(/still sealed with k1 .*run keys reseal first/);
  }, 120_000);

  it('explains every keys command with --help, without touching the database or a key file', async () => {
    const dataDirectory = path.join(t.dataDir, 'help-only');
    for (const command of [['keys'], ['keys', 'list'], ['keys', 'rotate'], ['keys', 'reseal'], ['keys', 'retire']]) {
      let out = '';
      const code = await runAdmin([...command, '--help'], { stdout: (text) => (out += text), stderr: () => undefined, env: { DATABASE_PATH: path.join(dataDirectory, 'app.db') }, cwd: t.dataDir, now: Date.now });
      expect(code).toBe(0);
      expect(out).toContain(command.length === 1 ? 'keys rotate' : `admin -- ${command.join(' ')}`);
    }
    expect(existsSync(dataDirectory)).toBe(false);
  });
});
