// On PostgreSQL a server keeps the credentials it read (PAT callers, API keys) in memory
// (src/store/cachedRows.ts): a change by any process is pushed to every instance by the database's
// NOTIFY, a kept credential is served at most a second after it was read, and nothing is kept or
// served from memory while the listening connection is down. Two app instances on one real
// PostgreSQL and Redis; each instance's clock is its own and stands still unless a test moves it, so
// that only what the test does can make a kept credential go.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { loadConfig } from '../../src/config.js';
import { generateSecret, generateSigningJwk } from '../../src/auth/serverSecrets.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { postgresEngine, type StoreEngine } from '../../src/store/engine.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { ContractClient } from '../support/contractClient.js';
import { sharedPostgresServer, withClient } from '../support/postgresServer.js';
import { startRedisServer, type RedisServer } from '../support/redisServer.js';
import { memoryLogger } from '../support/testApp.js';
import { makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';
import { waitFor } from '../webhooks/deliveryFixtures.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Instance {
  app: RunningApp;
  engine: StoreEngine;
  /** This instance's clock: it stands still unless a test moves it. */
  clock: { now: number };
  v1: ContractClient;
  portfolio: ContractClient;
}

const START = Date.UTC(2030, 0, 15, 12, 0, 0);
let url: string;
let redis: RedisServer;
let dataDir: string;
const instances: Instance[] = [];
let first: Instance;
let second: Instance;

async function startInstance(): Promise<Instance> {
  // A lost listening connection stays lost for the test's length: only what the test does brings it back.
  const engine = postgresEngine((await openPostgres(url, { poolMax: 4 })).pool, { relistenDelayMs: 60_000 });
  const clock = { now: START };
  const secrets = { SESSION_JWT_SECRET: sharedSecret, CURSOR_SECRET: sharedSecret, WEBHOOK_SECRET_KEY: sharedSecret, OAUTH_COOKIE_SECRET: sharedSecret, OAUTH_SIGNING_JWK: signingJwk };
  const config = loadConfig({
    ...secrets,
    DATABASE_URL: url,
    REDIS_URL: redis.url,
    DATABASE_PATH: path.join(dataDir, 'app.db'),
    PORT: '0',
    HOST: '127.0.0.1',
    RESPONSE_VALIDATION: 'enforce',
    WEBHOOK_WORKER: 'off',
  });
  const app = await startApp(config, { logger: memoryLogger([]), store: { engine, sqlite: undefined, location: 'test database', close: async () => {} }, now: () => clock.now });
  const instance = { app, engine, clock, v1: new ContractClient(app.url, 'work-platform', 'Problem'), portfolio: new ContractClient(app.url) };
  instances.push(instance);
  return instance;
}

const sharedSecret = generateSecret();
const signingJwk = generateSigningJwk();
let workspace: TestWorkspace;
let apiKey: { id: string; key: string };

beforeAll(async () => {
  url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
  redis = await startRedisServer();
  dataDir = mkdtempSync(path.join(tmpdir(), 'cached-credentials-'));
  first = await startInstance();
  second = await startInstance();
  workspace = await makeTestWorkspace(first.engine, randomBytes(32), { now: () => START });
  const tenant = await createTenantStore(first.engine).createTenant('Cached credentials');
  apiKey = await issueApiKey(createApiKeyStore(first.engine), { tenantId: tenant.id });
});

