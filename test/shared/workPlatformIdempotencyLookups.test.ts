import { beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyKeyStore } from '../../src/store/idempotencyKeys.js';
import type { ContractClient } from '../support/contractClient.js';
import { useTestApp, type TestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { countRows, expectProblem, expectSuccess, jsonHeaders } from '../support/workPlatform.js';

// Every call the server makes to the store of Idempotency-Key answers, through the injected wrapper,
// as `find <key>` and `save <key>`. The wrapper can also make a look-up fail.
const storeCalls: string[] = [];
let failLookupsOf: string | undefined;
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), {
  liftCallLimits: true,
  wrapIdempotencyKeys: (keys): IdempotencyKeyStore => ({
    findIdempotencyRecord: (workspaceId, key, now) => {
      storeCalls.push(`find ${key}`);
      if (key === failLookupsOf) throw new Error('injected look-up failure');
      return keys.findIdempotencyRecord(workspaceId, key, now);
    },
    saveIdempotencyRecord: (input) => {
      storeCalls.push(`save ${input.key}`);
      return keys.saveIdempotencyRecord(input);
    },
    purgeExpiredIdempotencyKeys: (now) => keys.purgeExpiredIdempotencyKeys(now),
  }),
});

let keyCounter = 0;
const newKey = () => `lookup-key-${Date.now()}-${++keyCounter}`;
const post = (path: string, body: unknown, key?: string) =>
  client.request('POST', path, { headers: jsonHeaders(fx.tokens.all, key === undefined ? {} : { 'idempotency-key': key }), body: JSON.stringify(body) });
const postTask = (title: string, key?: string) => post('/v1/tasks', { projectId: fx.projectId, title }, key);

beforeEach(() => {
  storeCalls.length = 0;
  failLookupsOf = undefined;
});

describe('Idempotency-Key: one look-up of the key per request', () => {
  it('looks a fresh key up once, then stores its answer', async () => {
    const key = newKey();
    expectSuccess(await postTask('Fresh key', key), 201);
    expect(storeCalls).toEqual([`find ${key}`, `save ${key}`]);
  });

  it('answers a replay from its one look-up, storing nothing', async () => {
    const key = newKey();
    const first = await postTask('Replayed', key);
    storeCalls.length = 0;
    const again = await postTask('Replayed', key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(storeCalls).toEqual([`find ${key}`]);
  });

  it('looks nothing up for a request without a key', async () => {
    expectSuccess(await postTask('No key'), 201);
    expect(storeCalls).toEqual([]);
  });

  it('refuses a key used on another operation from its one look-up, acting on nothing', async () => {
    const key = newKey();
    expectSuccess(await postTask('First use', key), 201);
    storeCalls.length = 0;
    const projects = await countRows(t.store, 'projects', fx.workspaceId);
    expectProblem(await post('/v1/projects', { name: 'Second use' }, key), 409, 'conflict', 'idempotency-key-reused');
    expect(storeCalls).toEqual([`find ${key}`]);
    expect(await countRows(t.store, 'projects', fx.workspaceId)).toBe(projects);
  });

  it('acts on nothing when the look-up itself fails', async () => {
    const key = newKey();
    failLookupsOf = key;
    const tasks = await countRows(t.store, 'tasks', fx.workspaceId);
    expectProblem(await postTask('Never acted', key), 500, 'internal');
    expect(storeCalls).toEqual([`find ${key}`]);
    expect(await countRows(t.store, 'tasks', fx.workspaceId)).toBe(tasks);
  });

  it('claims or replays a two-phase operation (AI task drafts) in the same one look-up', async () => {
    const key = newKey();
    const body = { projectId: fx.projectId, text: '- Write the one look-up test' };
    const first = expectSuccess(await post('/v1/ai/task-drafts', body, key), 200);
    expect(storeCalls).toEqual([`find ${key}`, `save ${key}`]);
    storeCalls.length = 0;
    const again = await post('/v1/ai/task-drafts', body, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first);
    expect(storeCalls).toEqual([`find ${key}`]);
  });
});
