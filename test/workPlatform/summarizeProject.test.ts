import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, makeTestWorkspace } from '../support/workPlatform.js';

// The server runs the default provider (offline rules) on an injected clock, over the demo data loaded at the same time.
const now = Date.UTC(2026, 10, 25, 10, 0, 0);
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, now: () => now });

/** The demo's empty project (the contract's projectId examples name it). */
const emptyProjectId = 'prj_nBcwBUyM7dVuD0sW71FG';

const summarize = (projectId: string, token = fx.tokens.all, extra: Record<string, string> = {}) =>
  client.request('POST', '/v1/ai/project-summaries', { headers: jsonHeaders(token, extra), body: JSON.stringify({ projectId }) });

interface TaskRow {
  id: string;
  title: string;
  status: string;
  priority: string;
  dueOn: number | null;
}
const openTasksOf = (projectId: string) =>
  t.sql.rows<TaskRow>(`SELECT id, title, status, priority, due_on AS "dueOn" FROM tasks WHERE project_id = ? AND status != 'DONE'`, projectId);

describe('POST /v1/ai/project-summaries (offline provider)', () => {
  it("summarizes the demo project's open work: counts over every open task, highlights of tasks that need attention", async () => {
    const open = await openTasksOf(fx.projectId);
    const overdue = open.filter((task) => task.dueOn !== null && task.dueOn < now);
    expect(overdue.length).toBeGreaterThan(0);
    const response = await summarize(fx.projectId);
    const body = expectSuccess(response, 200);
    expect(body).toMatchObject({ model: 'offline-rules-1', projectId: fx.projectId, openTaskCount: open.length, overdueTaskCount: overdue.length });
    expect(response.headers['x-ratelimit-class']).toBe('ai');

    const count = (field: 'status' | 'priority', value: string) => open.filter((task) => task[field] === value).length;
    expect(body.summary).toContain(`Website relaunch has ${open.length} open tasks: ${count('status', 'TODO')} to do, ${count('status', 'IN_PROGRESS')} in progress and ${count('status', 'BLOCKED')} blocked`);
    expect(body.summary).toContain(`by priority ${count('priority', 'HIGH')} high, ${count('priority', 'MEDIUM')} medium and ${count('priority', 'LOW')} low`);
    expect(body.summary).toContain(`${overdue.length} tasks are overdue`);

    // Overdue tasks come first, each with its current title; only open tasks of this project appear.
    const byId = new Map(open.map((task) => [task.id, task]));
    expect(body.highlights.length).toBeGreaterThan(0);
    expect(body.highlights.length).toBeLessThanOrEqual(5);
    for (const highlight of body.highlights) {
      expect(byId.get(highlight.taskId)?.title).toBe(highlight.title);
    }
    const first = byId.get(body.highlights[0].taskId)!;
    expect(first.dueOn).toBeLessThan(now);
    expect(body.highlights[0].reason).toMatch(/^Overdue since \d{4}-\d{2}-\d{2}/);
    expect(body.usage.promptTokens).toBeGreaterThan(0);
    expect(body.usage.completionTokens).toBe(Math.ceil(Buffer.byteLength(JSON.stringify({ summary: body.summary, highlights: body.highlights.map(({ taskId, reason }: { taskId: string; reason: string }) => ({ taskId, reason })) })) / 4));
  });

  it('says so when a project has no open work', async () => {
    const body = expectSuccess(await summarize(emptyProjectId), 200);
    expect(body).toMatchObject({ summary: 'Someday has no open tasks.', openTaskCount: 0, overdueTaskCount: 0, highlights: [] });
  });

  it('reads a changed task at once, and leaves out DONE tasks', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    const create = (body: object) =>
      client.request('POST', '/v1/tasks', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId, ...body }) });
    const late = expectSuccess(await create({ title: 'Late invoice', priority: 'HIGH', dueOn: '2026-11-20T12:00:00.000Z' }), 201);
    expectSuccess(await create({ title: 'Finished already', status: 'DONE', dueOn: '2026-11-01T12:00:00.000Z' }), 201);
    expectSuccess(await create({ title: 'Blocked on legal', status: 'BLOCKED' }), 201);
    const body = expectSuccess(await summarize(workspace.projectId, workspace.pat), 200);
    expect(body).toMatchObject({ openTaskCount: 2, overdueTaskCount: 1 });
    expect(body.summary).toBe(
      'Test project has 2 open tasks: 1 to do and 1 blocked; by priority 1 high and 1 medium. 1 task is overdue, the longest "Late invoice" (due 2026-11-20). Most urgent: "Late invoice" and "Blocked on legal".',
    );
    expect(body.highlights).toEqual([
      { taskId: late.id, title: 'Late invoice', reason: 'Overdue since 2026-11-20, high priority.' },
      { taskId: expect.any(String), title: 'Blocked on legal', reason: 'Blocked.' },
    ]);
  });

  it("answers 404 project-not-found for another workspace's project or none", async () => {
    expectProblem(await summarize(fx.otherWorkspace.projectId), 404, 'not-found', 'project-not-found');
    expectProblem(await summarize('prj_ZZZZZZZZZZZZZZZZZZZZ'), 404, 'not-found', 'project-not-found');
  });

  it('answers 422 for a malformed project id', async () => {
    const problem = expectProblem(await summarize('task_1'), 422, 'validation');
    expect(problem.errors.map((issue: { path: string }) => issue.path)).toEqual(['/projectId']);
  });

  it('replays an Idempotency-Key with the first summary, charging once', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: () => now });
    const first = await summarize(workspace.projectId, workspace.pat, { 'idempotency-key': 'summary-1' });
    const again = await summarize(workspace.projectId, workspace.pat, { 'idempotency-key': 'summary-1' });
    expect(expectSuccess(again, 200)).toEqual(expectSuccess(first, 200));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await t.sql.value<number>('SELECT count(*) AS count FROM ai_spend_entries WHERE workspace_id = ?', workspace.workspaceId))).toBe(1);
  });
});
