// The AI routes against a real local server of the OpenAI chat-completions protocol: what is sent,
// what is charged (the provider's usage times the configured price table), and the daily spend
// cap under concurrent calls, on an injected clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAiSpendStore } from '../../src/store/aiSpend.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import type { ContractClient } from '../support/contractClient.js';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../support/openAiCompatibleServer.js';
import { type TestApp, startTestApp } from '../support/testApp.js';
import { bearer } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, liftCallLimits, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

const API_KEY = 'sk-test-4f1c9d0e7b2a';
// US cents per million tokens: high, so that one call costs cents and a cap of a few cents admits a few calls.
const INPUT_PRICE = 1000;
const OUTPUT_PRICE = 3000;
const DAY_MS = 86_400_000;

let clock = Date.UTC(2026, 10, 25, 15, 30, 0);
let provider: OpenAiCompatibleServer;
let t: TestApp;
let client: ContractClient;

beforeAll(async () => {
  provider = await startOpenAiCompatibleServer();
  ({ t, client } = (await startTestApp({
    liftCallLimits: true,
    now: () => clock,
    env: {
      AI_PROVIDER: 'openai-compatible',
      AI_BASE_URL: provider.baseUrl,
      AI_API_KEY: API_KEY,
      AI_MODEL: 'test-model-1',
      AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS: String(INPUT_PRICE),
      AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS: String(OUTPUT_PRICE),
    },
  })).workPlatform);
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** A workspace of its own (a ledger of its own), its call limits lifted, with a daily cap when given. */
async function workspaceWithCap(capCents?: number): Promise<TestWorkspace> {
  const workspace = await makeTestWorkspace(t.db, t.sessionSecret, { plan: 'pro', now: () => clock });
  await liftCallLimits(t.db, workspace.workspaceId);
  if (capCents !== undefined) await createWorkspaceStore(t.db).setWorkspaceLimits(workspace.workspaceId, { aiDailySpendCapCents: capCents });
  return workspace;
}

const draft = (workspace: TestWorkspace, body: object = {}, extra: Record<string, string> = {}) =>
  client.request('POST', '/v1/ai/task-drafts', {
    headers: jsonHeaders(workspace.pat, extra),
    body: JSON.stringify({ projectId: workspace.projectId, text: 'Call the printer about the flyers', maxDrafts: 3, ...body }),
  });

interface LedgerRow {
  state: string;
  reserved: number;
  actual: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  day: string;
  model: string;
}
const ledger = (workspaceId: string) =>
  t.db
    .prepare('SELECT state, reserved_millicents AS reserved, actual_millicents AS actual, prompt_tokens AS promptTokens, completion_tokens AS completionTokens, day, model FROM ai_spend_entries WHERE workspace_id = ? ORDER BY rowid')
    .all(workspaceId) as LedgerRow[];

/** Millicents by the price table, rounded up: what the server must charge. */
const millicentsFor = (promptTokens: number, completionTokens: number) => Math.ceil((promptTokens * INPUT_PRICE + completionTokens * OUTPUT_PRICE) / 1000);

const secondsToMidnight = () => Math.ceil((Math.floor(clock / DAY_MS) * DAY_MS + DAY_MS - clock) / 1000);

describe('an OpenAI-compatible provider', () => {
  it('is sent the model, the messages, max_tokens, temperature 0, a JSON response format and the key; its usage is charged by the price table', async () => {
    const workspace = await workspaceWithCap();
    provider.respondWith({ kind: 'answer', usage: { prompt_tokens: 1234, completion_tokens: 567 } });
    const seen = provider.requests.length;
    const response = await draft(workspace, { text: 'Call the printer about the flyers by 2026-12-01' });
    const body = expectSuccess(response, 200);
    expect(body).toEqual({
      model: 'test-model-1',
      projectId: workspace.projectId,
      drafts: [{ title: 'Call the printer', priority: 'HIGH', dueOn: '2026-12-01T23:59:59.999Z' }],
      usage: { promptTokens: 1234, completionTokens: 567, costCents: millicentsFor(1234, 567) / 1000 },
    });
    expect(millicentsFor(1234, 567)).toBe(2935);

    const sent = provider.requests[seen]!;
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body).toMatchObject({ model: 'test-model-1', max_tokens: 32 + 256 * 3, temperature: 0, response_format: { type: 'json_object' } });
    expect(sent.body.messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(sent.body.messages[0]!.content).toContain('today is 2026-11-25 (Wednesday), UTC');
    expect(sent.body.messages[1]!.content).toBe('Project: Test project\n\nText:\nCall the printer about the flyers by 2026-12-01');

    // The reservation was the bound of this request; the settlement is what the provider reported.
    const bound = millicentsFor(Buffer.byteLength(JSON.stringify(sent.body.messages)), sent.body.max_tokens);
    expect(ledger(workspace.workspaceId)).toEqual([
      { state: 'settled', reserved: bound, actual: 2935, promptTokens: 1234, completionTokens: 567, day: '2026-11-25', model: 'test-model-1' },
    ]);

    const limits = expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200);
    expect(limits.aiDailySpendCapCents).toEqual({ inForce: 5000, planDefault: 5000, override: null, usedTodayCents: 2.935, resetAt: '2026-11-26T00:00:00.000Z' });
  });

  it('sends a summary request with the open tasks as data, and keeps only highlights of tasks it was shown', async () => {
    const workspace = await workspaceWithCap();
    const create = (title: string) =>
      client.request('POST', '/v1/tasks', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId, title, priority: 'HIGH' }) });
    const task = expectSuccess(await create('Sign the lease'), 201);
    provider.respondWith({
      kind: 'answer',
      content: JSON.stringify({
        summary: '  One task, and it matters.  ',
        highlights: [
          { taskId: task.id, reason: 'Nothing moves without it.' },
          { taskId: 'tsk_notInThisProject', reason: 'Made up.' },
          { taskId: task.id, reason: 'Said twice.' },
        ],
      }),
    });
    const seen = provider.requests.length;
    const body = expectSuccess(
      await client.request('POST', '/v1/ai/project-summaries', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId }) }),
      200,
    );
    expect(body).toMatchObject({
      model: 'test-model-1',
      summary: 'One task, and it matters.',
      openTaskCount: 1,
      overdueTaskCount: 0,
      highlights: [{ taskId: task.id, title: 'Sign the lease', reason: 'Nothing moves without it.' }],
    });
    const data = JSON.parse(provider.requests[seen]!.body.messages[1]!.content);
    expect(data).toMatchObject({ project: 'Test project', openTaskCount: 1, tasks: [{ id: task.id, title: 'Sign the lease', status: 'TODO', priority: 'HIGH', dueOn: null }] });
    expect(provider.requests[seen]!.body.max_tokens).toBe(1536);
  });
});

