// The database goes away mid-traffic: every answer meanwhile is the declared 503 with Retry-After
// (problem+json on /v1 and on /v1/mcp before the JSON-RPC layer, the ErrorEnvelope on /api/v1; on
// /oauth a problem that also carries OAuth's `error`, or an HTML page where a browser is looking),
// never a 500, and once it is back the same calls succeed. PostgreSQL: a real server of the test's
// own, stopped and started again with pg_ctl (as a restart or a failover does). SQLite, where the server's one connection stays open whatever
// happens to the file: another process holds the write lock (a maintenance tool, a long import, a
// stuck process) for seconds; writes answer 503 meanwhile, reads go on.
import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { setTimeout as wait } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedSecretNames } from '../../src/config.js';
import { secretsCommand } from '../../src/cli/secretsCommand.js';
import type { DemoFixture } from '../../src/demo/demoData.js';
import { startPostgresServer, type OwnPostgresServer } from '../support/postgresServer.js';
import { componentSchemaValidator } from '../support/contractClient.js';
import { makeDemoDatabaseFile, runAdminCli, startServerProcess, stopServerProcesses, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';

const servers: ServerProcess[] = [];
let postgres: OwnPostgresServer | undefined;
let sqliteFile: DemoDatabaseFile | undefined;
afterAll(async () => {
  await stopServerProcesses(servers.map((server) => server.child));
  await postgres?.stop();
  sqliteFile?.remove();
});

type Phase = 'before' | 'outage' | 'after';

const isProblem = componentSchemaValidator('work-platform', 'Problem');

interface Answer {
  /** When the call was sent. */
  phase: Phase;
  /** When its answer arrived: a call sent just before the engine stopped may meet the outage. */
  answeredIn: Phase;
  call: string;
  status: number;
  contentType: string;
  retryAfter: string | null;
  body: string;
}

/**
 * Calls a read and a write of /v1 and a read of /api/v1 in a loop, paced so that the demo
 * workspace's free plan never refuses them, until stopped; every answer is recorded with the phase
 * it was sent in.
 */
function traffic(url: string, fixture: DemoFixture, phaseNow: () => Phase) {
  const answers: Answer[] = [];
  let running = true;
  const send = async (call: string, path: string, init: RequestInit = {}) => {
    const phase = phaseNow();
    try {
      const response = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(15_000) });
      answers.push({
        phase,
        answeredIn: phaseNow(),
        call,
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
      });
    } catch (error) {
      answers.push({ phase, answeredIn: phaseNow(), call, status: 0, contentType: '', retryAfter: null, body: String(error) });
    }
  };
  const token = { authorization: `Bearer ${fixture.workPlatform.tokens.all}` };
  const client = fixture.workPlatform.oauthClient;
  const authorize = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: client.redirectUri,
    scope: client.scopes[0]!,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 'outage',
  });
  const loop = (async () => {
    for (let round = 0; running; round += 1) {
      const calls = [
        send('listTasks', '/v1/tasks?limit=5', { headers: token }),
        send('getPortfolio', '/api/v1/profile', { headers: { authorization: `Bearer ${fixture.portfolio.apiKey}` } }),
        // The caller is looked up (its token's hash) before the JSON-RPC layer sees the message.
        send('mcpToolsList', '/v1/mcp', {
          method: 'POST',
          headers: { ...token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: round, method: 'tools/list' }),
        }),
      ];
      if (round % 3 === 0) {
        calls.push(
          send('createProject', '/v1/projects', {
            method: 'POST',
            headers: { ...token, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify({ name: `Outage ${round}` }),
          }),
          // The client and the refresh token are looked up: invalid_grant while the database answers.
          send('oauthToken', '/oauth/token', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: randomUUID(), client_id: client.id }).toString(),
          }),
          // A browser at the authorization endpoint: the client is looked up, an interaction stored, then a redirect to it.
          send('oauthAuthorize', `/oauth/authorize?${authorize}`, { headers: { accept: 'text/html' }, redirect: 'manual' }),
        );
      }
      await Promise.all(calls);
      await wait(150);
    }
  })();
  return {
    answers,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Waits until a call in the `after` phase succeeds (the engine is back), at most `limitMs`. */
async function recovered(answers: Answer[], limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!answers.some((answer) => answer.phase === 'after' && answer.call === 'listTasks' && answer.status === 200)) {
    if (Date.now() > deadline) throw new Error('no call succeeded after the engine came back');
    await wait(100);
  }
}

