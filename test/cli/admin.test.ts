import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { verifySessionToken } from '../../src/auth/sessionTokens.js';
import { makeDocument, makeTempDir, publishedReads } from '../store/factories.js';
import { runAdminCli, runAdminInProcess, type ChildOptions, type FinishedProcess as Run } from '../support/serverProcess.js';

let dir: string;
let databasePath: string;

/**
 * Runs the CLI on this file's database: its entry in this process, or with `child` a child process as an operator
 * runs it (for what only a process has: the exit code, standard input and output).
 */
function admin(args: string[], options: ChildOptions & { child?: boolean } = {}): Promise<Run> {
  const { child, ...childOptions } = options;
  const run = child || childOptions.input !== undefined ? runAdminCli : runAdminInProcess;
  return run(args, { ...childOptions, env: { SESSION_JWT_SECRET: '', DATABASE_PATH: databasePath, ...childOptions.env } });
}

/** Runs with --json and parses stdout, which must be exactly one JSON object. */
async function adminJson(args: string[], options: Parameters<typeof admin>[1] = {}): Promise<Run & { json: Record<string, unknown> }> {
  const run = await admin([...args, '--json'], options);
  const json = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(typeof json).toBe('object');
  return { ...run, json };
}

beforeAll(() => {
  dir = makeTempDir();
  databasePath = path.join(dir, 'db', 'app.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('admin CLI', () => {
  it('prints help for the CLI, each group and every command, without touching the database', async () => {
    const helpDatabase = path.join(dir, 'help-only', 'app.db');
    const commands = [[], ['tenant'], ['key'], ['portfolio'], ['tenant', 'create'], ['tenant', 'list'], ['key', 'create'], ['key', 'revoke'], ['key', 'list'], ['portfolio', 'import'], ['portfolio', 'export'], ['demo']];
    const runs = await Promise.all(commands.map((command) => admin([...command, '--help'], { env: { DATABASE_PATH: helpDatabase } })));
    runs.forEach((run, index) => {
      expect(run.code, commands[index]?.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/Usage|Commands/);
      const command = commands[index] ?? [];
      if (command.length === 2 || command[0] === 'demo') expect(run.stdout).toContain(`admin -- ${command.join(' ')}`);
    });
    expect(runs[0]?.stdout).toContain('DATABASE_PATH');
    expect((await admin(['key', 'create', '-h'])).stdout).toContain('--expires-at');
    expect(existsSync(helpDatabase)).toBe(false);
  });

  it('creates and lists tenants', async () => {
    const created = await adminJson(['tenant', 'create', '--name', 'Acme Studio']);
    expect(created.code).toBe(0);
    expect(created.json).toEqual({ id: expect.stringMatching(/^ten_[A-Za-z0-9]+$/) });
    const listed = await adminJson(['tenant', 'list']);
    expect(listed.json).toEqual({ tenants: [{ id: created.json.id, name: 'Acme Studio', createdAt: expect.any(String) }] });
    const text = await admin(['tenant', 'list']);
    expect(text.stdout).toContain(String(created.json.id));
    expect(text.stdout).toContain('Acme Studio');
  });

  it('creates, lists and revokes keys', async () => {
    const tenantId = String((await adminJson(['tenant', 'create', '--name', 'Keys'])).json.id);
    const created = await adminJson(['key', 'create', '--tenant', tenantId, '--expires-at', '2099-01-01T00:00:00Z', '--rate-limit', '30']);
    expect(created.json).toEqual({ id: expect.stringMatching(/^key_[A-Za-z0-9]+$/), key: expect.stringMatching(/^pfk_[A-Za-z0-9_-]{43}$/) });
    const key = String(created.json.key);

    const plain = await admin(['key', 'create', '--tenant', tenantId]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/pfk_[A-Za-z0-9_-]{43}/);
    expect(plain.stdout).toMatch(/shown only now/);

    const listed = await adminJson(['key', 'list', '--tenant', tenantId]);
    const keys = listed.json.keys as Record<string, unknown>[];
    expect(keys).toHaveLength(2);
    expect(keys[0]).toEqual({
      id: created.json.id,
      prefix: key.slice(0, 12),
      state: 'active',
      createdAt: expect.any(String),
      expiresAt: '2099-01-01T00:00:00.000Z',
      revokedAt: null,
      rateLimit: 30,
    });
    expect(listed.stdout).not.toContain(key);

    const revoked = await adminJson(['key', 'revoke', String(created.json.id)]);
    expect(revoked.json).toEqual({ id: created.json.id, revokedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    const again = await adminJson(['key', 'revoke', String(created.json.id)]);
    expect(again.json).toEqual(revoked.json);
    const after = await adminJson(['key', 'list', '--tenant', tenantId]);
    expect((after.json.keys as { state: string }[]).map((entry) => entry.state)).toEqual(['revoked', 'active']);
  });

  it('reports errors on stderr with exit code 1, and as one JSON object with --json', async () => {
    const cases: string[][] = [
      ['key', 'create', '--tenant', 'ten_missing'],
      ['key', 'create', '--tenant', 'ten_x', '--rate-limit', '0'],
      ['key', 'create', '--tenant', 'ten_x', '--expires-at', 'tomorrow'],
      ['key', 'revoke', 'key_missing'],
      ['key', 'list', '--tenant', 'ten_missing'],
      ['tenant', 'create'],
      ['tenant', 'create', '--name', 'x', '--colour', 'red'],
      ['tenant', 'list', 'extra'],
      ['frobnicate'],
      [],
    ];
    const runs = await Promise.all(cases.map((args) => adminJson(args)));
    runs.forEach((run, index) => {
      const label = cases[index]?.join(' ') ?? '';
      expect(run.code, label).toBe(1);
      expect(run.stderr, label).toMatch(/^Error: /);
      expect(run.json, label).toEqual({ error: { message: expect.any(String), details: [] } });
    });
    expect(String((runs[0]?.json.error as { message: string }).message)).toContain('ten_missing');
    const text = await admin(['key', 'revoke', 'key_missing'], { child: true });
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain('No API key with id "key_missing"');
  });

  it('imports and exports a portfolio, round-tripping the document', async () => {
    const tenantId = String((await adminJson(['tenant', 'create', '--name', 'Portfolio'])).json.id);
    const file = path.join(dir, 'portfolio.json');
    writeFileSync(file, JSON.stringify(makeDocument()));
    const imported = await adminJson(['portfolio', 'import', '--tenant', tenantId, '--file', file]);
    expect(imported.code).toBe(0);
    expect(imported.json).toMatchObject({ tenantId, published: true, assets: 2, updatedAt: expect.any(String) });
    expect((imported.json.items as Record<string, unknown>).posts).toEqual({ total: 3, published: 2 });

    const exported = await adminJson(['portfolio', 'export', '--tenant', tenantId]);
    expect(exported.json).toMatchObject({ formatVersion: 1, published: true });
    const exportFile = path.join(dir, 'exported.json');
    writeFileSync(exportFile, exported.stdout);
    expect((await admin(['portfolio', 'import', '--tenant', tenantId, '--file', exportFile])).code).toBe(0);
    const reExported = await admin(['portfolio', 'export', '--tenant', tenantId]);
    expect(JSON.parse(reExported.stdout)).toEqual(exported.json);

    const fromStdin = await adminJson(['portfolio', 'import', '--tenant', tenantId, '--file', '-'], { input: exported.stdout });
    expect(fromStdin.code).toBe(0);

    const text = await admin(['portfolio', 'import', '--tenant', tenantId, '--file', file], { child: true });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/posts\s+3 \(2 published\)/);
  });

  it('refuses a bad document with every failing path and changes nothing', async () => {
    const tenantId = String((await adminJson(['tenant', 'create', '--name', 'Bad'])).json.id);
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(makeDocument({ posts: [{ slug: 'Bad Slug', published: true }], links: [{ published: true, kind: 'website', label: 'x', url: 'javascript:alert(1)' }] })));
    const run = await adminJson(['portfolio', 'import', '--tenant', tenantId, '--file', file]);
    expect(run.code).toBe(1);
    const details = (run.json.error as { details: { path: string; message: string }[] }).details;
    expect(details.map((detail) => detail.path)).toEqual(
      expect.arrayContaining(['/posts/0/slug', '/posts/0/title', '/posts/0/excerpt', '/posts/0/bodyHtml', '/posts/0/publishedAt', '/links/0/url']),
    );
    expect(run.stderr).toContain('/links/0/url');
    expect((await admin(['portfolio', 'export', '--tenant', tenantId])).code).toBe(1);

    const notJson = path.join(dir, 'not.json');
    writeFileSync(notJson, '{ nope');
    const invalid = await adminJson(['portfolio', 'import', '--tenant', tenantId, '--file', notJson]);
    expect(invalid.code).toBe(1);
    expect(invalid.json).toEqual({ error: { message: expect.stringMatching(/not valid JSON/), details: [{ path: '', message: expect.any(String) }] } });
    const missing = await adminJson(['portfolio', 'import', '--tenant', tenantId, '--file', path.join(dir, 'missing.json')]);
    expect(missing.code).toBe(1);
  });

  it('loads the demo data set and prints the fixture; loading again issues new keys only', async () => {
    const first = await adminJson(['demo']);
    expect(first.code).toBe(0);
    const demo = first.json.portfolio as Record<string, unknown>;
    expect(Object.keys(first.json)).toEqual(['portfolio', 'workPlatform']);
    const work = first.json.workPlatform as { workspaceId: string; taskIds: string[]; tokens: Record<string, string> };
    expect(work.workspaceId).toMatch(/^ten_/);
    expect(work.taskIds.length).toBeGreaterThanOrEqual(120);
    expect(Object.keys(work.tokens).sort()).toEqual(['all', 'expiredSession', 'memberSession', 'noScopes', 'readOnly', 'revoked', 'session']);
    const secret = new Uint8Array(Buffer.from(readFileSync(path.join(dir, 'db', 'session-jwt.key'), 'utf8').trim(), 'base64url'));
    expect(await verifySessionToken(secret, String(work.tokens.session), Date.now())).toMatchObject({ ok: true, workspaceId: work.workspaceId });
    for (const member of ['apiKey', 'revokedApiKey', 'expiredApiKey', 'unpublishedApiKey', 'otherTenantApiKey']) {
      expect(demo[member], member).toMatch(/^pfk_[A-Za-z0-9_-]{43}$/);
    }
    expect(demo.published).toMatchObject({
      outcomes: expect.arrayContaining(['checkout-conversion-lift']),
      posts: expect.arrayContaining(['designing-for-trust']),
      pages: expect.arrayContaining(['about']),
    });
    expect(demo.otherTenantOnly).toEqual({ posts: [expect.any(String)] });

    const second = await adminJson(['demo']);
    const again = second.json.portfolio as Record<string, unknown>;
    expect(again.tenantId).toBe(demo.tenantId);
    expect(again.apiKey).not.toBe(demo.apiKey);

    const db = openDatabase(databasePath);
    try {
      expect((await publishedReads(db).list(String(demo.tenantId), 'post', { limit: 100, offset: 0 }))?.items.map((post) => post.slug)).toEqual(
        (demo.published as { posts: string[] }).posts,
      );
    } finally {
      db.close();
    }
    const text = await admin(['demo']);
    expect(text.stdout).toMatch(/API key\s+pfk_/);
    expect(text.stdout).toMatch(/PAT, every scope\s+svc_pat_/);
    expect(text.stdout).toMatch(/owner session\s+eyJ/);
  });

  it('defaults DATABASE_PATH to data/app.db in the working directory', async () => {
    const cwd = makeTempDir();
    try {
      const run = await runAdminCli(['tenant', 'create', '--name', 'Here', '--json'], { cwd, env: { DATABASE_PATH: undefined } });
      expect(run.code, run.stderr).toBe(0);
      expect(existsSync(path.join(cwd, 'data', 'app.db'))).toBe(true);
      expect(readFileSync(path.join(cwd, 'data', 'app.db')).length).toBeGreaterThan(0);
      // It says that it created the database rather than opened one; stdout stays the JSON answer.
      expect(run.stderr).toBe(`No database at ${path.join(cwd, 'data', 'app.db')} (DATABASE_PATH is not set): creating a new, empty one. Set DATABASE_PATH to open the server's.\n`);
      expect(JSON.parse(run.stdout)).toEqual({ id: expect.any(String) });
      // The next run opens it, without a word.
      const again = await runAdminCli(['tenant', 'list', '--json'], { cwd, env: { DATABASE_PATH: undefined } });
      expect(again.stderr).toBe('');
      expect((JSON.parse(again.stdout) as { tenants: unknown[] }).tenants).toHaveLength(1);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
