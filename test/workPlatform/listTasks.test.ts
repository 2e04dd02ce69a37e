import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { bearer, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

// Sorting, cursors and limits of every list are the shared suite's (test/shared/workPlatformPaging.test.ts).
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { newTask } = workPlatformCalls(() => ({ t, client, fx }));

describe('GET /v1/tasks', () => {
  it("answers 200 with the workspace's tasks, newest first, and a task created since at the top", async () => {
    const before = expectSuccess(await client.get('/v1/tasks?limit=5', bearer(fx.tokens.readOnly)), 200);
    expect(before.items).toHaveLength(5);
    expect(before.nextCursor).toEqual(expect.any(String));
    for (const task of before.items) expect(fx.taskIds).toContain(task.id);
    const created = await newTask('Listed first');
    const after = expectSuccess(await client.get('/v1/tasks?limit=5', bearer(fx.tokens.readOnly)), 200);
    expect(after.items.map((task: { id: string }) => task.id)).toEqual([created.id, ...before.items.slice(0, 4).map((task: { id: string }) => task.id)]);
    expect(after.items[0]).toEqual(created);
  });
});

describe('workspace isolation', () => {
  it('lists no task of one workspace to the other', async () => {
    const tasks = await client.get('/v1/tasks?limit=100', bearer(fx.otherWorkspace.token));
    expect(tasks.status).toBe(200);
    expect(tasks.body.items.map((task: { id: string }) => task.id)).toEqual([fx.otherWorkspace.taskId]);
  });
});
