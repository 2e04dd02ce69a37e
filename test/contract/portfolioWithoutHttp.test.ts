import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import type { ContractApi } from '../../src/contract/reply.js';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { createContractApi } from '../../src/contract/pipeline.js';
import { portfolioProfile } from '../../src/portfolio/portfolioProfile.js';
import { loadDemoData, type DemoFixture } from '../../src/demo/demoData.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openDatabase } from '../../src/store/database.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { createPortfolioReader, type PageRequest } from '../../src/store/portfolioContent.js';
import { memoryLogger } from '../support/testApp.js';

/** The portfolio API driven through `handle()` alone: no HTTP, no Express. */
let dataDir: string;
let db: BetterSqlite3.Database;
let fixture: DemoFixture;
const artifacts = loadServedArtifacts('portfolio', 'http://api.example.test');
const contract = new ResponseContract(artifacts.document as Record<string, unknown>);

async function buildApi(overrides: { failWith?: Error; logLines?: string[]; pageRequests?: PageRequest[] } = {}): Promise<ContractApi> {
  const reader = createPortfolioReader(db, { cache: createBoundedCache({ maxBytes: 1024 * 1024 }) });
  const failing = overrides.failWith;
  const pageRequests = overrides.pageRequests;
  const profile = portfolioProfile({
    document: artifacts.document as Document,
    findApiKeyByHash: createApiKeyStore(db).findApiKeyByHash,
    services: { downloads: artifacts, content: failing
      ? {
          ...reader,
          publishedDocumentBytes: () => {
            throw failing;
          },
          encodedListPage: () => {
            throw failing;
          },
        }
      : pageRequests
        ? {
            ...reader,
            encodedListPage: (tenantId, kind, page, encode) => {
              pageRequests.push(page);
              return reader.encodedListPage(tenantId, kind, page, encode);
            },
          }
        : reader },
    rateLimiter: new SqliteRateLimiter(db, Date.now),
    rateLimit: { requestsPerWindow: 1000, windowSeconds: 60 },
    now: Date.now,
    logger: memoryLogger(overrides.logLines ?? []),
  });
  return createContractApi(profile, { now: Date.now });
}

function call(pathAndQuery: string, key?: string) {
  const [pathOnly, rawQuery = ''] = pathAndQuery.split('?');
  return {
    method: 'GET',
    path: pathOnly!,
    rawQuery,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    readBody: async () => undefined,
    requestId: 'req_test_0001',
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-handle-'));
  db = openDatabase(path.join(dataDir, 'app.db'));
  fixture = await loadDemoData(db, Date.now);
});
afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the portfolio API without HTTP', () => {
  it('answers a call with a plain reply that honours the contract', async () => {
    const api = await buildApi();
    const { reply, operationId } = await api.handle(call('/api/v1/posts?limit=2', fixture.portfolio.apiKey));
    expect(operationId).toBe('getPosts');
    expect(reply.status).toBe(200);
    // The answer is encoded once and kept, so it arrives as bytes with its JSON content type.
    expect(Buffer.isBuffer(reply.body)).toBe(true);
    const body = JSON.parse((reply.body as Buffer).toString('utf8')) as { items: unknown[] };
    expect(body.items).toHaveLength(2);
    // The HTTP adapter adds the request id.
    const headers = { ...reply.headers, 'x-request-id': 'req_test_0001' };
    expect(contract.check('getPosts', { status: reply.status, headers, body })).toEqual([]);
  });

  it('turns an unexpected error into a generic 500 and logs the detail with the request id', async () => {
    const logLines: string[] = [];
    const secret = new Error('SQLITE_ERROR near "SELECT * FROM api_keys" in /srv/app/src/store/portfolioContent.ts:42');
    const api = await buildApi({ failWith: secret, logLines });
    for (const target of ['/api/v1/portfolio', '/api/v1/posts']) {
      const { reply } = await api.handle(call(target, fixture.portfolio.apiKey));
      expect(reply.status).toBe(500);
      expect(reply.body).toEqual({
        error: {
          code: 'internal_error',
          status: 500,
          message: 'An unexpected error occurred. Quote the request id when reporting it.',
          requestId: 'req_test_0001',
        },
      });
      const text = JSON.stringify(reply);
      expect(text).not.toMatch(/SELECT|SQLITE|\/srv\/|\.ts|at /);
      const headers = { ...reply.headers, 'x-request-id': 'req_test_0001' };
      expect(contract.check(target === '/api/v1/posts' ? 'getPosts' : 'getPortfolio', { status: 500, headers, body: reply.body })).toEqual([]);
    }
    expect(logLines.join('\n')).toContain('SELECT * FROM api_keys');
    expect(logLines.join('\n')).toContain('req_test_0001');
  });

  it('validates a path and query string once, and hands every later call the same frozen request', async () => {
    const pageRequests: PageRequest[] = [];
    const api = await buildApi({ pageRequests });
    const items = async (target: string) => {
      const { reply } = await api.handle(call(target, fixture.portfolio.apiKey));
      expect(reply.status).toBe(200);
      return (JSON.parse((reply.body as Buffer).toString('utf8')) as { items: unknown[] }).items.length;
    };
    expect(await items('/api/v1/posts?limit=2')).toBe(2);
    expect(await items('/api/v1/posts?limit=2')).toBe(2);
    expect(await items('/api/v1/posts?limit=1')).toBe(1);
    expect(pageRequests).toHaveLength(3);
    expect(pageRequests[1]).toBe(pageRequests[0]);
    expect(pageRequests[2]).not.toBe(pageRequests[0]);
    // Coerced, with the defaults filled in, and closed to the handler.
    expect(pageRequests[0]).toEqual({ limit: 2, offset: 0 });
    expect(Object.isFrozen(pageRequests[0])).toBe(true);
    expect(() => {
      (pageRequests[0] as { limit: number }).limit = 50;
    }).toThrow(TypeError);

    // A refusal is not kept: the same bad query is refused each time, and a good one after it still answers.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { reply } = await api.handle(call('/api/v1/posts?limit=0', fixture.portfolio.apiKey));
      expect(reply.status).toBe(400);
    }
    expect(await items('/api/v1/posts?limit=2')).toBe(2);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const api = await buildApi();
    const { reply } = await api.handle({ ...call('/api/v1/posts/'), method: 'DELETE' });
    expect(reply.status).toBe(405);
    expect(reply.headers?.allow).toBe('GET');
  });
});
