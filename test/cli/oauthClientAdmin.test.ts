import { createConnectorStore } from '../../src/store/connectors.js';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { oauthSecretHash } from '../../src/auth/oauth/oauthCredentials.js';
import { makeTempDir } from '../store/factories.js';
import { runAdminInProcess, type FinishedProcess as Run } from '../support/serverProcess.js';

let dir: string;
let databasePath: string;
let workspaceId: string;

/** Runs the CLI's entry on this file's database, in this process (test/cli/admin.test.ts runs it as a child process too). */
function admin(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runAdminInProcess(args, { env: { SESSION_JWT_SECRET: '', DATABASE_PATH: databasePath, ...env } });
}

async function adminJson(args: string[]): Promise<Run & { json: any }> {
  const run = await admin([...args, '--json']);
  return { ...run, json: JSON.parse(run.stdout) };
}

async function withStore<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const db = openDatabase(databasePath);
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

function withDatabase<T>(fn: (db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(databasePath);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  dir = makeTempDir();
  databasePath = path.join(dir, 'data', 'app.db');
  workspaceId = (await adminJson(['workspace', 'create', '--name', 'OAuth CLI', '--plan', 'pro'])).json.id;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('admin CLI: oauth-client and user delete', () => {
  it('prints help for the group and every command without touching the database', async () => {
    const helpDatabase = path.join(dir, 'help-only', 'app.db');
    const commands = [['oauth-client'], ['oauth-client', 'create'], ['oauth-client', 'list'], ['oauth-client', 'delete'], ['user', 'delete']];
    const runs = await Promise.all(commands.map((command) => admin([...command, '--help'], { DATABASE_PATH: helpDatabase })));
    runs.forEach((run, index) => {
      const command = commands[index]!;
      expect(run.code, command.join(' ')).toBe(0);
      expect(run.stdout).toMatch(command.length === 1 ? /Commands:/ : new RegExp(`admin -- ${command.join(' ')}`));
    });
    expect(runs[1]!.stdout).toContain('--confidential');
    expect((await admin(['--help'])).stdout).toContain('oauth-client create');
    expect(existsSync(helpDatabase)).toBe(false);
  });

  it('registers a public client (no secret) and a confidential one whose secret is stored only as a hash', async () => {
    const publicRun = await adminJson([
      'oauth-client', 'create', '--workspace', workspaceId, '--name', 'CLI tool',
      '--redirect-uri', 'http://127.0.0.1:8976/callback', '--redirect-uri', 'http://[::1]:8976/callback', '--scopes', 'tasks:read,projects:read',
    ]);
    expect(publicRun.code, publicRun.stderr).toBe(0);
    expect(Object.keys(publicRun.json)).toEqual(['id']);
    expect(publicRun.json.id).toMatch(/^ocl_[A-Za-z0-9]{20}$/);

    const confidential = await adminJson([
      'oauth-client', 'create', '--workspace', workspaceId, '--name', 'Reporting service',
      '--redirect-uri', 'https://reports.example.com/oauth/callback', '--scopes', 'tasks:read', '--confidential',
    ]);
    expect(confidential.code, confidential.stderr).toBe(0);
    expect(confidential.json.secret).toMatch(/^svc_ocs_[A-Za-z0-9_-]{43}$/);
    const stored = withDatabase((db) => db.prepare('SELECT * FROM oauth_clients WHERE id = ?').get(confidential.json.id)) as Record<string, unknown>;
    expect(stored.secret_hash).toBe(oauthSecretHash(confidential.json.secret));
    expect(JSON.stringify(stored)).not.toContain(confidential.json.secret);

    const text = await admin(['oauth-client', 'create', '--workspace', workspaceId, '--name', 'Text', '--redirect-uri', 'https://a.example/cb', '--scopes', 'tasks:read', '--confidential']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/shown only now[\s\S]*svc_ocs_/);

    const listed = await adminJson(['oauth-client', 'list', '--workspace', workspaceId]);
    expect(listed.code).toBe(0);
    expect(listed.json.clients.map((client: any) => [client.id, client.type])).toEqual([
      [publicRun.json.id, 'public'],
      [confidential.json.id, 'confidential'],
      [expect.any(String), 'confidential'],
    ]);
    expect(listed.json.clients[0]).toMatchObject({ name: 'CLI tool', scopes: ['tasks:read', 'projects:read'], redirectUris: ['http://127.0.0.1:8976/callback', 'http://[::1]:8976/callback'] });
    expect(listed.stdout).not.toContain('svc_ocs_');
  });

  it.each([
    ['plain http on a public host', 'http://app.example.com/callback', /use https/],
    ['a fragment', 'https://app.example.com/callback#done', /fragment/],
    ['a wildcard', 'https://*.example.com/callback', /wildcard/],
    ['a relative URI', '/callback', /absolute/],
    ['another scheme', 'javascript:alert(1)', /scheme javascript/],
    ['credentials', 'https://user:pw@app.example.com/cb', /credentials/],
    ['http on a private address', 'http://10.0.0.5/callback', /use https/],
  ])('refuses a redirect URI with %s, and registers nothing', async (_case, uri, message) => {
    const run = await adminJson(['oauth-client', 'create', '--workspace', workspaceId, '--name', 'Bad', '--redirect-uri', uri, '--scopes', 'tasks:read']);
    expect(run.code).toBe(1);
    expect(run.json.error.message).toMatch(message);
    expect(withDatabase((db) => db.prepare("SELECT count(*) AS n FROM oauth_clients WHERE name = 'Bad'").get())).toEqual({ n: 0 });
  });

  it('refuses unknown scopes, no scopes, a missing redirect URI and an unknown workspace', async () => {
    const base = ['oauth-client', 'create', '--workspace', workspaceId, '--name', 'X'];
    expect((await adminJson([...base, '--redirect-uri', 'https://a.example/cb', '--scopes', 'tasks:read,admin:all'])).json.error.message).toMatch(/Unknown scope "admin:all"/);
    expect((await adminJson([...base, '--redirect-uri', 'https://a.example/cb', '--scopes', ','])).json.error.message).toMatch(/at least one scope/);
    expect((await adminJson([...base, '--scopes', 'tasks:read'])).json.error.message).toMatch(/--redirect-uri/);
    const unknown = await adminJson(['oauth-client', 'create', '--workspace', 'ten_nope', '--name', 'X', '--redirect-uri', 'https://a.example/cb', '--scopes', 'tasks:read']);
    expect(unknown.json.error.message).toMatch(/No workspace with id "ten_nope"/);
  });

  it('deletes a client with what was issued to it; deleting it again is an error', async () => {
    const { json } = await adminJson(['oauth-client', 'create', '--workspace', workspaceId, '--name', 'Doomed', '--redirect-uri', 'https://a.example/cb', '--scopes', 'tasks:read']);
    withDatabase((db) =>
      db
        .prepare("INSERT INTO oauth_records (model, id_hash, payload, client_id) VALUES ('AccessToken', 'h1', '{}', ?), ('Grant', 'h2', '{}', ?), ('AccessToken', 'h3', '{}', 'ocl_other')")
        .run(json.id, json.id),
    );
    const deleted = await adminJson(['oauth-client', 'delete', json.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ id: json.id, deletedRecords: 2 });
    expect(withDatabase((db) => db.prepare('SELECT client_id FROM oauth_records').all())).toEqual([{ client_id: 'ocl_other' }]);
    const again = await adminJson(['oauth-client', 'delete', json.id]);
    expect(again.code).toBe(1);
    expect(again.json.error.message).toMatch(/No oauth client with id/);
  });

  it('user delete removes the user with its tokens, and refuses while tasks are assigned to it', async () => {
    const userId = (await adminJson(['user', 'create', '--workspace', workspaceId, '--role', 'member'])).json.id;
    const pat = await adminJson(['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', 'tasks:read']);
    expect(pat.code).toBe(0);
    withDatabase((db) => db.prepare("INSERT INTO oauth_records (model, id_hash, payload, account_id) VALUES ('RefreshToken', 'r1', '{}', ?)").run(userId));
    const created = await withStore((db) => createConnectorStore(db).createConnector(workspaceId, { kind: 'github', name: 'Left behind' }, { kind: 'USER', id: userId }));
    const deleted = await admin(['user', 'delete', userId]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`connector ${created.id}`);
    expect(deleted.stdout).toContain('GET /v1/connectors?creatorRemoved=true');
    withDatabase((db) => {
      expect(db.prepare('SELECT count(*) AS n FROM users WHERE id = ?').get(userId)).toEqual({ n: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM personal_access_tokens WHERE user_id = ?').get(userId)).toEqual({ n: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM oauth_records WHERE account_id = ?').get(userId)).toEqual({ n: 0 });
    });
    expect((await adminJson(['user', 'delete', userId])).json.error.message).toMatch(/No user with id/);
    const another = (await adminJson(['user', 'create', '--workspace', workspaceId, '--role', 'admin'])).json.id;
    expect((await adminJson(['user', 'delete', another])).json).toEqual({ id: another, workspaceId, flagged: { webhooks: [], connectors: [] } });

    const assignee = (await adminJson(['user', 'create', '--workspace', workspaceId, '--role', 'member'])).json.id;
    withDatabase((db) => {
      db.prepare("INSERT INTO projects (id, workspace_id, name, status, version, created_at, updated_at) VALUES ('prj_cliDelete', ?, 'P', 'ACTIVE', 1, 0, 0)").run(workspaceId);
      db.prepare(
        "INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, assignee_id, version, created_at, updated_at) VALUES ('tsk_cliDelete', ?, 'prj_cliDelete', 'T', 'TODO', 'LOW', 1, ?, 1, 0, 0)",
      ).run(workspaceId, assignee);
    });
    const refused = await adminJson(['user', 'delete', assignee]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toMatch(/1 task is assigned/);
    expect(withDatabase((db) => db.prepare('SELECT count(*) AS n FROM users WHERE id = ?').get(assignee))).toEqual({ n: 1 });
  });
});
