// Start-up refuses a data directory, database or key file that group or others may access, before
// anything is created or migrated, or makes them owner-only when told (FIX_FILE_MODES=on).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/store/database.js';
import { checkFileModes } from '../../src/startChecks.js';
import { runAdminInProcess, runServerProcess, startServerProcess, stopServerProcesses, type ServerProcess } from '../support/serverProcess.js';

const cleanups: (() => void | Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const mode = (file: string): number => statSync(file).mode & 0o777;

/** A data directory as a start leaves it (database, WAL files, key files), plus a file that is none of them. */
function dataDirectory(): { dir: string; databasePath: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'contract-api-file-modes-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const databasePath = path.join(dir, 'app.db');
  openDatabase(databasePath).close();
  for (const name of ['webhook-secrets.key', 'session-jwt.key', 'old-webhook-secrets.key']) writeFileSync(path.join(dir, name), 'x'.repeat(43), { mode: 0o600 });
  writeFileSync(path.join(dir, 'notes.txt'), 'not a key', { mode: 0o644 });
  return { dir, databasePath };
}

describe('the start-up file mode check', () => {
  it('passes owner-only files and refuses group- or world-accessible ones, naming each and changing nothing', () => {
    const { dir, databasePath } = dataDirectory();
    const config = { ...loadConfig({ DATABASE_PATH: databasePath }), fixFileModes: false };
    expect(checkFileModes(config)).toEqual([]);
    // A directory others may list or enter (what a plain mkdir makes) but not write: its files stay owner-only, so it passes.
    chmodSync(dir, 0o755);
    expect(checkFileModes(config)).toEqual([]);

    chmodSync(dir, 0o775);
    chmodSync(databasePath, 0o644);
    chmodSync(path.join(dir, 'webhook-secrets.key'), 0o640);
    chmodSync(path.join(dir, 'old-webhook-secrets.key'), 0o604);
    let refusal: unknown;
    try {
      checkFileModes(config);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    const message = (refusal as Error).message;
    expect(message).toContain(`${dir} (mode 0775)`);
    expect(message).toContain(`${databasePath} (mode 0644)`);
    expect(message).toContain(`${path.join(dir, 'webhook-secrets.key')} (mode 0640)`);
    expect(message).toContain(`${path.join(dir, 'old-webhook-secrets.key')} (mode 0604)`);
    expect(message).not.toContain('session-jwt.key');
    expect(message).not.toContain('notes.txt');
    expect(message).toMatch(/FIX_FILE_MODES=on.*Nothing was changed\.$/);
    expect([mode(dir), mode(databasePath), mode(path.join(dir, 'webhook-secrets.key'))]).toEqual([0o775, 0o644, 0o640]);
  });

  it('with FIX_FILE_MODES=on takes group and other permissions off them, and only them', () => {
    const { dir, databasePath } = dataDirectory();
    chmodSync(dir, 0o775);
    chmodSync(databasePath, 0o664);
    chmodSync(path.join(dir, 'webhook-secrets.key'), 0o644);
    const fixed = checkFileModes(loadConfig({ DATABASE_PATH: databasePath, FIX_FILE_MODES: 'on' }));
    expect(fixed).toEqual([
      { file: dir, from: 0o775, to: 0o700 },
      { file: databasePath, from: 0o664, to: 0o600 },
      { file: path.join(dir, 'webhook-secrets.key'), from: 0o644, to: 0o600 },
    ]);
    expect([mode(dir), mode(databasePath), mode(path.join(dir, 'webhook-secrets.key')), mode(path.join(dir, 'notes.txt'))]).toEqual([0o700, 0o600, 0o600, 0o644]);
  });
});

describe('the admin CLI on a world-readable data directory', () => {
  it('refuses as the server does, before opening anything, and with FIX_FILE_MODES=on fixes the modes and says so', async () => {
    const { dir, databasePath } = dataDirectory();
    chmodSync(databasePath, 0o644);
    const refused = await runAdminInProcess(['tenant', 'list'], { env: { DATABASE_PATH: databasePath } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${databasePath} (mode 0644)`);
    expect(refused.stderr).toMatch(/FIX_FILE_MODES=on/);
    expect(mode(databasePath)).toBe(0o644);
    const fixed = await runAdminInProcess(['tenant', 'list'], { env: { DATABASE_PATH: databasePath, FIX_FILE_MODES: 'on' } });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toContain(`made owner-only ${databasePath} (0644 -> 0600)`);
    expect(mode(databasePath)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
  });
});

describe('npm start on a world-readable data directory', () => {
  it('refuses before creating the database, and with FIX_FILE_MODES=on fixes the modes, says so and serves', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'contract-api-file-modes-start-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const dir = path.join(root, 'data');
    const databasePath = path.join(dir, 'app.db');
    // A data directory made by hand with the usual umask, and a key file copied in.
    mkdirSync(dir);
    chmodSync(dir, 0o775);
    writeFileSync(path.join(dir, 'cursor.key'), 'c'.repeat(43), { mode: 0o644 });
    chmodSync(path.join(dir, 'cursor.key'), 0o644);

    const refused = await runServerProcess({ DATABASE_PATH: databasePath, DEMO_DATA: 'off' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Configuration error: group or others may access ${dir} (mode 0775), ${path.join(dir, 'cursor.key')} (mode 0644)`);
    expect(existsSync(databasePath)).toBe(false);

    const servers: ServerProcess[] = [];
    cleanups.push(() => stopServerProcesses(servers.map((server) => server.child)));
    const server = await startServerProcess({ DATABASE_PATH: databasePath, DEMO_DATA: 'off', FIX_FILE_MODES: 'on' });
    servers.push(server);
    expect(server.output()).toContain(`FIX_FILE_MODES=on: made owner-only ${dir} (0775 -> 0700), ${path.join(dir, 'cursor.key')} (0644 -> 0600).`);
    expect([mode(dir), mode(path.join(dir, 'cursor.key')), mode(databasePath)]).toEqual([0o700, 0o600, 0o600]);
  }, 90_000);
});

