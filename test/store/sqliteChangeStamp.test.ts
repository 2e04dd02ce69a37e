// What SQLite's change stamp tells the kept rows of a server (credentials, revisions): a write of
// the serving connection to a table whose rows are kept shows at once, however it was made, and a
// write to any other table keeps them; another connection's commit shows from the next turn of the
// event loop. On a real database file, through the real stores and cachedRows.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { changesOfStamp, createCachedRows, type CachedTable } from '../../src/store/cachedRows.js';
import { openDatabase } from '../../src/store/database.js';
import { engineOf } from '../../src/store/engine.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { makeDatabase, type TempDatabase } from './factories.js';
import { makeToken, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

const CALLER_TABLES: readonly CachedTable[] = ['personal_access_tokens', 'users', 'workspaces'];

let t: TempDatabase;
let workspace: WorkspaceFixture;
let token: { id: string; token: string };
beforeEach(async () => {
  t = makeDatabase();
  workspace = await makeWorkspace(t.db);
  token = await makeToken(t.db, workspace);
});
afterEach(() => t.cleanup());

/** A kept row read from `tables` over the server's connection, with the number of times it was read from the database. */
function keptCaller(tables: readonly CachedTable[] = CALLER_TABLES) {
  const engine = engineOf(t.db);
  const rows = createCachedRows<string>(changesOfStamp(engine.changeStamp), tables, { now: () => 0, maxEntries: 10 });
  let reads = 0;
  const get = () =>
    rows.get('caller', async () => {
      reads += 1;
      return `read ${reads}`;
    });
  return { get, reads: () => reads };
}

describe('SQLite change stamp', () => {
  it('keeps a credential across the serving connection\'s writes to other tables', async () => {
    const caller = keptCaller();
    await caller.get();
    const project = await createProjectStore(t.db).createProject(workspace.workspaceId, { name: 'Kept' }, workspace.actor);
    await createTaskStore(t.db).createTask(workspace.workspaceId, { projectId: project.id, title: 'A task' }, workspace.actor);
    expect(await caller.get()).toBe('read 1');
    expect(caller.reads()).toBe(1);
  });

  it('reads a credential again at once after the serving connection revokes it through its store', async () => {
    const caller = keptCaller();
    await caller.get();
    await createPersonalAccessTokenStore(t.db).revokePat(token.id);
    expect(await caller.get()).toBe('read 2');
  });

  it('reads it again after a change by hand on the same connection, outside every store', async () => {
    const caller = keptCaller();
    await caller.get();
    t.db.prepare('UPDATE users SET name = ? WHERE id = ?').run('Renamed by hand', workspace.ownerId);
    expect(await caller.get()).toBe('read 2');
  });

  it('reads an API key again after a cascade from a table it is not read from: its tenant deleted by hand', async () => {
    const tenant = await createTenantStore(t.db).createTenant('Cascading');
    await issueApiKey(createApiKeyStore(t.db), { tenantId: tenant.id });
    const apiKey = keptCaller(['api_keys']);
    await apiKey.get();
    t.db.prepare('DELETE FROM tenants WHERE id = ?').run(tenant.id);
    expect(t.db.prepare('SELECT count(*) FROM api_keys WHERE tenant_id = ?').pluck().get(tenant.id)).toBe(0);
    expect(await apiKey.get()).toBe('read 2');
  });

  it('reads it again when a change rolls back: the stamp moved with the statement, before the commit', async () => {
    const caller = keptCaller();
    await caller.get();
    const rollBack = t.db.transaction(() => {
      t.db.prepare('UPDATE personal_access_tokens SET revoked_at = 1 WHERE id = ?').run(token.id);
      throw new Error('rolled back');
    });
    expect(rollBack).toThrow('rolled back');
    expect(await caller.get()).toBe('read 2');
    expect(await caller.get()).toBe('read 2');
  });

  it("reads it again from the next turn of the event loop after another connection's commit", async () => {
    const caller = keptCaller();
    await caller.get();
    await nextTurn();
    const otherProcess = openDatabase(t.path);
    try {
      // The serving connection's triggers are its own: this write reaches it only through PRAGMA data_version.
      expect(otherProcess.prepare('UPDATE personal_access_tokens SET revoked_at = 1 WHERE id = ?').run(token.id).changes).toBe(1);
    } finally {
      otherProcess.close();
    }
    await nextTurn();
    expect(await caller.get()).toBe('read 2');
  });

  it('counts again after a table is rebuilt on the serving connection, which drops its triggers', async () => {
    t.db.exec('CREATE TABLE scratch_credentials (id TEXT PRIMARY KEY, revoked INTEGER NOT NULL)');
    const scratch = keptCaller(['scratch_credentials' as CachedTable]);
    await scratch.get();
    await nextTurn();
    t.db.exec('DROP TABLE scratch_credentials; CREATE TABLE scratch_credentials (id TEXT PRIMARY KEY, revoked INTEGER NOT NULL)');
    t.db.prepare('INSERT INTO scratch_credentials VALUES (?, 1)').run('revoked');
    expect(await scratch.get()).toBe('read 2');
    // Its triggers made again, and no schema change of theirs: kept from one turn to the next.
    await nextTurn();
    expect(await scratch.get()).toBe('read 2');
    t.db.prepare('UPDATE scratch_credentials SET revoked = 0').run();
    expect(await scratch.get()).toBe('read 3');
  });

  it('keeps nothing for tables first asked about inside a transaction, until asked again outside one', async () => {
    const engine = engineOf(t.db);
    const stamps = await engine.write(async () => [engine.changeStamp!(['portfolios']), engine.changeStamp!(['portfolios'])]);
    expect(stamps[0]).not.toBe(stamps[1]);
    expect(engine.changeStamp!(['portfolios'])).toBe(engine.changeStamp!(['portfolios']));
  });
});
