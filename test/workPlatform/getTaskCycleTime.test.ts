import { beforeAll, describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { analyticsWorkspace, expectedBuckets, getAnalytics, type SeededTask, type Size } from '../support/analytics.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, liftCallLimits } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
let ws: Awaited<ReturnType<typeof analyticsWorkspace>>;
let secondProject: string;

/** The statistics as the contract defines them, computed here from the seeded durations. */
function statistics(durationsMs: number[]) {
  if (durationsMs.length === 0) return { completed: 0, meanSeconds: null, medianSeconds: null, p90Seconds: null, maxSeconds: null };
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const nearestRank = (percent: number) => sorted[Math.ceil((percent / 100) * sorted.length) - 1]!;
  const seconds = (ms: number) => Math.round(ms / 1000);
  return {
    completed: sorted.length,
    meanSeconds: seconds(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    medianSeconds: seconds(nearestRank(50)),
    p90Seconds: seconds(nearestRank(90)),
    maxSeconds: seconds(sorted.at(-1)!),
  };
}

const durationsIn = (tasks: SeededTask[], startMs: number, endMs: number) =>
  tasks.flatMap((task) => (task.completedAt !== null && task.completedAt >= startMs && task.completedAt < endMs ? [task.completedAt - task.createdAt] : []));

beforeAll(async () => {
  ws = await analyticsWorkspace(t.store, t.sessionSecret);
  await liftCallLimits(t.store, ws.workspaceId);
  secondProject = await ws.project('Second');
  // Eleven completions in March 2026 with distinct cycle times (1 h … 11 h, odd ones in the second
  // project), one on each side of the week edge (Monday 2026-03-09 00:00), and four in April.
  for (let index = 1; index <= 11; index += 1) {
    const doneAt = at('2026-03-04T12:00:00Z') + index * 12 * HOUR;
    await ws.task({ createdAt: doneAt - index * HOUR, doneAt: [doneAt], projectId: index % 2 ? secondProject : ws.projectId });
  }
  await ws.task({ createdAt: at('2026-03-08T10:00:00Z'), doneAt: [at('2026-03-08T23:59:59.999Z')] });
  await ws.task({ createdAt: at('2026-03-08T10:00:00Z'), doneAt: [at('2026-03-09T00:00:00.000Z')] });
  for (const hours of [30, 2, 500, 7]) await ws.task({ createdAt: at('2026-04-10T00:00:00Z'), doneAt: [at('2026-04-10T00:00:00Z') + hours * HOUR] });
  // Reopened and done again: the cycle runs from creation to the last completion.
  await ws.task({ createdAt: at('2026-04-01T00:00:00Z'), doneAt: [at('2026-04-02T00:00:00Z'), at('2026-04-20T00:00:00Z')], reopenedAt: [at('2026-04-03T00:00:00Z')] });
  // Created DONE: a cycle time of 0. Open tasks have none.
  await ws.task({ createdAt: at('2026-04-15T00:00:00Z'), createdDone: true });
  await ws.task({ createdAt: at('2026-03-05T00:00:00Z') });
  const other = await analyticsWorkspace(t.store, t.sessionSecret);
  await other.task({ createdAt: at('2026-03-01T00:00:00Z'), doneAt: [at('2026-03-20T00:00:00Z')] });
});

const cycleTime = (query: Record<string, string>, token = ws.pat) => getAnalytics(client, 'tasks/cycle-time', query, token);

describe('GET /v1/analytics/tasks/cycle-time', () => {
  for (const [size, from, to] of [
    ['day', '2026-03-04', '2026-03-12'],
    ['week', '2026-03-01', '2026-05-01'],
    ['month', '2026-02-01', '2026-06-01'],
  ] as [Size, string, string][]) {
    it(`gives count, mean, nearest-rank median and p90, and max per ${size} of completion`, async () => {
      const body = expectSuccess(await cycleTime({ from, to, bucket: size }), 200);
      const buckets = expectedBuckets(size, from, to);
      expect(body.buckets).toEqual(buckets.map(({ start, end, startMs, endMs }) => ({ start, end, cycleTime: statistics(durationsIn(ws.tasks, startMs, endMs)) })));
      expect(body.overall).toEqual(statistics(durationsIn(ws.tasks, buckets[0]!.startMs, buckets.at(-1)!.endMs)));
    });
  }

  it('takes the lower middle value as the median of an even count, and counts a task created DONE as 0', async () => {
    // 2 h and 7 h on 2026-04-10: the median is the lower one.
    const april = expectSuccess(await cycleTime({ from: '2026-04-10', to: '2026-04-11' }), 200);
    expect(april.overall).toEqual({ completed: 2, meanSeconds: 4.5 * 3600, medianSeconds: 2 * 3600, p90Seconds: 7 * 3600, maxSeconds: 7 * 3600 });
    // 0 h (created DONE), 2 h, 7 h, 30 h, 456 h (reopened, done again), 500 h: the median is 7 h (rank 3 of 6), p90 500 h (rank 6).
    const six = expectSuccess(await cycleTime({ from: '2026-04-10', to: '2026-05-01' }), 200);
    expect(six.overall).toEqual({ completed: 6, medianSeconds: 7 * 3600, p90Seconds: 500 * 3600, maxSeconds: 500 * 3600, meanSeconds: Math.round(((0 + 2 + 7 + 30 + 456 + 500) / 6) * 3600) });
    const createdDone = expectSuccess(await cycleTime({ from: '2026-04-15', to: '2026-04-16' }), 200);
    expect(createdDone.overall).toEqual({ completed: 1, meanSeconds: 0, medianSeconds: 0, p90Seconds: 0, maxSeconds: 0 });
    const reopened = expectSuccess(await cycleTime({ from: '2026-04-20', to: '2026-04-21' }), 200);
    expect(reopened.overall.maxSeconds).toBe(19 * 24 * 3600);
  });

  it('narrows to one project, and answers empty buckets with null statistics', async () => {
    const body = expectSuccess(await cycleTime({ from: '2026-03-01', to: '2026-04-01', bucket: 'month', projectId: secondProject }), 200);
    expect(body.overall).toEqual(statistics(ws.tasks.filter((task) => task.projectId === secondProject).flatMap((task) => (task.completedAt ? [task.completedAt - task.createdAt] : []))));
    expect(body.overall.completed).toBe(6);
    const empty = expectSuccess(await cycleTime({ from: '2025-06-01', to: '2025-06-03' }), 200);
    expect(empty.buckets[0].cycleTime).toEqual({ completed: 0, meanSeconds: null, medianSeconds: null, p90Seconds: null, maxSeconds: null });
    expectProblem(await cycleTime({ from: '2026-03-01', to: '2026-04-01', projectId: fx.projectId }), 404, 'not-found', 'project-not-found');
  });

  it('answers 422 to a backwards range or too many buckets', async () => {
    expectProblem(await cycleTime({ from: '2026-03-02', to: '2026-03-01' }), 422, 'validation', 'invalid-date-range');
    expectProblem(await cycleTime({ from: '2019-01-01', to: '2027-01-01', bucket: 'week' }), 422, 'validation', 'too-many-buckets');
  });
});
