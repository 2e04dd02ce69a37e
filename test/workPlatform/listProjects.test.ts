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

const { newProject, headers } = workPlatformCalls(() => ({ t, client, fx }));

describe('GET /v1/projects', () => {
  it("answers 200 with the workspace's projects by name, a project created since among them", async () => {
    const created = await newProject('000 First by name');
    const page = expectSuccess(await client.get('/v1/projects?sort=name&order=asc&limit=100', headers()), 200);
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]).toEqual(created);
    expect(page.items.map((project: { id: string }) => project.id)).toContain(fx.projectId);
    const names = page.items.map((project: { name: string }) => project.name);
    expect(names).toEqual([...names].sort());
  });
});

describe('workspace isolation', () => {
  it('lists no project of one workspace to the other', async () => {
    const projects = await client.get('/v1/projects?limit=100', bearer(fx.otherWorkspace.token));
    expect(projects.body.items.map((project: { id: string }) => project.id)).toEqual([fx.otherWorkspace.projectId]);
  });
});
