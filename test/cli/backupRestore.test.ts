// `admin backup` and `admin restore`: an online copy of a serving database with its key files, and
// its return after checks that refuse a damaged copy, keys that do not open it, or a running server.
import { createHash } from 'node:crypto';
import { existsSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runAdmin } from '../../src/cli/admin.js';
import { openDatabase } from '../../src/store/database.js';
import { loadKeyRing } from '../../src/auth/keyRings.js';
import { createConnectorStore } from '../../src/store/connectors.js';
import { createSecretBox } from '../../src/auth/secretBox.js';
import { credentialContext } from '../../src/workPlatform/connectorCalls.js';
import { ContractClient } from '../support/contractClient.js';
import { makeDemoDatabaseFile, runAdminCli, startServerProcess, stopServerProcesses, type DemoDatabaseFile } from '../support/serverProcess.js';
import { jsonHeaders, liftCallLimits } from '../support/workPlatform.js';
import type { ChildProcess } from 'node:child_process';

const cleanups: (() => void | Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function demoData(prefix: string): Promise<DemoDatabaseFile> {
  const database = await makeDemoDatabaseFile(prefix);
  cleanups.push(() => database.remove());
  return database;
}

/** The admin CLI in this process, as the operator's `npm run admin` runs it. */
async function admin(args: string[], env: Record<string, string>): Promise<{ code: number; json: any; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin([...args, '--json'], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: { ...env },
    cwd: process.cwd(),
    now: Date.now,
  });
  return { code, json: JSON.parse(stdout), stderr };
}

