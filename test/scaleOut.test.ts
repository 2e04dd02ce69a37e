// Two API server processes and two webhook delivery workers on one PostgreSQL and one Redis, as
// `npm run scaled-out` and compose.yaml run them: the limits are shared exactly, an Idempotency-Key
// sent to both servers at once creates one resource, and every event reaches its receiver although
// a worker is killed with SIGKILL in the middle of its attempts.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretsCommand } from '../src/cli/secretsCommand.js';
import { sharedPostgresServer } from './support/postgresServer.js';
import { redisLimitsEnv, startRedisServer, type RedisServer } from './support/redisServer.js';
import { runAdminInProcess, startServerProcess, startWorkerProcess, stopServerProcesses, type ServerProcess, type WorkerProcess } from './support/serverProcess.js';
import { startReceiver, waitFor, type Receiver } from './webhooks/deliveryFixtures.js';

let redis: RedisServer;
let receiver: Receiver;
let servers: ServerProcess[];
/** Two more servers on the same database without REDIS_URL: their limits are counted in PostgreSQL's tables. */
let serversWithoutRedis: ServerProcess[];
let workers: WorkerProcess[];
const children: ChildProcess[] = [];
let env: Record<string, string>;

// In this process (runAdminInProcess): the set-up of each case, not what it proves; the CLI as a process is test/cli's.
async function admin(...args: string[]): Promise<Record<string, string>> {
  const result = await runAdminInProcess([...args, '--json'], { env });
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

/** A workspace with an owner and a token of every scope, its call limits as given. */
async function workspaceWithToken(name: string, limits: string[]): Promise<string> {
  const workspace = await admin('workspace', 'create', '--name', name, '--plan', 'enterprise');
  await admin('workspace', 'limits', 'set', workspace.id!, ...limits);
  const user = await admin('user', 'create', '--workspace', workspace.id!, '--role', 'owner');
  const scopes = 'projects:write,projects:read,tasks:write,tasks:read,webhooks:manage';
  return (await admin('pat', 'create', '--workspace', workspace.id!, '--user', user.id!, '--scopes', scopes)).token!;
}

function call(server: ServerProcess, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  redis = await startRedisServer();
  receiver = await startReceiver();
  const { json: secrets } = await secretsCommand.run({ db: () => Promise.reject(new Error('unused')), databasePath: '', env: {}, now: Date.now, values: {}, positionals: [] });
  env = {
    DATABASE_URL: await (await sharedPostgresServer()).createDatabase({ migrated: true }),
    ...redisLimitsEnv(redis),
    ...(secrets as Record<string, string>),
    WEBHOOK_WORKER: 'off',
    WEBHOOK_ALLOW_LOOPBACK: 'on',
    // The shortest lease: what the killed worker held is sent again 16 s after it claimed it, not 60.
    WEBHOOK_DELIVERY_LEASE_SECONDS: '16',
    // What is proven here is exact counting while Redis answers: on a loaded CI machine, not a server that counts
    // by itself after 500 ms without an answer (that fallback is test/limits/redisLimitCounters.test.ts's).
    REDIS_COMMAND_TIMEOUT_MS: '5000',
  };
  servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  const { REDIS_URL: _redis, ...withoutRedis } = env;
  serversWithoutRedis = await Promise.all([startServerProcess(withoutRedis), startServerProcess(withoutRedis)]);
  workers = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
  children.push(...[...servers, ...serversWithoutRedis].map((server) => server.child), ...workers.map((worker) => worker.child));
}, 120_000);

/** Rate-limit windows are whole minutes: a burst that straddles two would be counted in both. */
async function earlyInAMinute(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
}

afterAll(async () => {
  await stopServerProcesses(children.filter((child) => child.exitCode === null && child.signalCode === null));
  await receiver?.close();
  await redis?.stop();
});

