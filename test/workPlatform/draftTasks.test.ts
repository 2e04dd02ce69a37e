import { describe, expect, it } from 'vitest';
import { draftTasksPrompt } from '../../src/ai/prompts.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, insertionOrderSql, jsonHeaders, liftCallLimits, makeTestWorkspace } from '../support/workPlatform.js';

// The server runs the default provider (offline rules) on an injected clock: Wednesday 2026-11-25, 10:00 UTC.
const now = Date.UTC(2026, 10, 25, 10, 0, 0);
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, now: () => now });

const draft = (body: unknown, token = fx.tokens.all, extra: Record<string, string> = {}) =>
  client.request('POST', '/v1/ai/task-drafts', { headers: jsonHeaders(token, extra), body: JSON.stringify(body) });

const ledger = (workspaceId: string) =>
  t.sql.rows<{
    state: string;
    reserved: number;
    actual: number | null;
    promptTokens: number | null;
    completionTokens: number | null;
    model: string;
    operation: string;
  }>(
    `SELECT state, reserved_millicents AS reserved, actual_millicents AS actual, prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens", model, operation
     FROM ai_spend_entries WHERE workspace_id = ? ORDER BY created_at, ${insertionOrderSql(t.engineKind)}`,
    workspaceId,
  );

const notes = [
  'Launch checklist:',
  '- Fix the broken signup link ASAP',
  '- Draft the launch announcement by 2026-12-01.',
  '- [ ] Book the venue tomorrow',
  '2. Review the budget on Friday. Send the invoices next week',
  '* Maybe try a dark theme someday',
  '(3) Update the FAQ today!',
  '---',
].join('\n');

describe('POST /v1/ai/task-drafts (offline provider)', () => {
  it('drafts one task per line, bullet or sentence, with the priority and due date the words say, and creates nothing', async () => {
    const tasksBefore = (await t.sql.value<number>('SELECT count(*) AS count FROM tasks'));
    const response = await draft({ projectId: fx.projectId, text: notes });
    const body = expectSuccess(response, 200);
    expect(body.model).toBe('offline-rules-1');
    expect(body.projectId).toBe(fx.projectId);
    expect(body.drafts).toEqual([
      { title: 'Fix the broken signup link ASAP', priority: 'HIGH', dueOn: null },
      { title: 'Draft the launch announcement by 2026-12-01', priority: 'MEDIUM', dueOn: '2026-12-01T23:59:59.999Z' },
      { title: 'Book the venue tomorrow', priority: 'MEDIUM', dueOn: '2026-11-26T23:59:59.999Z' },
      { title: 'Review the budget on Friday', priority: 'MEDIUM', dueOn: '2026-11-27T23:59:59.999Z' },
      { title: 'Send the invoices next week', priority: 'MEDIUM', dueOn: '2026-12-02T23:59:59.999Z' },
      { title: 'Maybe try a dark theme someday', priority: 'LOW', dueOn: null },
      { title: 'Update the FAQ today!', priority: 'HIGH', dueOn: '2026-11-25T23:59:59.999Z' },
    ]);
    expect(response.headers['x-ratelimit-class']).toBe('ai');
    expect((await t.sql.value<number>('SELECT count(*) AS count FROM tasks'))).toBe(tasksBefore);
  });

  it('reports usage as one token per 4 bytes of the prompt and of the answer, and charges it by the price table', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    const text = 'Renew the domain by 2026-12-15\nOrder new badges';
    const body = expectSuccess(await draft({ projectId: workspace.projectId, text, maxDrafts: 5 }, workspace.pat), 200);
    const prompt = draftTasksPrompt({ projectName: 'Test project', text, maxDrafts: 5, now });
    const promptTokens = Math.ceil(Buffer.byteLength(JSON.stringify(prompt.messages)) / 4);
    const completionTokens = Math.ceil(Buffer.byteLength(JSON.stringify(body.drafts)) / 4);
    // Default prices: 15 cents per million prompt tokens, 60 per million completion tokens, rounded up to the millicent.
    const millicents = Math.ceil((promptTokens * 15 + completionTokens * 60) / 1000);
    expect(body.usage).toEqual({ promptTokens, completionTokens, costCents: millicents / 1000 });
    const [entry, ...others] = await ledger(workspace.workspaceId);
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ state: 'settled', actual: millicents, promptTokens, completionTokens, model: 'offline-rules-1', operation: 'draftTasks' });
    // The reservation was the bound: every byte of the prompt and the whole max_tokens (32 + 256 per draft).
    expect(entry!.reserved).toBe(Math.ceil((Buffer.byteLength(JSON.stringify(prompt.messages)) * 15 + (32 + 256 * 5) * 60) / 1000));
    expect(entry!.reserved).toBeGreaterThanOrEqual(entry!.actual!);
  });

  it('returns at most maxDrafts drafts, and none for text without work', async () => {
    expect(expectSuccess(await draft({ projectId: fx.projectId, text: notes, maxDrafts: 2 }), 200).drafts.map((entry: { title: string }) => entry.title)).toEqual([
      'Fix the broken signup link ASAP',
      'Draft the launch announcement by 2026-12-01',
    ]);
    expect(expectSuccess(await draft({ projectId: fx.projectId, text: '---\n\n***' }), 200).drafts).toEqual([]);
  });

  it('replays an Idempotency-Key without drafting or charging again', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    const request = { projectId: workspace.projectId, text: 'Print the flyers' };
    const first = await draft(request, workspace.pat, { 'idempotency-key': 'draft-once' });
    const again = await draft(request, workspace.pat, { 'idempotency-key': 'draft-once' });
    expect(expectSuccess(again, 200)).toEqual(expectSuccess(first, 200));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await ledger(workspace.workspaceId)).toHaveLength(1);
  });

  it("answers 404 project-not-found for another workspace's project or none, charging nothing", async () => {
    expectProblem(await draft({ projectId: fx.otherWorkspace.projectId, text: 'x' }), 404, 'not-found', 'project-not-found');
    expectProblem(await draft({ projectId: 'prj_ZZZZZZZZZZZZZZZZZZZZ', text: 'x' }), 404, 'not-found', 'project-not-found');
    expect(await ledger(fx.otherWorkspace.workspaceId)).toEqual([]);
  });

  it('answers 422 for text over 8000 characters, empty text or maxDrafts outside 1 to 20', async () => {
    const problem = expectProblem(await draft({ projectId: fx.projectId, text: 'x'.repeat(8001), maxDrafts: 21 }), 422, 'validation');
    expect(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code])).toEqual([
      ['/text', 'too_big'],
      ['/maxDrafts', 'too_big'],
    ]);
    expectProblem(await draft({ projectId: fx.projectId, text: '', maxDrafts: 0 }), 422, 'validation');
    expectSuccess(await draft({ projectId: fx.projectId, text: 'y'.repeat(8000), maxDrafts: 20 }), 200);
  });
});