const mode = (file: string): number => statSync(file).mode & 0o777;
const digest = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('admin backup and restore', () => {
  it('copies a server under write load; the restored copy holds every task committed before the backup began, and serves', async () => {
    const database = await demoData('contract-api-backup-');
    const { workspaceId, projectId, tokens } = database.fixture.workPlatform;
    const setup = openDatabase(database.databasePath);
    await liftCallLimits(setup, workspaceId);
    setup.close();
    const env = { DATABASE_PATH: database.databasePath, DEMO_DATA: 'off' };
    const children: ChildProcess[] = [];
    cleanups.push(() => stopServerProcesses(children));
    const server = await startServerProcess(env);
    children.push(server.child);
    const client = new ContractClient(server.url, 'work-platform', 'Problem');

    // Writers that go on until told to stop; a task's id is recorded once its 201 has arrived: committed.
    const committed: string[] = [];
    let stopping = false;
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let index = 0; !stopping; index += 1) {
        const answer = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(tokens.all), body: JSON.stringify({ projectId, title: `Load ${writer}-${index}` }) });
        expect(answer.status).toBe(201);
        committed.push(answer.body.id);
      }
    });
    while (committed.length < 40) await new Promise((resolve) => setTimeout(resolve, 10));

    const target = path.join(database.dataDir, '..', `${path.basename(database.dataDir)}-backup.db`);
    cleanups.push(() => rmSync(target, { force: true }));
    cleanups.push(() => rmSync(`${target}.keys`, { force: true }));
    const committedBeforeBackup = [...committed];
    const backup = await runAdminCli(['backup', '--to', target, '--json'], { env });
    const committedDuringBackup = committed.length - committedBeforeBackup.length;
    stopping = true;
    await Promise.all(writers);
    expect(backup.code, backup.stderr).toBe(0);
    expect(committedDuringBackup).toBeGreaterThan(0);
    const backedUp = JSON.parse(backup.stdout);
    expect(backedUp).toMatchObject({ database: target, keys: `${target}.keys`, keysFromEnvironment: [] });
    expect(backedUp.keyFiles).toEqual(expect.arrayContaining(['cursor.key', 'session-jwt.key', 'webhook-secrets.key']));
    expect(mode(target)).toBe(0o600);
    expect(mode(`${target}.keys`)).toBe(0o600);

    const whileServing = await runAdminCli(['restore', '--from', target, '--json'], { env });
    expect(whileServing.code).toBe(1);
    expect(JSON.parse(whileServing.stdout).error.message).toMatch(/Another process has .*app\.db open: stop every server and worker on it.*Nothing was replaced/);

    expect(await stopServerProcesses(children.splice(0))).toEqual([0]);
    const keysBefore = Object.fromEntries(backedUp.keyFiles.map((name: string) => [name, digest(path.join(database.dataDir, name))]));
    const restored = await admin(['restore', '--from', target], env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json).toMatchObject({ database: database.databasePath, pendingMigrations: [] });
    expect(restored.json.sealedValuesChecked).toEqual(expect.arrayContaining([{ column: 'webhook_subscriptions.sealed_secret', keyId: 'k0' }]));
    expect(readdirSync(restored.json.replaced)).toEqual(expect.arrayContaining(['app.db', 'webhook-secrets.key']));

    const db = new BetterSqlite3(database.databasePath, { readonly: true });
    try {
      const present = new Set(db.prepare('SELECT id FROM tasks').pluck().all() as string[]);
      expect(committedBeforeBackup.filter((id) => !present.has(id))).toEqual([]);
    } finally {
      db.close();
    }
    for (const name of backedUp.keyFiles as string[]) {
      expect(digest(path.join(database.dataDir, name)), name).toBe(keysBefore[name]);
      expect(mode(path.join(database.dataDir, name))).toBe(0o600);
    }
    expect(readdirSync(database.dataDir).filter((name) => name.includes('restoring') || name.includes('partial'))).toEqual([]);

    // The restored database with its keys: the server starts (its webhook worker opens the sealed secrets) and serves what it held.
    const again = await startServerProcess(env);
    children.push(again.child);
    const task = await new ContractClient(again.url, 'work-platform', 'Problem').get(`/v1/tasks/${committedBeforeBackup.at(-1)}`, jsonHeaders(tokens.all));
    expect(task.status).toBe(200);
  }, 180_000);

  it('refuses a damaged copy, keys that do not open it, a missing key file and PostgreSQL, replacing nothing', async () => {
    const first = await demoData('contract-api-restore-a-');
    const second = await demoData('contract-api-restore-b-');
    const backupOf = async (database: DemoDatabaseFile, name = 'backup') => {
      const target = `${database.dataDir}.${name}.db`;
      cleanups.push(() => rmSync(target, { force: true }));
      cleanups.push(() => rmSync(`${target}.keys`, { force: true }));
      const made = await admin(['backup', '--to', target], { DATABASE_PATH: database.databasePath });
      expect(made.code, made.stderr).toBe(0);
      return target;
    };
    const firstCopy = await backupOf(first);
    const secondCopy = await backupOf(second);
    const env = { DATABASE_PATH: first.databasePath };
    const untouched = digest(first.databasePath);

    const again = await admin(['backup', '--to', firstCopy], env);
    expect(again.json.error.message).toMatch(/exists; give a new file name/);

    const wrongKeys = await admin(['restore', '--from', firstCopy, '--keys', `${secondCopy}.keys`], env);
    expect(wrongKeys.code).toBe(1);
    expect(wrongKeys.json.error.message).toMatch(/no key opens the value of webhook_subscriptions\.sealed_secret sealed with key k0 \(row whk_.*Nothing was replaced/);

    rmSync(`${secondCopy}.keys`);
    const noKeys = await admin(['restore', '--from', secondCopy], env);
    expect(noKeys.json.error.message).toMatch(/No key file at .*\.keys/);

    // Damage in the middle of the file: pages of the tables, not the header.
    const size = statSync(firstCopy).size;
    const handle = openSync(firstCopy, 'r+');
    writeSync(handle, Buffer.alloc(8192, 0x5a), 0, 8192, Math.floor(size / 2 / 4096) * 4096);
    closeSync(handle);
    const damaged = await admin(['restore', '--from', firstCopy], env);
    expect(damaged.code).toBe(1);
    expect(damaged.json.error.message).toMatch(/(damaged|not a readable SQLite database).*Nothing was replaced/);

    // A connector credential sealed with a newer key (k1) than the webhook secrets: a key file without k1 is refused too.
    expect((await admin(['keys', 'rotate', 'sealing'], { DATABASE_PATH: second.databasePath })).code).toBe(0);
    const sealing = loadKeyRing(undefined, path.join(second.dataDir, 'webhook-secrets.key'), { name: 'WEBHOOK_SECRET_KEY' });
    const secondDb = openDatabase(second.databasePath);
    try {
      const connector = await createConnectorStore(secondDb).createConnector(second.fixture.workPlatform.workspaceId, { kind: 'github', name: 'Sealed with k1' }, { kind: 'SYSTEM', id: 'test' });
      secondDb.prepare("UPDATE connectors SET status = 'expired', sealed_credential = ? WHERE id = ?").run(createSecretBox(sealing).seal('ghp_sealedWithK1', credentialContext(connector.id)), connector.id);
    } finally {
      secondDb.close();
    }
    const rotatedCopy = await backupOf(second, 'rotated');
    const bundle = JSON.parse(readFileSync(`${rotatedCopy}.keys`, 'utf8'));
    bundle.files['webhook-secrets.key'] = bundle.files['webhook-secrets.key'].split('\n').filter((line: string) => !line.startsWith('k1 ')).join('\n');
    writeFileSync(`${rotatedCopy}.keys`, JSON.stringify(bundle), { mode: 0o600 });
    const withoutK1 = await admin(['restore', '--from', rotatedCopy], env);
    expect(withoutK1.code).toBe(1);
    expect(withoutK1.json.error.message).toMatch(/no key opens the value of connectors\.sealed_credential sealed with key k1 \(row con_.*Nothing was replaced/);

    const postgres = await admin(['restore', '--from', secondCopy], { ...env, DATABASE_URL: 'postgres://app@127.0.0.1:5432/app' });
    expect(postgres.json.error.message).toMatch(/restore works on SQLite only: DATABASE_URL is set\.\nPostgreSQL .* pg_dump --format=custom/s);

    expect(digest(first.databasePath)).toBe(untouched);
    expect(readdirSync(first.dataDir).filter((name) => name.includes('restoring') || name.startsWith('replaced-'))).toEqual([]);
    expect(existsSync(path.join(first.dataDir, 'webhook-secrets.key'))).toBe(true);
  }, 60_000);
});
