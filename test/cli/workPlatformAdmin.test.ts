import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { hashPersonalAccessToken } from '../../src/auth/patFormat.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { verifySessionToken } from '../../src/auth/sessionTokens.js';
import { makeTempDir } from '../store/factories.js';
import { runAdminInProcess, type FinishedProcess as Run } from '../support/serverProcess.js';

let dir: string;
let databasePath: string;

/** Runs the CLI's entry on this file's database, in this process (test/cli/admin.test.ts runs it as a child process too). */
function admin(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runAdminInProcess(args, { env: { SESSION_JWT_SECRET: '', DATABASE_PATH: databasePath, ...env } });
}

/** Runs with --json and parses stdout, which must be exactly one JSON object. */
async function adminJson(args: string[], env: Record<string, string> = {}): Promise<Run & { json: Record<string, unknown> }> {
  const run = await admin([...args, '--json'], env);
  const json = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(typeof json).toBe('object');
  return { ...run, json };
}

async function created(args: string[]): Promise<string> {
  const run = await adminJson(args);
  expect(run.code, run.stderr).toBe(0);
  return String(run.json.id);
}

async function withDatabase<T>(fn: (db: ReturnType<typeof openDatabase>) => T | Promise<T>): Promise<T> {
  const db = openDatabase(databasePath);
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

beforeAll(() => {
  dir = makeTempDir();
  databasePath = path.join(dir, 'data', 'app.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('admin CLI: Work-Platform commands', () => {
  it('prints help for every new group and command without touching the database', async () => {
    const helpDatabase = path.join(dir, 'help-only', 'app.db');
    const commands = [
      ['workspace'],
      ['user'],
      ['session'],
      ['pat'],
      ['workspace', 'create'],
      ['workspace', 'limits', 'show'],
      ['workspace', 'limits', 'set'],
      ['user', 'create'],
      ['session', 'create'],
      ['session', 'revoke'],
      ['pat', 'create'],
      ['pat', 'revoke'],
      ['pat', 'rotate'],
      ['pat', 'list'],
    ];
    const runs = await Promise.all(commands.map((command) => admin([...command, '--help'], { DATABASE_PATH: helpDatabase })));
    runs.forEach((run, index) => {
      const command = commands[index]!;
      expect(run.code, command.join(' ')).toBe(0);
      expect(run.stdout).toMatch(command.length === 1 ? /Commands:/ : new RegExp(`admin -- ${command.join(' ')}`));
    });
    const main = await admin(['--help']);
    for (const usage of ['workspace create', 'workspace limits set', 'user create', 'session create', 'pat create', 'pat rotate', 'SESSION_JWT_SECRET']) {
      expect(main.stdout).toContain(usage);
    }
    expect((await admin(['session', 'create', '-h'])).stdout).toContain('--expires-in');
    expect(existsSync(helpDatabase)).toBe(false);
  });

  it('creates a workspace, sets and clears its limit overrides, and prints the limits in force', async () => {
    const id = await created(['workspace', 'create', '--name', 'Acme', '--plan', 'pro']);
    expect(id).toMatch(/^ten_[A-Za-z0-9]{20}$/);
    const set = await adminJson(['workspace', 'limits', 'set', id, '--read', '5', '--monthly-quota', '0', '--webhook-retry-delays', '30s,2m,10m,1h,1d,45']);
    expect(set.code, set.stderr).toBe(0);
    const retry = [30, 120, 600, 1800, 7200, 28800, 86400];
    expect(set.json).toEqual({
      id,
      plan: 'pro',
      tier: 'pro',
      limits: {
        readPerMinute: { inForce: 5, planDefault: 1200, override: 5 },
        writePerMinute: { inForce: 300, planDefault: 300, override: null },
        aiPerMinute: { inForce: 60, planDefault: 60, override: null },
        monthlyQuota: { inForce: 0, planDefault: 100_000, override: 0 },
        aiDailySpendCapCents: { inForce: 5000, planDefault: 5000, override: null },
        webhookRetryDelaysSeconds: { inForce: [30, 120, 600, 3600, 86400, 45], planDefault: retry, override: [30, 120, 600, 3600, 86400, 45] },
      },
    });
    const more = await adminJson(['workspace', 'limits', 'set', id, '--write', '7', '--ai', '3', '--ai-daily-spend-cap', '250']);
    expect(more.json.limits).toMatchObject({
      readPerMinute: { override: 5 },
      writePerMinute: { inForce: 7, override: 7 },
      aiPerMinute: { inForce: 3, override: 3 },
      aiDailySpendCapCents: { inForce: 250, override: 250 },
    });
    const shown = await adminJson(['workspace', 'limits', 'show', id]);
    expect(shown.json).toEqual(more.json);
    const cleared = await adminJson(['workspace', 'limits', 'set', id, '--clear']);
    expect(Object.values(cleared.json.limits as Record<string, { override: unknown }>).every((entry) => entry.override === null)).toBe(true);
    const text = await admin(['workspace', 'limits', 'set', id, '--read', '9']);
    expect(text.stdout).toMatch(/readPerMinute\s+9\s+plan 1200\s+\(override\)/);
  });

  it('creates users and mints session tokens with the server\'s key file, expired ones included', async () => {
    const workspaceId = await created(['workspace', 'create', '--name', 'Sessions', '--plan', 'free']);
    const userId = await created(['user', 'create', '--workspace', workspaceId, '--role', 'admin', '--name', 'Ada', '--email', 'ada@example.com']);
    expect(userId).toMatch(/^usr_[A-Za-z0-9]{20}$/);

    const session = await adminJson(['session', 'create', '--user', userId]);
    expect(session.code, session.stderr).toBe(0);
    expect(Object.keys(session.json)).toEqual(['token']);
    const keyFile = path.join(dir, 'data', 'session-jwt.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const secret = new Uint8Array(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64url'));
    expect(await verifySessionToken(secret, String(session.json.token), Date.now())).toMatchObject({ ok: true, userId, workspaceId });
    expect(await verifySessionToken(secret, String(session.json.token), Date.now() + 3601_000)).toEqual({ ok: false, reason: 'expired' });

    for (const form of [['--expires-in', '-1h'], ['--expires-in=-1h']]) {
      const expired = await adminJson(['session', 'create', '--user', userId, ...form]);
      expect(expired.code, expired.stderr).toBe(0);
      expect(await verifySessionToken(secret, String(expired.json.token), Date.now())).toEqual({ ok: false, reason: 'expired' });
    }
    const day = await adminJson(['session', 'create', '--user', userId, '--expires-in', '24h']);
    expect(await verifySessionToken(secret, String(day.json.token), Date.now() + 23 * 3_600_000)).toMatchObject({ ok: true });
    const week = await admin(['session', 'create', '--user', userId, '--expires-in', '7d']);
    expect(week.code).toBe(1);
    expect(week.stderr).toContain('--expires-in must be at most 24h');

    const configured = Buffer.alloc(32, 5);
    const fromEnv = await adminJson(['session', 'create', '--user', userId], { SESSION_JWT_SECRET: configured.toString('base64url') });
    expect(await verifySessionToken(new Uint8Array(configured), String(fromEnv.json.token), Date.now())).toMatchObject({ ok: true, userId });
    expect(await verifySessionToken(secret, String(fromEnv.json.token), Date.now())).toEqual({ ok: false, reason: 'invalid' });

    const text = await admin(['session', 'create', '--user', userId, '--expires-in', '-30m']);
    expect(text.stdout).toMatch(/already expired at/);
    expect(text.stdout).toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);

    const revoked = await adminJson(['session', 'revoke', '--user', userId]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json).toEqual({ id: userId, sessionsValidAfter: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    const db = openDatabase(databasePath);
    try {
      expect(db.prepare('SELECT sessions_valid_after FROM users WHERE id = ?').pluck().get(userId)).toBe(Date.parse(String(revoked.json.sessionsValidAfter)));
    } finally {
      db.close();
    }
    expect((await admin(['session', 'revoke', '--user', 'usr_missing'])).code).toBe(1);
  });

  it('creates, lists, rotates and revokes personal access tokens', async () => {
    const workspaceId = await created(['workspace', 'create', '--name', 'Tokens', '--plan', 'team']);
    const userId = await created(['user', 'create', '--workspace', workspaceId, '--role', 'member']);
    const first = await adminJson(['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', 'ai:use,tasks:write,tasks:read']);
    expect(first.json).toEqual({ id: expect.stringMatching(/^pat_[A-Za-z0-9]{20}$/), token: expect.stringMatching(/^svc_pat_[A-Za-z0-9_-]{43}$/) });
    const none = await adminJson(['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', '', '--expires-at', '2099-01-01T00:00:00Z']);
    expect(none.code, none.stderr).toBe(0);

    const rotated = await adminJson(['pat', 'rotate', String(first.json.id)]);
    expect(rotated.json).toEqual({ id: expect.stringMatching(/^pat_/), token: expect.stringMatching(/^svc_pat_/) });
    const revoked = await adminJson(['pat', 'revoke', String(none.json.id)]);
    expect(revoked.json).toEqual({ id: none.json.id, revokedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/) });

    const listed = await adminJson(['pat', 'list', '--workspace', workspaceId]);
    expect(listed.json.tokens).toEqual([
      {
        id: first.json.id,
        userId,
        prefix: String(first.json.token).slice(0, 12),
        scopes: ['tasks:read', 'tasks:write', 'ai:use'],
        state: 'revoked',
        createdAt: expect.any(String),
        expiresAt: null,
        revokedAt: expect.any(String),
        rotatedTo: rotated.json.id,
      },
      expect.objectContaining({ id: none.json.id, scopes: [], state: 'revoked', expiresAt: '2099-01-01T00:00:00.000Z' }),
      expect.objectContaining({ id: rotated.json.id, scopes: ['tasks:read', 'tasks:write', 'ai:use'], state: 'active', rotatedTo: null }),
    ]);
    expect(listed.stdout).not.toContain(String(first.json.token));

    await withDatabase(async (db) => {
      const tokens = createPersonalAccessTokenStore(db);
      expect(await tokens.findPatCaller(hashPersonalAccessToken(String(rotated.json.token)))).toMatchObject({ workspaceId, userId, revokedAt: null });
      expect((await tokens.findPatCaller(hashPersonalAccessToken(String(first.json.token))))?.revokedAt).not.toBeNull();
    });
    expect((await admin(['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', 'projects:read'])).stdout).toMatch(/shown only now/);
  });

  it('reports errors on stderr with exit code 1, and as one JSON object with --json', async () => {
    const workspaceId = await created(['workspace', 'create', '--name', 'Errors', '--plan', 'free']);
    const userId = await created(['user', 'create', '--workspace', workspaceId, '--role', 'owner']);
    const otherUser = await created(['user', 'create', '--workspace', await created(['workspace', 'create', '--name', 'Other', '--plan', 'free']), '--role', 'owner']);
    const revokedPat = String((await adminJson(['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', 'tasks:read'])).json.id);
    await admin(['pat', 'revoke', revokedPat]);
    const cases: [string[], RegExp][] = [
      [['workspace', 'create', '--name', 'x', '--plan', 'gold'], /--plan must be one of free, pro, team, business, enterprise/],
      [['workspace', 'create', '--plan', 'free'], /Missing required option --name/],
      [['workspace', 'limits', 'set', workspaceId], /Give at least one limit/],
      [['workspace', 'limits', 'set', workspaceId, '--clear', '--read', '5'], /do not combine/],
      [['workspace', 'limits', 'set', workspaceId, '--read', '0'], /readPerMinute must be a whole number from 1/],
      [['workspace', 'limits', 'set', workspaceId, '--read', 'many'], /--read must be a whole number/],
      [['workspace', 'limits', 'set', workspaceId, '--webhook-retry-delays', '30s,soon'], /--webhook-retry-delays takes durations/],
      [['workspace', 'limits', 'set', workspaceId, '--webhook-retry-delays', '-30s'], /--webhook-retry-delays takes durations/],
      [['workspace', 'limits', 'set', 'ten_missing', '--read', '5'], /No workspace with id "ten_missing"/],
      [['workspace', 'limits', 'show', 'ten_missing'], /No workspace with id "ten_missing"/],
      [['user', 'create', '--workspace', workspaceId, '--role', 'guest'], /--role must be one of owner, admin, member/],
      [['user', 'create', '--workspace', 'ten_missing', '--role', 'owner'], /No workspace with id "ten_missing"/],
      [['session', 'create', '--user', 'usr_missing'], /No user with id "usr_missing"/],
      [['session', 'create', '--user', userId, '--expires-in', '1 hour'], /--expires-in takes durations like 30m, 1h, 7d or -1h/],
      [['session', 'create', '--user', userId], /SESSION_JWT_SECRET must be at least 32 bytes/],
      [['pat', 'create', '--workspace', workspaceId, '--user', userId], /Missing required option --scopes/],
      [['pat', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', 'tasks:read,tasks:delete'], /Unknown scope "tasks:delete"/],
      [['pat', 'create', '--workspace', workspaceId, '--user', otherUser, '--scopes', 'tasks:read'], /No user with id/],
      [['pat', 'rotate', revokedPat], /is revoked; only an active token can be rotated/],
      [['pat', 'revoke', 'pat_missing'], /No personal access token with id "pat_missing"/],
      [['pat', 'list', '--workspace', 'ten_missing'], /No workspace with id "ten_missing"/],
      [['pat', 'revoke'], /Missing the id/],
    ];
    const runs = await Promise.all(
      cases.map(([args], index) => adminJson(args, index === 14 ? { SESSION_JWT_SECRET: 'too-short' } : {})),
    );
    runs.forEach((run, index) => {
      const [args, message] = cases[index]!;
      const label = args.join(' ');
      expect(run.code, label).toBe(1);
      expect(run.stderr, label).toMatch(/^Error: /);
      expect(run.json, label).toEqual({ error: { message: expect.stringMatching(message), details: [] } });
    });
  });
});
