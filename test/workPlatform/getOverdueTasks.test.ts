import { beforeAll, describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { analyticsWorkspace, expectedBuckets, getAnalytics, type SeededTask, type Size } from '../support/analytics.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, liftCallLimits } from '../support/workPlatform.js';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2026-03-18T12:00:00Z');

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, now: () => NOW });

let ws: Awaited<ReturnType<typeof analyticsWorkspace>>;
let secondProject: string;

/** Overdue at instant T as the contract defines it: from the later of dueOn and createdAt, until completedAt. */
const overdueAt = (tasks: SeededTask[], instant: number) =>
  tasks.filter((task) => task.dueOn !== null && Math.max(task.createdAt, task.dueOn) < instant && (task.completedAt === null || task.completedAt >= instant)).length;

beforeAll(async () => {
  ws = await analyticsWorkspace(t.store, t.sessionSecret);
  await liftCallLimits(t.store, ws.workspaceId);
  secondProject = await ws.project('Second');
  // Overdue before the ranges start, still open.
  await ws.task({ createdAt: at('2026-01-05T09:00:00Z'), dueOn: at('2026-01-20T17:00:00Z'), priority: 'HIGH' });
  // Overdue before, completed inside the ranges.
  await ws.task({ createdAt: at('2026-01-05T09:00:00Z'), dueOn: at('2026-02-10T17:00:00Z'), doneAt: [at('2026-03-03T10:00:00Z')] });
  // Completed before its due date: never overdue.
  await ws.task({ createdAt: at('2026-02-20T09:00:00Z'), dueOn: at('2026-03-10T17:00:00Z'), doneAt: [at('2026-03-09T10:00:00Z')] });
  // Created after its due date: overdue from its creation.
  await ws.task({ createdAt: at('2026-03-04T08:00:00Z'), dueOn: at('2026-03-01T00:00:00Z'), priority: 'LOW', projectId: secondProject });
  // Due on a week edge (Monday 2026-03-09 00:00): overdue just after it, not at it.
  await ws.task({ createdAt: at('2026-03-02T08:00:00Z'), dueOn: at('2026-03-09T00:00:00Z'), priority: 'HIGH', projectId: secondProject });
  // Overdue, completed, reopened: overdue again from its due date (its first completion is not kept).
  await ws.task({ createdAt: at('2026-02-01T08:00:00Z'), dueOn: at('2026-02-15T00:00:00Z'), doneAt: [at('2026-02-20T00:00:00Z')], reopenedAt: [at('2026-03-12T00:00:00Z')] });
  // Overdue, completed later than due.
  await ws.task({ createdAt: at('2026-03-01T08:00:00Z'), dueOn: at('2026-03-05T12:00:00Z'), doneAt: [at('2026-03-16T12:00:00Z')] });
  // Due later today, next week, and no due date: not overdue now.
  await ws.task({ createdAt: at('2026-03-10T08:00:00Z'), dueOn: at('2026-03-18T18:00:00Z') });
  await ws.task({ createdAt: at('2026-03-10T08:00:00Z'), dueOn: at('2026-03-25T00:00:00Z') });
  await ws.task({ createdAt: at('2026-03-10T08:00:00Z') });
  // Due an hour ago.
  await ws.task({ createdAt: at('2026-03-10T08:00:00Z'), dueOn: NOW - 3_600_000, priority: 'LOW' });
  const other = await analyticsWorkspace(t.store, t.sessionSecret);
  await other.task({ createdAt: at('2026-01-05T09:00:00Z'), dueOn: at('2026-01-06T00:00:00Z') });
});

const overdue = (query: Record<string, string>, token = ws.pat) => getAnalytics(client, 'tasks/overdue', query, token);

describe('GET /v1/analytics/tasks/overdue', () => {
  it('counts the tasks overdue now, by priority', async () => {
    const body = expectSuccess(await overdue({ from: '2026-03-01', to: '2026-03-02' }), 200);
    const open = ws.tasks.filter((task) => task.completedAt === null && task.dueOn !== null && task.dueOn < NOW);
    expect(body.asOf).toBe(new Date(NOW).toISOString());
    expect(body.current).toEqual({
      total: open.length,
      byPriority: { LOW: open.filter((task) => task.priority === 'LOW').length, MEDIUM: open.filter((task) => task.priority === 'MEDIUM').length, HIGH: open.filter((task) => task.priority === 'HIGH').length },
    });
    expect(body.current.total).toBe(5);
  });

  for (const [size, from, to] of [
    ['day', '2026-02-25', '2026-03-25'],
    ['week', '2026-01-01', '2026-04-01'],
    ['month', '2025-12-01', '2026-06-01'],
  ] as [Size, string, string][]) {
    it(`counts the tasks overdue at the end of each ${size}, or now for a bucket not yet ended`, async () => {
      const body = expectSuccess(await overdue({ from, to, bucket: size }), 200);
      expect(body.buckets).toEqual(expectedBuckets(size, from, to).map(({ start, end, endMs }) => ({ start, end, overdue: overdueAt(ws.tasks, Math.min(endMs, NOW)) })));
      expect(body.buckets.at(-1).overdue).toBe(body.current.total);
    });
  }

  it('counts a task due at midnight as overdue after that midnight, not at it', async () => {
    const body = expectSuccess(await overdue({ from: '2026-03-07', to: '2026-03-11', bucket: 'day', projectId: secondProject }), 200);
    // The task created after its due date is overdue all along; the one due 2026-03-09 00:00 joins it from that day.
    expect(body.buckets.map((bucket: { overdue: number }) => bucket.overdue)).toEqual([1, 1, 2, 2]);
  });

  it('narrows to a project of the workspace only, and refuses a backwards range', async () => {
    expectProblem(await overdue({ from: '2026-03-01', to: '2026-03-02', projectId: fx.projectId }), 404, 'not-found', 'project-not-found');
    expectProblem(await overdue({ from: '2026-03-02', to: '2026-03-01' }), 422, 'validation', 'invalid-date-range');
  });
});
