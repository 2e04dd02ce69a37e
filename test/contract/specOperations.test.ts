// The one reader of a contract's operations, against small inline documents.

import { describe, expect, it } from 'vitest';
import { readSpecOperations, type SpecOperation } from '../../src/contract/specOperations.js';

const operation = (operationId: string, extra: Record<string, unknown> = {}) => ({
  operationId,
  'x-ratelimit-class': 'read',
  'x-required-scopes': ['items:read'],
  responses: { '200': { description: 'OK' } },
  ...extra,
});

const documentOf = (paths: Record<string, unknown>, root: Record<string, unknown> = { security: [{ bearerAuth: [] }] }) => ({ openapi: '3.1.0', ...root, paths });

const byId = (document: object): Record<string, SpecOperation> => Object.fromEntries(readSpecOperations(document).map((read) => [read.operationId, read]));

describe('readSpecOperations', () => {
  it('lists every operation once, in the order of paths and then of the methods, following a path item $ref', () => {
    const document = documentOf({
      '/items': { post: operation('createItem'), get: operation('listItems'), parameters: [] },
      '/items/{itemId}': { $ref: '#/components/pathItems/item' },
    });
    (document as Record<string, unknown>).components = { pathItems: { item: { delete: operation('deleteItem'), get: operation('getItem') } } };
    expect(readSpecOperations(document).map(({ method, path, operationId, pointer }) => [method, path, operationId, pointer])).toEqual([
      ['get', '/items', 'listItems', '/paths/~1items/get'],
      ['post', '/items', 'createItem', '/paths/~1items/post'],
      ['get', '/items/{itemId}', 'getItem', '/paths/~1items~1{itemId}/get'],
      ['delete', '/items/{itemId}', 'deleteItem', '/paths/~1items~1{itemId}/delete'],
    ]);
  });

  describe('security: the operation overrides the root, absent means the root', () => {
    const document = documentOf({
      '/inherits': { get: operation('inherits') },
      '/own': { get: operation('own', { security: [{ oauth2: ['items:read'] }, { bearerAuth: [] }] }) },
      '/public': { get: operation('public', { security: [] }) },
      '/optional': { get: operation('optional', { security: [{}, { bearerAuth: [] }] }) },
      '/malformed': { get: operation('malformed', { security: 'none' }) },
    });
    const read = byId(document);

    it('an operation without security takes the root requirements and needs a credential', () => {
      expect(read.inherits).toMatchObject({ security: [{ bearerAuth: [] }], credential: 'required', isPublic: false });
    });

    it("an operation's own security replaces the root's", () => {
      expect(read.own).toMatchObject({ security: [{ oauth2: ['items:read'] }, { bearerAuth: [] }], credential: 'required', isPublic: false });
    });

    it('security: [] needs no credential: public', () => {
      expect(read.public).toMatchObject({ security: [], credential: 'none', isPublic: true });
    });

    it('{} among the requirements admits anonymous calls: the credential is optional, and the operation counts as public', () => {
      expect(read.optional).toMatchObject({ credential: 'optional', isPublic: true });
    });

    it('a security that is not a list of requirements admits no one rather than everyone', () => {
      expect(read.malformed).toMatchObject({ credential: 'required', isPublic: false });
    });

    it('an operation of a document without security anywhere is public', () => {
      expect(byId(documentOf({ '/open': { get: operation('open') } }, {})).open).toMatchObject({ security: [], credential: 'none', isPublic: true });
    });

    it('root security [] makes an operation without its own public, and its own requirement protects it again', () => {
      const read = byId(documentOf({ '/a': { get: operation('a') }, '/b': { get: operation('b', { security: [{ bearerAuth: [] }] }) } }, { security: [] }));
      expect(read.a!.isPublic).toBe(true);
      expect(read.b!.isPublic).toBe(false);
    });
  });

  describe('idempotent: true by default on POST, false elsewhere, x-idempotent overrides', () => {
    const read = byId(
      documentOf({
        '/items': { post: operation('createItem'), get: operation('listItems') },
        '/items/{id}': { put: operation('replaceItem', { 'x-idempotent': true }), patch: operation('updateItem'), delete: operation('deleteItem') },
        '/searches': { post: operation('search', { 'x-idempotent': false }) },
        '/odd': { post: operation('odd', { 'x-idempotent': 'yes' }) },
      }),
    );

    it('reads the default', () => {
      expect([read.createItem, read.listItems, read.updateItem, read.deleteItem].map((entry) => entry!.idempotent)).toEqual([true, false, false, false]);
    });

    it('reads an override either way', () => {
      expect(read.replaceItem!.idempotent).toBe(true);
      expect(read.search!.idempotent).toBe(false);
    });

    it('reads a declaration that is not true or false as undefined (the start-up and the build refuse it)', () => {
      expect(read.odd!.idempotent).toBeUndefined();
    });
  });

  it('reads scopes, roles, rate-limit class and cost, undefined where malformed', () => {
    const read = byId(
      documentOf({
        '/a': { get: operation('declared', { 'x-required-roles': ['owner'], 'x-ratelimit-cost': 20, 'x-ratelimit-class': 'ai', 'x-required-scopes': ['a:read', 'b:read'] }) },
        '/b': { get: { operationId: 'bare', responses: {} } },
        '/c': { get: operation('malformed', { 'x-required-scopes': 'a:read', 'x-required-roles': 'owner', 'x-ratelimit-cost': 0.5, 'x-ratelimit-class': '' }) },
        '/d': { get: { responses: {} } },
      }),
    );
    expect(read.declared).toMatchObject({ requiredScopes: ['a:read', 'b:read'], requiredRoles: ['owner'], rateLimitClass: 'ai', rateLimitCost: 20 });
    expect(read.bare).toMatchObject({ requiredScopes: undefined, requiredRoles: [], rateLimitClass: undefined, rateLimitCost: 1 });
    expect(read.malformed).toMatchObject({ requiredScopes: undefined, requiredRoles: [], rateLimitClass: undefined, rateLimitCost: undefined });
    expect(Object.values(read).find((entry) => entry.path === '/d')).toMatchObject({ operationId: undefined });
  });

  it('names a tool for each protected operation with x-required-scopes, and for no public, unscoped, or HEAD/OPTIONS/TRACE one', () => {
    const read = byId(
      documentOf({
        '/items': { get: operation('listItems'), post: operation('createItem', { 'x-required-scopes': [] }), head: operation('headItems'), options: operation('optionsItems') },
        '/openapi.json': { get: operation('getOpenApi', { security: [] }) },
        '/optional': { get: operation('optional', { security: [{}, { bearerAuth: [] }] }) },
        '/unscoped': { get: operation('unscoped', { 'x-required-scopes': undefined }) },
      }),
    );
    expect(Object.fromEntries(Object.values(read).map((entry) => [entry.operationId, entry.toolName]))).toEqual({
      listItems: 'listItems',
      createItem: 'createItem',
      headItems: undefined,
      optionsItems: undefined,
      getOpenApi: undefined,
      optional: undefined,
      unscoped: undefined,
    });
  });
});