function expectDeclaredUnavailability(answers: Answer[]): void {
  const summary = answers.map((answer) => `${answer.phase} ${answer.call} ${answer.status}`);
  // Never a 500, nor a dropped connection.
  expect(answers.filter((answer) => answer.status >= 500 && answer.status !== 503 || answer.status === 0).map((a) => `${a.phase} ${a.call} ${a.status} ${a.body.slice(0, 300)}`)).toEqual([]);
  const unavailable = answers.filter((answer) => answer.status === 503);
  expect(unavailable.length, summary.join('\n')).toBeGreaterThan(0);
  for (const answer of unavailable) {
    expect(Number(answer.retryAfter), answer.body).toBeGreaterThanOrEqual(1);
    if (answer.call === 'getPortfolio') {
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'service_unavailable', status: 503 } });
    } else if (answer.call === 'oauthAuthorize') {
      // A person is looking at the browser: a page, not JSON (the client cannot be checked, so no redirect to it).
      expect(answer.contentType).toMatch(/^text\/html/);
      expect(answer.body).toMatch(/unavailable/i);
    } else {
      expect(answer.contentType).toMatch(/^application\/problem\+json/);
      const body = JSON.parse(answer.body);
      expect(isProblem(body), JSON.stringify(isProblem.errors)).toBe(true);
      expect(body).toMatchObject({ status: 503, type: expect.stringMatching(/\/unavailable$/) });
      // OAuth clients read `error` (RFC 6749 §4.1.2.1's code for this case).
      if (answer.call === 'oauthToken') expect(body).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    }
  }
  // Every call answered before the outage, and once the engine is back, succeeded.
  const expected: Record<string, number> = { listTasks: 200, getPortfolio: 200, createProject: 201, mcpToolsList: 200, oauthToken: 400, oauthAuthorize: 303 };
  for (const phase of ['before', 'after'] as const) {
    const failed = answers.filter((answer) => answer.phase === phase && answer.answeredIn === phase && answer.status !== expected[answer.call]);
    expect(failed.map((a) => `${a.phase} ${a.call} ${a.status} ${a.body.slice(0, 200)}`)).toEqual([]);
  }
}

describe('PostgreSQL stopped and started again mid-traffic', () => {
  it('answers 503 with Retry-After meanwhile, never 500, and serves again once it is back', async () => {
    postgres = await startPostgresServer();
    const databaseUrl = await postgres.createDatabase();
    const { json: secrets } = await secretsCommand.run({ db: () => Promise.reject(new Error('unused')), databasePath: '', env: {}, now: Date.now, values: {}, positionals: [] });
    const env = { DATABASE_URL: databaseUrl, ...(secrets as Record<(typeof sharedSecretNames)[number], string>) };
    const demo = await runAdminCli(['demo', '--json'], { env });
    expect(demo.stderr).toBe('');
    const fixture = JSON.parse(demo.stdout) as DemoFixture;
    const server = await startServerProcess({ ...env, WEBHOOK_WORKER: 'off', DATABASE_CONNECT_TIMEOUT_MS: '1000' });
    servers.push(server);

    let phase: Phase = 'before';
    const load = traffic(server.url, fixture, () => phase);
    await wait(1_500);
    phase = 'outage';
    await postgres.halt();
    await wait(3_000);
    await postgres.resume();
    // Calls sent from now on must succeed once the pool has made new connections.
    await wait(1_000);
    phase = 'after';
    await recovered(load.answers, 15_000);
    await wait(1_500);
    await load.stop();

    expectDeclaredUnavailability(load.answers);
    // /oauth and the MCP caller lookup met the outage too, and answered it as such.
    for (const call of ['mcpToolsList', 'oauthToken', 'oauthAuthorize']) {
      expect(load.answers.filter((answer) => answer.call === call && answer.status === 503).length, call).toBeGreaterThan(0);
    }
    // Every failure was understood as the outage: nothing reached the funnel as an unknown error.
    expect(server.output()).not.toContain('unhandled error');
    expect(server.output()).not.toContain('oauth server error');
  }, 90_000);
});

describe('SQLite write-locked by another process mid-traffic', () => {
  it('answers 503 with Retry-After meanwhile, never 500, and serves again once the lock is gone', async () => {
    sqliteFile = await makeDemoDatabaseFile('contract-api-outage-');
    const server = await startServerProcess({ DATABASE_PATH: sqliteFile.databasePath, DEMO_DATA: 'off', WEBHOOK_WORKER: 'off' });
    servers.push(server);

    let phase: Phase = 'before';
    const load = traffic(server.url, sqliteFile.fixture, () => phase);
    await wait(1_500);
    phase = 'outage';
    // Another process (an import, a backup, a stuck maintenance script) takes the write lock and keeps it.
    const locker = new BetterSqlite3(sqliteFile.databasePath);
    locker.pragma('busy_timeout = 5000');
    locker.exec('BEGIN IMMEDIATE');
    locker.prepare("UPDATE tenants SET name = name WHERE id = 'none'").run();
    await wait(3_000);
    locker.exec('COMMIT');
    locker.close();
    await wait(200);
    phase = 'after';
    await recovered(load.answers, 15_000);
    await wait(1_500);
    await load.stop();

    expectDeclaredUnavailability(load.answers);
    // The authorization endpoint stores an interaction: a write, refused as busy with a page.
    expect(load.answers.filter((answer) => answer.call === 'oauthAuthorize' && answer.status === 503).length).toBeGreaterThan(0);
  }, 60_000);
});
