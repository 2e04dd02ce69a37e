import type { Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { createContractApi } from '../../src/contract/pipeline.js';
import { portfolioProfile } from '../../src/portfolio/portfolioProfile.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { createPortfolioReader } from '../../src/store/portfolioContent.js';
import { bearer, memoryLogger, startTestApp, type TestApp } from '../support/testApp.js';

describe('a public base URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://portfolio.example.com/' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is what every download names, while the server answers on its own address', async () => {
    const json = (await t.client.get('/api/v1/openapi.json')).body;
    const yaml = (await t.client.get('/api/v1/openapi.yaml')).text;
    const postman = (await t.client.get('/api/v1/postman.json')).body;
    expect(json.servers[0].url).toBe('https://portfolio.example.com');
    expect(yaml).toContain('url: https://portfolio.example.com\n');
    expect(postman.variable.find((variable: { key: string }) => variable.key === 'baseUrl').value).toBe('https://portfolio.example.com');
    expect((await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey))).status).toBe(200);
  });

  /** The portfolio profile over the test app's database, serving `document`. */
  const profileOver = (document: Document, artifacts: ReturnType<typeof loadServedArtifacts>) =>
    portfolioProfile({
      document,
      findApiKeyByHash: createApiKeyStore(t.db).findApiKeyByHash,
      services: { content: createPortfolioReader(t.db, { cache: createBoundedCache({ maxBytes: 1024 * 1024 }) }), downloads: artifacts },
      rateLimiter: new SqliteRateLimiter(t.db, Date.now),
      rateLimit: { requestsPerWindow: 10, windowSeconds: 60 },
      now: Date.now,
      logger: memoryLogger([]),
    });

  it('refuses to start when an authenticated operation would go unmetered', async () => {
    const artifacts = loadServedArtifacts('portfolio', 'http://localhost');
    const document = structuredClone(artifacts.document) as Record<string, any>;
    document.paths['/api/v1/posts'].get['x-ratelimit-class'] = 'reed';
    await expect(createContractApi(profileOver(document as Document, artifacts), { now: Date.now })).rejects.toThrow('getPosts: x-ratelimit-class must be "read", not "reed"');
  });

  it('refuses to start when an operation makes its credential optional ({} among its security requirements)', async () => {
    const artifacts = loadServedArtifacts('portfolio', 'http://localhost');
    const document = structuredClone(artifacts.document) as Record<string, any>;
    document.paths['/api/v1/posts'].get.security = [{}, { apiKey: [] }];
    await expect(createContractApi(profileOver(document as Document, artifacts), { now: Date.now })).rejects.toThrow(
      'GET /api/v1/posts (getPosts) lists {} among its security requirements (a credential is optional), which the server does not serve',
    );
  });

  it('refuses to start when an operation has no handler file, though handlers are imported on their first call', async () => {
    const artifacts = loadServedArtifacts('portfolio', 'http://localhost');
    const profile = profileOver(artifacts.document as Document, artifacts);
    const emptyFolder = new URL('./no-such-operations/', import.meta.url);
    await expect(createContractApi({ ...profile, operationsDirectory: emptyFolder }, { now: Date.now })).rejects.toThrow(/^No handler for operation \w+: add .*no-such-operations\/\w+\.ts exporting const \w+$/);
  });
});
