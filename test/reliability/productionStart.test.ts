// A production start on an empty database: no live demo credentials unless asked, and files only
// their owner can read. Real server processes.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { startServerProcess, stopServerProcesses, type ServerProcess } from '../support/serverProcess.js';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
afterAll(async () => {
  await stopServerProcesses(servers.map((server) => server.child));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts `npm start` on a new empty data folder; resolves with what it printed once listening. */
async function startOnEmpty(env: Record<string, string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'contract-api-production-'));
  dirs.push(root);
  const databasePath = path.join(root, 'data', 'app.db');
  const server = await startServerProcess({ DATABASE_PATH: databasePath, ...env });
  servers.push(server);
  const db = openDatabase(databasePath);
  const tenants = db.prepare('SELECT count(*) FROM tenants').pluck().get() as number;
  const tokens = db.prepare('SELECT count(*) FROM personal_access_tokens').pluck().get() as number;
  db.close();
  return { databasePath, tenants, tokens, server };
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('NODE_ENV=production on an empty database', () => {
  it('loads no demo data and prints no key or token, and creates the database readable by its owner only', async () => {
    const started = await startOnEmpty({ NODE_ENV: 'production' });
    expect(started.tenants).toBe(0);
    expect(started.tokens).toBe(0);
    expect(started.server.output()).toContain('listening on');
    expect(started.server.output()).not.toMatch(/pfk_|svc_pat_|Demo data loaded/);
    expect(modeOf(started.databasePath)).toBe(0o600);
    expect(modeOf(`${started.databasePath}-wal`)).toBe(0o600);
    expect(modeOf(path.dirname(started.databasePath))).toBe(0o700);
    expect((await fetch(`${started.server.url}/api/v1/openapi.json`)).status).toBe(200);
  });

  it('loads the demo data only when DEMO_DATA=on asks for it', async () => {
    const started = await startOnEmpty({ NODE_ENV: 'production', DEMO_DATA: 'on' });
    expect(started.tenants).toBeGreaterThan(0);
    expect(started.tokens).toBeGreaterThan(0);
    expect(started.server.output()).toMatch(/Demo data loaded[\s\S]*pfk_/);
  });
});
