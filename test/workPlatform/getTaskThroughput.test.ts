import { beforeAll, describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { analyticsWorkspace, countPerBucket, expectedBuckets, getAnalytics, type Size } from '../support/analytics.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, liftCallLimits } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const at = (iso: string) => Date.parse(iso);
let ws: Awaited<ReturnType<typeof analyticsWorkspace>>;

beforeAll(async () => {
  ws = await analyticsWorkspace(t.store, t.sessionSecret);
  await liftCallLimits(t.store, ws.workspaceId);
  // Edges: UTC midnight, the last millisecond before it, Sunday → Monday (2026-03-01 is a Sunday),
  // February (28 days in 2026) → March, a 30-day month (April) → May.
  const created = [
    '2026-02-27T23:59:59.999Z',
    '2026-02-28T00:00:00.000Z',
    '2026-02-28T23:59:59.999Z',
    '2026-03-01T00:00:00.000Z',
    '2026-03-01T23:59:59.999Z',
    '2026-03-02T00:00:00.000Z',
    '2026-03-15T12:00:00.000Z',
    '2026-04-30T23:59:59.999Z',
    '2026-05-01T00:00:00.000Z',
  ];
  for (const [index, iso] of created.entries()) {
    const createdAt = at(iso);
    await ws.task({ createdAt, doneAt: index % 2 === 0 ? [createdAt + (index + 1) * 3_600_000] : [] });
  }
  // Completed, reopened: not a completion. Completed, reopened, completed again: counts once, at the last.
  await ws.task({ createdAt: at('2026-03-03T08:00:00Z'), doneAt: [at('2026-03-04T08:00:00Z')], reopenedAt: [at('2026-03-05T08:00:00Z')] });
  await ws.task({ createdAt: at('2026-03-03T09:00:00Z'), doneAt: [at('2026-03-04T09:00:00Z'), at('2026-04-02T09:00:00Z')], reopenedAt: [at('2026-03-06T09:00:00Z')] });
  // Created DONE: completed when created.
  await ws.task({ createdAt: at('2026-03-20T10:00:00Z'), createdDone: true });
  // Another workspace's tasks at the same instants are never counted.
  const other = await analyticsWorkspace(t.store, t.sessionSecret);
  for (const iso of created) await other.task({ createdAt: at(iso), doneAt: [at(iso) + 1000] });
});

const throughput = (query: Record<string, string>, token = ws.pat) => getAnalytics(client, 'tasks/throughput', query, token);

describe('GET /v1/analytics/tasks/throughput', () => {
  for (const [size, from, to] of [
    ['day', '2026-02-26', '2026-03-04'],
    ['week', '2026-02-25', '2026-05-06'],
    ['month', '2026-01-01', '2026-07-01'],
  ] as [Size, string, string][]) {
    it(`counts created and completed tasks per ${size}, every bucket listed, edges in the later bucket`, async () => {
      const body = expectSuccess(await throughput({ from, to, bucket: size }), 200);
      const created = countPerBucket(size, from, to, ws.tasks.map((task) => task.createdAt));
      const completed = countPerBucket(size, from, to, ws.tasks.flatMap((task) => (task.completedAt === null ? [] : [task.completedAt])));
      expect(body.buckets).toEqual(expectedBuckets(size, from, to).map(({ start, end }, index) => ({ start, end, created: created[index], completed: completed[index] })));
      expect(body.totals).toEqual({ created: created.reduce((a, b) => a + b, 0), completed: completed.reduce((a, b) => a + b, 0) });
      expect(body).toMatchObject({ from, to, bucket: size, projectId: null });
    });
  }

  it('puts a task created at midnight in the day it starts, and Monday 00:00 in the new week', async () => {
    const days = expectSuccess(await throughput({ from: '2026-02-28', to: '2026-03-03', bucket: 'day' }), 200);
    expect(days.buckets.map((bucket: { created: number }) => bucket.created)).toEqual([2, 2, 1]);
    const weeks = expectSuccess(await throughput({ from: '2026-02-23', to: '2026-03-09', bucket: 'week' }), 200);
    expect(weeks.buckets).toEqual([
      { start: '2026-02-23', end: '2026-03-02', created: 5, completed: 2 },
      { start: '2026-03-02', end: '2026-03-09', created: 3, completed: 1 },
    ]);
  });

  it('cuts the first and last bucket to the range, and lists empty buckets with zeros', async () => {
    const body = expectSuccess(await throughput({ from: '2026-02-26', to: '2026-04-03', bucket: 'month' }), 200);
    expect(body.buckets.map(({ start, end }: { start: string; end: string }) => [start, end])).toEqual([
      ['2026-02-26', '2026-03-01'],
      ['2026-03-01', '2026-04-01'],
      ['2026-04-01', '2026-04-03'],
    ]);
    const empty = expectSuccess(await throughput({ from: '2025-01-01', to: '2025-01-04' }), 200);
    expect(empty.buckets).toEqual([
      { start: '2025-01-01', end: '2025-01-02', created: 0, completed: 0 },
      { start: '2025-01-02', end: '2025-01-03', created: 0, completed: 0 },
      { start: '2025-01-03', end: '2025-01-04', created: 0, completed: 0 },
    ]);
    expect(empty.bucket).toBe('day');
  });

  it('narrows to one project; a project of another workspace answers 404 like a missing one', async () => {
    const second = await ws.project('Second');
    await ws.task({ projectId: second, createdAt: at('2026-03-10T10:00:00Z') });
    const body = expectSuccess(await throughput({ from: '2026-03-01', to: '2026-04-01', bucket: 'month', projectId: second }), 200);
    expect(body).toMatchObject({ projectId: second, totals: { created: 1, completed: 0 } });
    const all = expectSuccess(await throughput({ from: '2026-03-01', to: '2026-04-01', bucket: 'month' }), 200);
    expect(all.totals.created).toBe(ws.tasks.filter((task) => task.createdAt >= at('2026-03-01') && task.createdAt < at('2026-04-01')).length);
    expectProblem(await throughput({ from: '2026-03-01', to: '2026-04-01', projectId: fx.projectId }), 404, 'not-found', 'project-not-found');
    expectProblem(await throughput({ from: '2026-03-01', to: '2026-04-01', projectId: 'prj_missing' }), 404, 'not-found', 'project-not-found');
  });

  it('answers 422 to a range that does not run forwards, too many buckets, or a date that is not one', async () => {
    const backwards = expectProblem(await throughput({ from: '2026-03-01', to: '2026-03-01' }), 422, 'validation', 'invalid-date-range');
    expect(backwards.errors).toEqual([expect.objectContaining({ path: '?to', code: 'too_small' })]);
    expectProblem(await throughput({ from: '1969-12-31', to: '1970-01-02' }), 422, 'validation', 'invalid-date-range');
    expectSuccess(await throughput({ from: '2024-01-01', to: '2025-01-01', bucket: 'day' }), 200);
    const tooMany = expectProblem(await throughput({ from: '2024-01-01', to: '2025-01-02', bucket: 'day' }), 422, 'validation', 'too-many-buckets');
    expect(tooMany.detail).toContain('367');
    expectSuccess(await throughput({ from: '2000-01-01', to: '2030-07-01', bucket: 'month' }), 200);
    expectProblem(await throughput({ from: '2026-02-30', to: '2026-03-02' }), 422, 'validation');
    expectProblem(await throughput({ from: '2026-02-01', to: '2026-03-02', bucket: 'year' }), 422, 'validation');
    expectProblem(await throughput({ to: '2026-03-02' }), 422, 'validation');
  });
});