describe('the daily AI spend cap', () => {
  it('admits exactly the calls whose reservations fit when 20 arrive at once, refuses the rest with 429, and never spends past the cap', async () => {
    // Every call reports exactly its reserved bound.
    provider.respondWith({ kind: 'answer', usage: 'bound' });
    const probe = await workspaceWithCap();
    expectSuccess(await draft(probe), 200);
    const estimate = ledger(probe.workspaceId)[0]!.reserved;
    expect(estimate).toBeGreaterThan(1000);
    const admitted = 7;
    const capCents = Math.ceil((admitted * estimate) / 1000);
    expect(Math.floor((capCents * 1000) / estimate)).toBe(admitted);

    const workspace = await workspaceWithCap(capCents);
    const seen = provider.requests.length;
    // The provider holds every answer until all 20 calls have been admitted or refused: every
    // reservation is made while the admitted calls are still open, none settled yet.
    provider.respondWith({ kind: 'hold' });
    let answered = 0;
    let allRefused: () => void = () => undefined;
    const refusedSoFar = new Promise<void>((resolve) => (allRefused = resolve));
    const calls = Array.from({ length: 20 }, () =>
      draft(workspace).then((answer) => {
        if (++answered === 20 - admitted) allRefused();
        return answer;
      }),
    );
    await Promise.all([provider.received(seen + admitted), refusedSoFar]);
    provider.respondWith({ kind: 'answer', usage: 'bound' });
    provider.releaseHeld();
    const answers = await Promise.all(calls);
    const succeeded = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(succeeded).toHaveLength(admitted);
    expect(refused).toHaveLength(20 - admitted);
    for (const answer of refused) {
      const problem = expectProblem(answer, 429, 'ai-spend-cap-exceeded');
      expect(problem.aiSpend.limitCents).toBe(capCents);
      expect(problem.aiSpend.usedCents).toBeLessThanOrEqual(capCents);
      expect(problem.aiSpend.resetAt).toBe('2026-11-26T00:00:00.000Z');
      expect(answer.headers['retry-after']).toBe(String(secondsToMidnight()));
    }
    // Refused calls never reached the provider; every admitted one is settled, within the cap.
    expect(provider.requests.length - seen).toBe(admitted);
    const rows = ledger(workspace.workspaceId);
    expect(rows.map((row) => row.state)).toEqual(Array(admitted).fill('settled'));
    const settled = rows.reduce((sum, row) => sum + row.actual!, 0);
    expect(settled).toBe(admitted * estimate);
    expect(settled).toBeLessThanOrEqual(capCents * 1000);

    const limits = expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200);
    expect(limits.aiDailySpendCapCents).toMatchObject({ inForce: capCents, override: capCents, usedTodayCents: settled / 1000 });
  });

  it('counts a reservation never settled (its server stopped) until the day ends, then starts again at midnight UTC', async () => {
    const workspace = await workspaceWithCap(10);
    // What a server killed mid-call leaves behind: an open reservation.
    await createAiSpendStore(t.db, { now: () => clock }).reserve({
      workspaceId: workspace.workspaceId,
      day: '2026-11-25',
      operation: 'draftTasks',
      model: 'test-model-1',
      requestId: 'req_killed',
      reservedMillicents: 9_500,
      capMillicents: 10_000,
    });
    const refused = expectProblem(await draft(workspace), 429, 'ai-spend-cap-exceeded');
    expect(refused.aiSpend).toEqual({ limitCents: 10, usedCents: 9.5, resetAt: '2026-11-26T00:00:00.000Z' });
    expect(expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200).aiDailySpendCapCents.usedTodayCents).toBe(9.5);

    const today = clock;
    clock = Date.UTC(2026, 10, 26, 0, 0, 1);
    try {
      expectSuccess(await draft(workspace), 200);
      expect(ledger(workspace.workspaceId).map((row) => [row.day, row.state])).toEqual([
        ['2026-11-25', 'reserved'],
        ['2026-11-26', 'settled'],
      ]);
    } finally {
      clock = today;
    }
  });

  it('refuses every call with a cap of 0, and never caps a workspace whose cap is null (enterprise)', async () => {
    expectProblem(await draft(await workspaceWithCap(0)), 429, 'ai-spend-cap-exceeded');
    const enterprise = await makeTestWorkspace(t.db, t.sessionSecret, { plan: 'enterprise', now: () => clock });
    const limits = expectSuccess(await client.get('/v1/workspace/limits', bearer(enterprise.pat)), 200);
    expect(limits.aiDailySpendCapCents).toMatchObject({ inForce: null, planDefault: null });
    provider.respondWith({ kind: 'answer', usage: { prompt_tokens: 10_000_000, completion_tokens: 0 } });
    expectSuccess(await draft(enterprise), 200);
    expectSuccess(await draft(enterprise), 200);
    provider.respondWith({ kind: 'answer' });
  });
});

