import { describe, expect, it } from 'vitest';
import { createdLocationsOf } from '../../scripts/contract/contractRules.js';
import type { JsonObject } from '../../scripts/contract/document.js';
import { createdHeaders } from '../../src/workPlatform/versions.js';

const created = (headers?: JsonObject) => ({ responses: { '201': { description: 'Created', ...(headers ? { headers } : {}) } } });

describe('createdLocationsOf', () => {
  it("gives each create operation that declares Location its collection's instance path, and no other operation one", () => {
    const locations = createdLocationsOf({
      paths: {
        '/v1/boards': { post: { operationId: 'createBoard', ...created({ Location: { $ref: '#/components/headers/Location' } }) } },
        '/v1/boards/{boardId}': { get: { operationId: 'getBoard', responses: { '200': { description: 'OK' } } } },
        '/v1/boards/{boardId}/cards': { post: { operationId: 'createCard', ...created({ location: { schema: { type: 'string' } } }) } },
        '/v1/boards/{boardId}/cards/{cardId}': { delete: { operationId: 'deleteCard', responses: { '204': { description: 'Gone' } } } },
        '/v1/notes': { post: { operationId: 'createNote', ...created() } },
        '/v1/notes/{noteId}': { get: { operationId: 'getNote', responses: { '200': { description: 'OK' } } } },
      },
      components: { headers: { Location: { schema: { type: 'string' } } } },
    } as JsonObject);
    expect(locations).toEqual({ createBoard: '/v1/boards/{boardId}', createCard: '/v1/boards/{boardId}/cards/{cardId}' });
  });
});

describe('createdHeaders', () => {
  it("fills the spec's instance path with the new record's id, and gives its version as the ETag", () => {
    expect(createdHeaders('createTask', { id: 'tsk_new1', version: 1 })).toEqual({ location: '/v1/tasks/tsk_new1', etag: '"1"' });
    expect(createdHeaders('createWebhook', { id: 'whk_a', version: 3 })).toEqual({ location: '/v1/webhooks/whk_a', etag: '"3"' });
    expect(() => createdHeaders('getTask', { id: 'tsk_x', version: 1 })).toThrow(/declares no Location/);
  });
});
