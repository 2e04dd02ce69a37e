// What the /v1/analytics suites share: workspaces of their own whose tasks and deals are written
// through the real stores at chosen instants, and a reference bucketing written apart from the
// server's (Date arithmetic here, SQL there), so each suite computes the expected aggregates itself.
import type { components } from '../../generated/work-platform/types.js';
import type { StoreSource } from '../../src/store/engine.js';
import { createDealStore } from '../../src/store/deals.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore, type Task } from '../../src/store/tasks.js';
import { createUserStore } from '../../src/store/users.js';
import { makeTestWorkspace, type TestWorkspace } from './workPlatform.js';
import type { ContractClient } from './contractClient.js';
import { bearer } from './testApp.js';

export type Size = 'day' | 'week' | 'month';

const DAY = 86_400_000;

/** The UTC calendar bucket [start, end) holding `at`: by day, by ISO week (Monday), by month. */
export function calendarBucket(size: Size, at: number): { start: number; end: number } {
  const date = new Date(at);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (size === 'day') return { start: midnight, end: midnight + DAY };
  if (size === 'week') {
    const sinceMonday = (date.getUTCDay() + 6) % 7;
    const start = midnight - sinceMonday * DAY;
    return { start, end: start + 7 * DAY };
  }
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
}

export const isoDay = (at: number) => new Date(at).toISOString().slice(0, 10);
export const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The buckets of [from, to) as the contract describes them: calendar buckets cut to the range. */
export function expectedBuckets(size: Size, from: string, to: string): { start: string; end: string; startMs: number; endMs: number }[] {
  const buckets = [];
  for (let at = dayStart(from); at < dayStart(to); ) {
    const end = Math.min(calendarBucket(size, at).end, dayStart(to));
    buckets.push({ start: isoDay(at), end: isoDay(end), startMs: at, endMs: end });
    at = end;
  }
  return buckets;
}

/** Counts of instants per expected bucket. */
export function countPerBucket(size: Size, from: string, to: string, instants: readonly number[]): number[] {
  return expectedBuckets(size, from, to).map(({ startMs, endMs }) => instants.filter((at) => at >= startMs && at < endMs).length);
}

export interface SeededTask {
  id: string;
  projectId: string;
  createdAt: number;
  completedAt: number | null;
  dueOn: number | null;
  priority: Task['priority'];
}

/** A workspace of its own with a second project and a writer of tasks and deals at chosen instants. */
export async function analyticsWorkspace(db: StoreSource, sessionSecret: Uint8Array) {
  let clock = 0;
  const now = () => clock;
  const workspace: TestWorkspace = await makeTestWorkspace(db, sessionSecret, { now: () => Date.UTC(2026, 0, 1) });
  const actor = { id: workspace.ownerId, kind: 'USER' as const };
  const taskStore = createTaskStore(db, { now });
  const dealStore = createDealStore(db, { now });
  const secondOwnerId = (await createUserStore(db).createUser({ workspaceId: workspace.workspaceId, role: 'member', name: 'Second owner' })).id;
  const tasks: SeededTask[] = [];
  return {
    ...workspace,
    secondOwnerId,
    tasks,
    /** Creates a task at `createdAt`; `completed` moves it to DONE at each instant given, `reopened` back to TODO. */
    async task(options: { createdAt: number; projectId?: string; dueOn?: number | null; priority?: Task['priority']; doneAt?: number[]; reopenedAt?: number[]; createdDone?: boolean }): Promise<SeededTask> {
      clock = options.createdAt;
      let task = await taskStore.createTask(
        workspace.workspaceId,
        {
          projectId: options.projectId ?? workspace.projectId,
          title: 'Analytics task',
          priority: options.priority ?? 'MEDIUM',
          dueOn: options.dueOn === undefined || options.dueOn === null ? null : new Date(options.dueOn).toISOString(),
          status: options.createdDone ? 'DONE' : 'TODO',
        },
        actor,
      );
      const moves = [
        ...(options.doneAt ?? []).map((at) => ({ at, status: 'DONE' as const })),
        ...(options.reopenedAt ?? []).map((at) => ({ at, status: 'TODO' as const })),
      ].sort((a, b) => a.at - b.at);
      for (const move of moves) {
        clock = move.at;
        task = await taskStore.updateTask(workspace.workspaceId, task.id, { status: move.status }, task.version, actor);
      }
      const seeded: SeededTask = {
        id: task.id,
        projectId: task.projectId,
        createdAt: options.createdAt,
        completedAt: task.completedAt === null ? null : Date.parse(task.completedAt),
        dueOn: options.dueOn ?? null,
        priority: task.priority,
      };
      tasks.push(seeded);
      return seeded;
    },
    async project(name: string): Promise<string> {
      return (await createProjectStore(db).createProject(workspace.workspaceId, { name }, actor)).id;
    },
    deal(options: { createdAt: number; stage: string; amountMinor: number; currency: string; ownerId?: string }) {
      clock = options.createdAt;
      return dealStore.createDeal(
        workspace.workspaceId,
        {
          title: 'Analytics deal',
          stage: options.stage as never,
          amountMinor: options.amountMinor,
          // The store keeps any three capital letters (rows stored before the ISO 4217 enum may hold others).
          currency: options.currency as components['schemas']['CurrencyCode'],
          ownerId: options.ownerId ?? workspace.ownerId,
        },
        actor,
      );
    },
  };
}

/** GET an analytics path with the query given, as `token`. */
export function getAnalytics(client: ContractClient, path: string, query: Record<string, string>, token: string) {
  return client.get(`/v1/analytics/${path}?${new URLSearchParams(query)}`, bearer(token));
}