describe('Idempotency-Key on an AI call', () => {
  it('replays the answer without calling the provider or charging again', async () => {
    provider.respondWith({ kind: 'answer', usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const workspace = await workspaceWithCap();
    const seen = provider.requests.length;
    const first = await draft(workspace, {}, { 'idempotency-key': 'ai-once' });
    const again = await draft(workspace, {}, { 'idempotency-key': 'ai-once' });
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(provider.requests.length - seen).toBe(1);
    expect(ledger(workspace.workspaceId)).toHaveLength(1);
  });

  it('answers 409 idempotency-key-in-use while the first request with the key waits for the provider, then replays it', async () => {
    const workspace = await workspaceWithCap();
    provider.respondWith({ kind: 'hold' });
    const seen = provider.requests.length;
    const first = draft(workspace, {}, { 'idempotency-key': 'ai-concurrent' });
    await provider.received(seen + 1);
    expectProblem(await draft(workspace, {}, { 'idempotency-key': 'ai-concurrent' }), 409, 'conflict', 'idempotency-key-in-use');
    provider.respondWith({ kind: 'answer' });
    provider.releaseHeld();
    const answered = await first;
    expectSuccess(answered, 200);
    const replay = await draft(workspace, {}, { 'idempotency-key': 'ai-concurrent' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(answered.text);
    expect(provider.requests.length - seen).toBe(1);
    expect(ledger(workspace.workspaceId).map((row) => row.state)).toEqual(['settled']);
  });
});