afterAll(async () => {
  for (const instance of instances) {
    await instance.app.close();
    await instance.engine.close();
  }
  await redis?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const tasks = (instance: Instance, token: string) => instance.v1.get('/v1/tasks?limit=1', { authorization: `Bearer ${token}` });
const newPat = async () => (await makeTestWorkspace(first.engine, randomBytes(32), { now: () => START })).pat;
const patIdOf = async (token: string) => {
  const hash = (await import('../../src/auth/patFormat.js')).hashPersonalAccessToken(token);
  return withClient(url, async (client) => (await client.query<{ id: string }>('SELECT id FROM personal_access_tokens WHERE token_hash = $1', [hash])).rows[0]!.id);
};
/** A change no instance is told of: the table's announcing trigger is off for its transaction. */
const revokeUnannounced = (token: string) =>
  patIdOf(token).then((id) =>
    withClient(url, async (client) => {
      await client.query('BEGIN');
      await client.query('ALTER TABLE personal_access_tokens DISABLE TRIGGER personal_access_tokens_announce_change');
      await client.query('UPDATE personal_access_tokens SET revoked_at = 1 WHERE id = $1', [id]);
      await client.query('ALTER TABLE personal_access_tokens ENABLE TRIGGER personal_access_tokens_announce_change');
      await client.query('COMMIT');
    }),
  );

describe('credentials kept in memory on PostgreSQL', () => {
  it('serves a kept PAT without reading it again, for at most a second of its clock', async () => {
    // The token's own creation is announced too (its workspace, user and token rows): a notice that
    // reaches the instance after its first read drops what it kept, as it must. So the steps that
    // need the token kept are tried again with a new token until none arrived late; a cache that
    // keeps nothing never gets past them.
    const { token, readAt } = await vi.waitFor(
      async () => {
        const candidate = await newPat();
        const at = second.clock.now;
        expect((await tasks(second, candidate)).status).toBe(200);
        await revokeUnannounced(candidate);
        // Kept: the unannounced revocation is not seen while the instance's clock stands still.
        expect((await tasks(second, candidate)).status).toBe(200);
        second.clock.now = at + 999;
        expect((await tasks(second, candidate)).status).toBe(200);
        return { token: candidate, readAt: at };
      },
      { timeout: 15_000, interval: 20 },
    );
    // The bound: a second after it was read, a kept credential is read again.
    second.clock.now = readAt + 1000;
    expect((await tasks(second, token)).status).toBe(401);
    expect((await tasks(first, token)).status).toBe(401);
  });

  it('answers 401 on the other instance soon after a PAT is revoked on one, pushed by NOTIFY', async () => {
    const token = await newPat();
    expect((await tasks(second, token)).status).toBe(200);
    expect((await tasks(first, token)).status).toBe(200);
    const revokedAt = performance.now();
    await createPersonalAccessTokenStore(first.engine).revokePat(await patIdOf(token));
    // The clocks stand still: only the announcement can end the kept entry, on the instance that revoked too (its own
    // NOTIFY comes back to it within milliseconds, not at once: docs/operations.md).
    await waitFor(async () => (await tasks(first, token)).status === 401, 'the revocation on the first instance', 5_000);
    await waitFor(async () => (await tasks(second, token)).status === 401, 'the revocation on the second instance', 5_000);
    expect(performance.now() - revokedAt).toBeLessThan(1_000);
  });

  it('answers api_key_revoked on the other instance soon after an API key is revoked on one', async () => {
    const get = (instance: Instance) => instance.portfolio.get('/api/v1/profile', { authorization: `Bearer ${apiKey.key}` });
    expect((await get(second)).status).not.toBe(401);
    expect((await get(second)).status).not.toBe(403);
    const revokedAt = performance.now();
    await createApiKeyStore(first.engine).revokeApiKey(apiKey.id);
    await waitFor(async () => (await get(second)).status === 403, 'the revocation on the second instance', 5_000);
    expect(performance.now() - revokedAt).toBeLessThan(1_000);
    expect(((await get(second)).body as { error: { code: string } }).error.code).toBe('api_key_revoked');
  });

  it('reads every credential from the database while the listening connection is down', async () => {
    const [sentinel, token] = [await newPat(), await newPat()];
    for (const kept of [sentinel, token]) expect((await tasks(second, kept)).status).toBe(200);
    await withClient(url, (client) => client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN cached_rows_changed'"));
    // The instance has noticed the loss once an unannounced change shows (its clock stands still).
    await revokeUnannounced(sentinel);
    await waitFor(async () => (await tasks(second, sentinel)).status === 401, 'the instance to notice its lost listener', 5_000);
    // From then on a change holds at once, announced or not.
    await revokeUnannounced(token);
    expect((await tasks(second, token)).status).toBe(401);
    const another = await newPat();
    expect((await tasks(second, another)).status).toBe(200);
    await revokeUnannounced(another);
    expect((await tasks(second, another)).status).toBe(401);
  });
});
