import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDemoData } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { contractOperations } from '../support/operations.js';

/**
 * The spec's examples name demo data, so that each can be tried on the demo server as it is (the
 * conformance runner sends them; the Postman collections send those that name no record the run makes).
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-examples-'));
const db = openDatabase(path.join(dataDir, 'app.db'));
const fixture = await loadDemoData(db);
afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('path parameter examples of the contracts', () => {
  it('name published portfolio items of the demo tenant', () => {
    const published = fixture.portfolio.published;
    const examples = contractOperations('portfolio')
      .filter((operation) => operation.pathParameters.length > 0)
      .map((operation) => operation.examplePath);
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const [, , , kind, slug] = example.split('/');
      expect(published[kind as 'posts' | 'pages' | 'outcomes'], example).toContain(slug);
    }
  });

  it('name a demo task at version 1 and an empty demo project, so each example can be tried on them', () => {
    const examples = contractOperations('work-platform')
      .filter((operation) => operation.pathParameters.length > 0)
      .map((operation) => operation.examplePath);
    const taskPath = examples.find((example) => example.startsWith('/v1/tasks/'))!;
    const projectPath = examples.find((example) => example.startsWith('/v1/projects/'))!;
    const task = db.prepare('SELECT workspace_id AS workspaceId, version FROM tasks WHERE id = ?').get(taskPath.split('/')[3]);
    const project = db
      .prepare('SELECT workspace_id AS workspaceId, version, (SELECT count(*) FROM tasks WHERE project_id = projects.id) AS taskCount FROM projects WHERE id = ?')
      .get(projectPath.split('/')[3]);
    expect(task).toEqual({ workspaceId: fixture.workPlatform.workspaceId, version: 1 });
    expect(project).toEqual({ workspaceId: fixture.workPlatform.workspaceId, version: 1, taskCount: 0 });
  });
});

describe('webhook examples of the Work-Platform contract', () => {
  it('name an ACTIVE demo subscription at version 1, so each example can be tried on it', () => {
    const webhookPaths = contractOperations('work-platform')
      .filter((operation) => operation.pathParameters.includes('webhookId'))
      .map((operation) => operation.examplePath);
    expect(webhookPaths.length).toBe(6);
    const ids = new Set(webhookPaths.map((example) => example.split('/')[3]));
    expect([...ids]).toEqual([fixture.workPlatform.webhook.id]);
    const webhook = db.prepare('SELECT workspace_id AS workspaceId, status, version FROM webhook_subscriptions WHERE id = ?').get(fixture.workPlatform.webhook.id);
    expect(webhook).toEqual({ workspaceId: fixture.workPlatform.workspaceId, status: 'ACTIVE', version: 1 });
  });

  it('send a replay range that ends after it starts', () => {
    const replay = contractOperations('work-platform').find((operation) => operation.operationId === 'replayWebhookEvents')!;
    const example = replay.requestBodyExample as { from: string; to: string };
    expect(Date.parse(example.to)).toBeGreaterThan(Date.parse(example.from));
  });
});
