import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoData } from '../../src/demo/demoData.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openDatabase } from '../../src/store/database.js';
import { ContractClient } from '../support/contractClient.js';
import { startServerProcess, stopServerProcesses } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';

/**
 * Two server processes on one SQLite file count a portfolio key's rate limit in it together (whatever
 * TEST_ENGINE says, the processes serve the file: vitest.config.ts runs this file in the `api` project only).
 */

describe('rate limit shared by two server processes on one database', () => {
  const children: ChildProcess[] = [];
  let dataDir: string;
  let key: string;
  let clients: ContractClient[];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-ratelimit-'));
    const databasePath = path.join(dataDir, 'app.db');
    const db = openDatabase(databasePath);
    const fixture = await loadDemoData(db, Date.now);
    key = (await issueApiKey(createApiKeyStore(db), { tenantId: fixture.portfolio.tenantId, rateLimit: 6 })).key;
    db.close();
    // One window spans the whole test, so a window boundary cannot fall inside it.
    const env = { DATABASE_PATH: databasePath, PORTFOLIO_RATE_WINDOW_SECONDS: String(10 * 365 * 24 * 3600) };
    const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    children.push(...servers.map((server) => server.child));
    clients = servers.map((server) => new ContractClient(server.url));
  });

  afterAll(async () => {
    const codes = await stopServerProcesses(children);
    rmSync(dataDir, { recursive: true, force: true });
    // SIGTERM shuts a server down gracefully, with exit code 0.
    expect(codes).toEqual(codes.map(() => 0));
  });

  it('spends one allowance across both processes', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await clients[i % 2]!.get('/api/v1/profile', bearer(key));
      expect(response.status).toBe(200);
      remaining.push(response.headers['x-ratelimit-remaining']!);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const client of clients) {
      const limited = await client.get('/api/v1/profile', bearer(key));
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});
