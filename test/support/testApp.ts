import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createJsonLogger, type Logger } from '../../src/logger.js';
import { loadDemoData, type DemoFixture } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { loadOrCreateSecret } from '../../src/auth/serverSecrets.js';
import { loadWebhookSecretBox } from '../../src/webhooks/secretBox.js';
import { afterAll, beforeAll } from 'vitest';
import { ContractClient } from './contractClient.js';

export interface TestApp {
  app: RunningApp;
  client: ContractClient;
  /** A client of the Work-Platform API (/v1) that validates every answer against its contract. */
  workPlatformClient: ContractClient;
  fixture: DemoFixture;
  /** The key the server signs and verifies session tokens with (SESSION_JWT_SECRET or the key file). */
  sessionSecret: Uint8Array;
  db: BetterSqlite3.Database;
  dataDir: string;
  /** Every log line the server wrote, to assert what is and is not logged. */
  logLines: string[];
  close(): Promise<void>;
}

/** The production JSON logger, writing its lines into memory. */
export function memoryLogger(lines: string[]): Logger {
  const keep = (line: string) => {
    lines.push(line.trimEnd());
  };
  return createJsonLogger({ out: keep, err: keep });
}

/**
 * The real server on port 0 over a real SQLite file in a temp directory, loaded with the demo
 * data, with response validation enforced; its client validates every response again.
 */
export async function startTestApp(options: { env?: Record<string, string>; now?: () => number; config?: Partial<Config> } = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-test-'));
  const databasePath = path.join(dataDir, 'app.db');
  const config: Config = {
    ...loadConfig({
      DATABASE_PATH: databasePath,
      PORT: '0',
      HOST: '127.0.0.1',
      RESPONSE_VALIDATION: 'enforce',
      // Suites make hundreds of calls with one key; the rate-limit suite sets its own allowance.
      PORTFOLIO_RATE_LIMIT: '1000000',
      // The API suites do not deliver webhooks; the webhook suites turn the worker on or build one.
      WEBHOOK_WORKER: 'off',
      // Connector calls never leave the machine: nothing listens on port 9, so they fail at once (suites that use GitHub start a local one).
      GITHUB_API_BASE_URL: 'http://127.0.0.1:9',
      ...options.env,
    }),
    ...options.config,
  };
  const now = options.now ?? Date.now;
  const db = openDatabase(databasePath);
  // The same secret the server will read, so the demo's session tokens (and the tests' own) verify.
  const sessionSecret = loadOrCreateSecret(config.sessionJwtSecret, path.join(config.dataDirectory, 'session-jwt.key'), {
    name: 'SESSION_JWT_SECRET',
  });
  const fixture = await loadDemoData(db, now, { sessionSecret, webhookSecretBox: loadWebhookSecretBox(config) });
  const logLines: string[] = [];
  const app = await startApp(config, { logger: memoryLogger(logLines), db, now });
  const client = new ContractClient(app.url);
  let workPlatformClient: ContractClient | undefined;
  return {
    app,
    client,
    // Built on first use: the portfolio suites never pay for compiling the other contract.
    get workPlatformClient() {
      workPlatformClient ??= new ContractClient(app.url, 'work-platform', 'Problem');
      return workPlatformClient;
    },
    fixture,
    sessionSecret,
    db,
    dataDir,
    logLines,
    async close() {
      await app.close();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the test app before the file's tests, hands it to `use` (which keeps what the tests
 * need; a promise it returns is awaited), and closes it after them.
 */
export function useTestApp(use: (app: TestApp) => unknown, options: Parameters<typeof startTestApp>[0] = {}): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(options);
    await use(app);
  });
  afterAll(async () => {
    await app?.close();
  });
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