// Concurrently: each case has a workspace of its own, and most of their time is waiting (for an early second of a
// minute, for a lapsed lease), not work.
describe.concurrent('two API servers and two workers on one PostgreSQL and one Redis', () => {
  it.each([
    ['Redis', () => servers],
    ["PostgreSQL's tables (no REDIS_URL)", () => serversWithoutRedis],
  ])("admit exactly a workspace's write allowance from a burst spread over both servers, counted in %s", async (_where, pair) => {
    const token = await workspaceWithToken('Limited', ['--write', '12', '--read', '1000']);
    await earlyInAMinute();
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, index) => call(pair()[index % 2]!, token, 'POST', '/v1/projects', { name: `Burst ${index}` }).then((response) => response.status)),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(12);
    expect(statuses.filter((status) => status === 429)).toHaveLength(18);
    const listed = (await (await call(pair()[0]!, token, 'GET', '/v1/projects?limit=100')).json()) as { items: unknown[] };
    expect(listed.items).toHaveLength(12);
  }, 90_000);

  it('create one task per Idempotency-Key when the same request reaches both servers at once', async () => {
    const token = await workspaceWithToken('Idempotent', ['--write', '100000', '--read', '100000']);
    const projectId = ((await (await call(servers[0]!, token, 'POST', '/v1/projects', { name: 'Keys' })).json()) as { id: string }).id;
    for (let round = 0; round < 8; round += 1) {
      const request = (server: ServerProcess) => call(server, token, 'POST', '/v1/tasks', { projectId, title: `Once ${round}` }, { 'idempotency-key': `key-${round}` });
      const answers = await Promise.all([request(servers[0]!), request(servers[1]!)]);
      expect(answers.map((answer) => answer.status)).toEqual([201, 201]);
      const ids = await Promise.all(answers.map(async (answer) => ((await answer.json()) as { id: string }).id));
      expect(ids[1]).toBe(ids[0]);
    }
    const listed = (await (await call(servers[1]!, token, 'GET', '/v1/tasks?limit=100')).json()) as { items: { title: string }[] };
    expect(listed.items.map((item) => item.title).sort()).toEqual(Array.from({ length: 8 }, (_, round) => `Once ${round}`).sort());
  });

  it('deliver every event although a worker is killed with SIGKILL while deliveries are under way', async () => {
    const token = await workspaceWithToken('Hooks', ['--write', '100000', '--read', '100000']);
    // Slow answers: each worker holds attempts in flight when one of them is killed.
    receiver.answer = () => ({ status: 204, delayMs: 150 });
    const subscription = await call(servers[0]!, token, 'POST', '/v1/webhooks', { url: receiver.url, eventTypes: ['task.created'] });
    expect(subscription.status).toBe(201);
    const projectId = ((await (await call(servers[1]!, token, 'POST', '/v1/projects', { name: 'Hooks' })).json()) as { id: string }).id;
    const taskIds: string[] = [];
    const commit = async (count: number) => {
      const created = await Promise.all(
        Array.from({ length: count }, (_, index) => call(servers[index % 2]!, token, 'POST', '/v1/tasks', { projectId, title: `Hook ${taskIds.length + index}` })),
      );
      for (const answer of created) {
        expect(answer.status).toBe(201);
        taskIds.push(((await answer.json()) as { id: string }).id);
      }
    };
    const receivedTaskIds = () =>
      receiver.received.map((delivery) => (JSON.parse(delivery.body.toString()) as { data: { object: { id: string } } }).data.object.id);

    // Killed while it holds attempts in flight: once it has made some, with 150 ms answers.
    const madeAttempts = (worker: WorkerProcess) => worker.output().includes('webhook delivered');
    // The other worker may take a whole batch before this one's sweep: commit more until it has made attempts.
    for (let batch = 1; !madeAttempts(workers[0]!); batch += 1) {
      expect(batch, 'batches of 20 events committed before the first worker made an attempt').toBeLessThanOrEqual(5);
      await commit(20);
      await waitFor(() => madeAttempts(workers[0]!) || new Set(receivedTaskIds()).size === taskIds.length, 'the batch to be delivered', 20_000, 10);
    }
    workers[0]!.child.kill('SIGKILL');
    await commit(20);
    // What the killed worker held is sent again once its lease (WEBHOOK_DELIVERY_LEASE_SECONDS, 16 s here) lapses.
    await waitFor(() => new Set(receivedTaskIds()).size === taskIds.length, 'every event to be delivered', 100_000, 50);

    expect(new Set(receivedTaskIds())).toEqual(new Set(taskIds));
    // Sent twice at most what the killed worker held in flight (its concurrency).
    expect(receiver.received.length - taskIds.length).toBeLessThanOrEqual(16);
  }, 180_000);
});