describe('the ai rate class', () => {
  it('allows a free workspace 20 AI calls a minute, then answers 429 rate-limited in the ai bucket', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    const request = { projectId: workspace.projectId, text: 'One thing' };
    const first = await draft(request, workspace.pat);
    expect(first.headers).toMatchObject({ 'x-ratelimit-class': 'ai', 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '19', 'x-ratelimit-tier': 'free' });
    for (let call = 2; call <= 20; call++) expectSuccess(await draft(request, workspace.pat), 200);
    const limited = await draft(request, workspace.pat);
    expect(expectProblem(limited, 429, 'rate-limited').rateLimit).toMatchObject({ class: 'ai', limit: 20, tier: 'free' });
    // The write bucket is a bucket of its own.
    const task = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId, title: 'Still possible' }) });
    expect(task.status).toBe(201);
  });

  it.each([
    ['pro', '60', 'pro'],
    ['business', '60', 'pro'],
    ['enterprise', '300', 'enterprise'],
  ] as const)('allows a %s workspace %s AI calls a minute (tier %s)', async (plan, limit, tier) => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { plan, now: () => now });
    const response = await draft({ projectId: workspace.projectId, text: 'One thing' }, workspace.pat);
    expect(response.headers).toMatchObject({ 'x-ratelimit-class': 'ai', 'x-ratelimit-limit': limit, 'x-ratelimit-tier': tier });
  });

  it('applies a workspace override of the ai allowance', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    await liftCallLimits(t.store, workspace.workspaceId);
    await createWorkspaceStore(t.store).setWorkspaceLimits(workspace.workspaceId, { aiPerMinute: 2 });
    const request = { projectId: workspace.projectId, text: 'One thing' };
    expect((await draft(request, workspace.pat)).headers['x-ratelimit-limit']).toBe('2');
    expectSuccess(await draft(request, workspace.pat), 200);
    expectProblem(await draft(request, workspace.pat), 429, 'rate-limited');
  });
});
