// The run order of the collections, derived from the contracts: every id is made before it is
// used, deleted after its last use and after every record that names it, and a folder's deletes
// move to the clean-up folder only when a later folder still needs the record.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../scripts/contract/document.js';
import { CLEAN_UP_FOLDER, planRun, runResources, type RunStep } from '../../scripts/contract/postmanRun.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const documentOf = (api: string) => JSON.parse(readFileSync(`${REPO_ROOT}generated/${api}/openapi.json`, 'utf8')) as JsonObject;

describe.each(['work-platform', 'portfolio'])('the %s run order', (api) => {
  const document = documentOf(api);
  const run = planRun(api, document);
  const steps = run.folders.flatMap((folder) => folder.steps);
  const label = (step: RunStep) => `${step.operationId}${step.key ? `:${step.key}` : ''}`;
  const createIndex = (stem: string) => steps.findIndex((step) => step.creates === stem);
  const isRecordDelete = (step: RunStep) => step.entry.method === 'delete' && /\}$/.test(step.entry.path) && step.stem !== undefined;

  it('runs every operation, once as its own request', () => {
    const own = steps.filter((step) => step.key === undefined).map((step) => step.operationId);
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) =>
      Object.values(item).flatMap((operation) => (operation.operationId ? [operation.operationId] : [])),
    );
    expect([...own].sort()).toEqual([...operations].sort());
  });

  it('makes each record before any request uses its id', () => {
    steps.forEach((step, index) => {
      for (const stem of step.uses) {
        const created = createIndex(stem);
        expect(created, `${label(step)} uses ${stem}`).toBeGreaterThanOrEqual(0);
        expect(created, `${label(step)} uses ${stem}`).toBeLessThan(index);
      }
    });
  });

  it('deletes a record after its last use and after every record created naming it', () => {
    steps.forEach((step, index) => {
      if (!isRecordDelete(step)) return;
      const lastUse = steps.findLastIndex((other) => other !== step && other.uses.has(step.stem!));
      expect(index, `${label(step)} after its last use`).toBeGreaterThan(lastUse);
      for (const other of steps) {
        if (!other.creates || !other.uses.has(step.stem!)) continue;
        const otherDelete = steps.findIndex((candidate) => isRecordDelete(candidate) && candidate.stem === other.creates);
        if (otherDelete >= 0) expect(index, `${label(step)} after deleting ${other.creates}`).toBeGreaterThan(otherDelete);
      }
    });
  });

  it('keeps a delete in its own folder unless a later folder needs the record', () => {
    const cleanUp = run.folders.find((folder) => folder.name === CLEAN_UP_FOLDER);
    for (const folder of run.folders) {
      for (const step of folder.steps.filter(isRecordDelete)) {
        if (folder === cleanUp) expect(step.folder, label(step)).not.toBe(CLEAN_UP_FOLDER);
        else expect(step.folder, label(step)).toBe(folder.name);
      }
    }
    for (const step of cleanUp?.steps ?? []) {
      const home = run.folders.findIndex((folder) => folder.name === step.folder);
      const neededLater = run.folders.slice(home + 1).some((folder) => folder.steps.some((other) => other !== step && other.uses.has(step.stem!)));
      const namedByMoved = steps.some((other) => other.creates && other.uses.has(step.stem!) && cleanUp!.steps.some((moved) => moved.stem === other.creates));
      expect(neededLater || namedByMoved, label(step)).toBe(true);
    }
  });
});

describe('the work-platform records', () => {
  it('are the creates of the contract, by path parameter', () => {
    const resources = runResources(documentOf('work-platform'));
    expect(Object.fromEntries([...resources].map(([param, resource]) => [param, `${resource.create.method} ${resource.create.path}`]))).toEqual({
      taskId: 'post /v1/tasks',
      projectId: 'post /v1/projects',
      companyId: 'post /v1/companies',
      contactId: 'post /v1/contacts',
      dealId: 'post /v1/deals',
      contractId: 'post /v1/contracts',
      connectorId: 'post /v1/connectors',
      webhookId: 'post /v1/webhooks',
    });
  });

  it('put the project and the deal, which later folders use, into the clean-up, the deal first', () => {
    const run = planRun('work-platform', documentOf('work-platform'));
    expect(run.folders.at(-1)?.name).toBe(CLEAN_UP_FOLDER);
    expect(run.folders.at(-1)?.steps.map((step) => step.operationId)).toEqual(['deleteDeal', 'deleteProject']);
    expect(run.folders.map((folder) => folder.name).slice(0, 2)).toEqual(['Projects', 'Tasks']);
  });
});
