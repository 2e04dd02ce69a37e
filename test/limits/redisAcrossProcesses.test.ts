// Server processes (npm start, child processes) that count their limits in one real redis-server:
// exact limits across processes, and what an outage of Redis does to the answers and the log.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openDatabase } from '../../src/store/database.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { ContractClient, type CheckedResponse } from '../support/contractClient.js';
import { redisLimitsEnv, startRedisServer, type RedisServer } from '../support/redisServer.js';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, waitForOutput, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';
import { expectProblem, jsonHeaders } from '../support/workPlatform.js';

const WINDOW_MS = 60_000;

/** The /v1 buckets are real 60-second windows: a burst must not straddle two of them. */
async function awayFromWindowEnd(): Promise<void> {
  const intoWindow = Date.now() % WINDOW_MS;
  if (intoWindow > WINDOW_MS - 5_000) await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - intoWindow + 50));
}

describe('two server processes on one Redis and one database', () => {
  const children: ChildProcess[] = [];
  let redis: RedisServer;
  let database: DemoDatabaseFile;
  let portfolio: ContractClient[];
  let workPlatform: ContractClient[];
  let portfolioKey: string;

  beforeAll(async () => {
    redis = await startRedisServer();
    database = await makeDemoDatabaseFile('contract-api-redis-limits-');
    const db = openDatabase(database.databasePath);
    portfolioKey = (await issueApiKey(createApiKeyStore(db), { tenantId: database.fixture.portfolio.tenantId, rateLimit: 10 })).key;
    createWorkspaceStore(db).setWorkspaceLimits(database.fixture.workPlatform.workspaceId, { writePerMinute: 8, readPerMinute: 100_000, monthlyQuota: 1_000_000 });
    db.close();
    // One portfolio window spans the whole test; both processes share one key prefix, as one deployment.
    // A long command timeout: on a starved machine an event loop that stalls past the default would
    // count as Redis unreachable and fail open, which the outage test below covers; here, exactness.
    const env = {
      DATABASE_PATH: database.databasePath,
      PORTFOLIO_RATE_WINDOW_SECONDS: String(10 * 365 * 24 * 3600),
      ...redisLimitsEnv(redis),
      REDIS_COMMAND_TIMEOUT_MS: '10000',
    };
    const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    children.push(...servers.map((server) => server.child));
    portfolio = servers.map((server) => new ContractClient(server.url));
    workPlatform = servers.map((server) => new ContractClient(server.url, 'work-platform', 'Problem'));
  });

  afterAll(async () => {
    const codes = await stopServerProcesses(children);
    await redis?.stop();
    database?.remove();
    expect(codes).toEqual(codes.map(() => 0));
  });

  it("admit exactly a portfolio key's allowance from a concurrent burst at both", async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, index) => portfolio[index % 2]!.get('/api/v1/profile', bearer(portfolioKey))));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(refused).toHaveLength(20);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(answer.body.error.code).toBe('rate_limited');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(answers.map((answer) => answer.headers['x-ratelimit-remaining']).filter((remaining) => remaining !== '0').sort()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
  });

  it("admit exactly a workspace's write allowance from a concurrent burst at both", async () => {
    const { tokens, projectId } = database.fixture.workPlatform;
    await awayFromWindowEnd();
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        workPlatform[index % 2]!.request('POST', '/v1/tasks', { headers: jsonHeaders(tokens.all), body: JSON.stringify({ projectId, title: `Burst ${index}` }) }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(8);
    for (const answer of answers.filter((answer) => answer.status !== 201)) {
      expect(expectProblem(answer, 429, 'rate-limited').rateLimit).toMatchObject({ class: 'write', limit: 8 });
    }
  });

  it("admit exactly a workspace's monthly quota from a concurrent burst at both, and report it", async () => {
    const { workspaceId, tokens } = database.fixture.workPlatform;
    const db = openDatabase(database.databasePath);
    const usedBefore = Number((await workPlatform[0]!.get('/v1/workspace/limits', bearer(tokens.session))).body.monthlyQuota.usedThisMonth);
    try {
      createWorkspaceStore(db).setWorkspaceLimits(workspaceId, { monthlyQuota: usedBefore + 7 });
    } finally {
      db.close();
    }
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => workPlatform[index % 2]!.get('/v1/tasks?limit=1', bearer(tokens.all))));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(7);
    for (const answer of answers.filter((answer) => answer.status !== 200)) expectProblem(answer, 429, 'quota-exceeded');
    for (const client of workPlatform) {
      expect((await client.get('/v1/workspace/limits', bearer(tokens.session))).body.monthlyQuota.usedThisMonth).toBe(usedBefore + 7);
    }
  });
});

