// What the conformance runner reads from a contract to create its own records: the kinds of
// record the paths name, and where an example body names other records.
import { describe, expect, it } from 'vitest';
import { idsIn, kindActedOn, replaceIds, resourceKindsOf } from '../../scripts/conformance/resourceKinds.js';
import { contractOperations } from '../support/operations.js';

describe('resource kinds of the work-platform contract', () => {
  const operations = contractOperations('work-platform');
  const kinds = resourceKindsOf(operations);
  const byId = (operationId: string) => operations.find((operation) => operation.operationId === operationId)!;

  it('finds each kind with the operations that create, list, read and delete it, and its id prefix', () => {
    const tasks = kinds.get('/v1/tasks/{taskId}')!;
    expect(tasks).toMatchObject({ collection: '/v1/tasks', parameter: 'taskId', idPrefix: 'tsk_' });
    expect([tasks.create?.operationId, tasks.list?.operationId, tasks.read?.operationId, tasks.remove?.operationId]).toEqual(['createTask', 'listTasks', 'getTask', 'deleteTask']);
    expect(kinds.get('/v1/contracts/{contractId}')!.idPrefix).toBe('ctr_');
    expect([...kinds.keys()].every((template) => /\}$/.test(template))).toBe(true);
  });

  it('knows which record an action acts on', () => {
    expect(kindActedOn(byId('signContract'), kinds)?.template).toBe('/v1/contracts/{contractId}');
    expect(kindActedOn(byId('disconnectConnector'), kinds)?.template).toBe('/v1/connectors/{connectorId}');
    expect(kindActedOn(byId('listTasks'), kinds)).toBeUndefined();
  });

  it('finds and replaces the ids an example body names, and only those', async () => {
    const example = byId('createDeal').requestBodyExample as Record<string, unknown>;
    const found: string[] = [];
    idsIn({ ...example, contactIds: ['ctc_a1b2c3'], title: 'tsk_notAnIdHere' }, (id) => found.push(id));
    expect(found).toEqual([example.ownerId, 'ctc_a1b2c3']);
    const replaced = (await replaceIds({ ...example, contactIds: ['ctc_a1b2c3'] }, async (id) => `new:${id}`)) as Record<string, unknown>;
    expect(replaced).toMatchObject({ title: example.title, ownerId: `new:${example.ownerId}`, contactIds: ['new:ctc_a1b2c3'], amountMinor: example.amountMinor });
  });
});

describe('resource kinds of the portfolio contract', () => {
  it('finds the slug kinds, which no operation creates and whose slugs have no prefix', () => {
    const kinds = resourceKindsOf(contractOperations('portfolio'));
    const posts = kinds.get('/api/v1/posts/{slug}')!;
    expect(posts).toMatchObject({ collection: '/api/v1/posts', parameter: 'slug', create: undefined, list: expect.objectContaining({ operationId: 'getPosts' }) });
    expect(posts.idPrefix).toBeUndefined();
  });
});