describe('a server process while Redis is down', () => {
  const password = 'redis-pass-Zq81';
  let redis: RedisServer;
  let database: DemoDatabaseFile;
  let server: ServerProcess;
  let portfolio: ContractClient;
  let workPlatform: ContractClient;

  beforeAll(async () => {
    redis = await startRedisServer({ password });
    database = await makeDemoDatabaseFile('contract-api-redis-outage-');
    server = await startServerProcess({ DATABASE_PATH: database.databasePath, ...redisLimitsEnv(redis), REDIS_COMMAND_TIMEOUT_MS: '100' });
    portfolio = new ContractClient(server.url);
    workPlatform = new ContractClient(server.url, 'work-platform', 'Problem');
  });

  afterAll(async () => {
    if (server) await stopServerProcesses([server.child]);
    await redis?.stop();
    database?.remove();
  });

  const logged = (message: RegExp) => server.output().split('\n').filter((line) => line.startsWith('{') && message.test((JSON.parse(line) as { msg: string }).msg));
  /** One portfolio and one /v1 call; a hang would fail the call at the client's 10-second abort (far beyond the 100 ms command timeout). */
  async function calls(): Promise<CheckedResponse[]> {
    const { apiKey } = database.fixture.portfolio;
    const { tokens } = database.fixture.workPlatform;
    return [
      await portfolio.request('GET', '/api/v1/profile', { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) }),
      await workPlatform.request('GET', '/v1/tasks?limit=1', { headers: bearer(tokens.all), signal: AbortSignal.timeout(10_000) }),
    ];
  }
  const expectAdmitted = (answers: CheckedResponse[]) => {
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('120');
    expect(answers[1]!.headers['x-ratelimit-class']).toBe('read');
  };
  /** Calls until the process logs `message`: it finds out that a paused Redis answers again only with the next count it sends. */
  async function callUntilLogged(message: RegExp): Promise<void> {
    while (logged(message).length === 0) {
      expectAdmitted(await calls());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('answers on its own counts (fail open) when Redis hangs and when it is gone, logging each outage once and each recovery once', async () => {
    expectAdmitted(await calls());
    expect(logged(/Redis unreachable/)).toHaveLength(0);

    // Hung: the connection stays open, counts time out.
    redis.pause();
    try {
      for (let round = 0; round < 5; round += 1) expectAdmitted(await calls());
      expect(logged(/Redis unreachable/)).toHaveLength(1);
    } finally {
      redis.resume();
    }
    await callUntilLogged(/Redis reachable again/);

    // Gone: the connection is closed, reconnection goes on in the background.
    await redis.kill();
    await waitForOutput(server, /Redis unreachable[^\n]*\n[\s\S]*Redis reachable again[^\n]*\n[\s\S]*Redis unreachable/);
    for (let round = 0; round < 5; round += 1) expectAdmitted(await calls());
    await redis.restart();
    await waitForOutput(server, /Redis reachable again[\s\S]*Redis reachable again/);
    expectAdmitted(await calls());

    expect(logged(/Redis unreachable/)).toHaveLength(2);
    expect(logged(/Redis reachable again/)).toHaveLength(2);
    const outage = JSON.parse(logged(/Redis unreachable/)[0]!) as Record<string, unknown>;
    expect(outage).toMatchObject({ level: 'warn', redis: `redis://:***@127.0.0.1:${redis.port}` });
    expect(server.output()).not.toContain(password);
  });
});
