import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { JsonObject, JsonValue } from '../../scripts/contract/document.js';
import { formatProblem } from '../../scripts/contract/problems.js';
import { bundledDocument, checkReleases, readReleased, releaseContracts, releasedFile } from '../../scripts/contract/release.js';
import { diffSpecs, type SpecChange } from '../../scripts/contract/specDiff.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A small API: a list with a query parameter, a create with a request body, a read returning a shared component. */
function baseSpec(): JsonObject {
  return {
    openapi: '3.1.0',
    info: { title: 'Pairs', version: '1.0.0' },
    paths: {
      '/items': {
        get: {
          operationId: 'listItems',
          parameters: [
            { name: 'status', in: 'query', schema: { type: 'string', enum: ['OPEN', 'DONE'] } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          ],
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Item' } } } } } } },
          },
        },
        post: {
          operationId: 'createItem',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['title'],
                  properties: {
                    title: { type: 'string', maxLength: 200 },
                    code: { type: 'string' },
                    note: { type: ['string', 'null'] },
                  },
                },
              },
            },
          },
          responses: { '201': { description: 'created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } },
        },
      },
      '/items/{itemId}': {
        get: {
          operationId: 'getItem',
          parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
            '404': { description: 'missing' },
          },
        },
      },
    },
    components: {
      schemas: {
        Item: {
          type: 'object',
          required: ['id', 'title', 'status'],
          properties: {
            id: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'string', enum: ['OPEN', 'DONE'] },
            dueOn: { type: ['string', 'null'] },
          },
        },
      },
    },
  };
}

/** `after` made from the base by `change`. */
function changed(change: (spec: any) => void): JsonObject {
  const spec = structuredClone(baseSpec());
  change(spec);
  return spec;
}

const summary = (changes: SpecChange[]) => changes.map(({ kind, breaking, operationIds, pointer }) => ({ kind, breaking, operationIds, pointer }));

describe('diffSpecs: breaking changes', () => {
  it('finds nothing between a spec and itself', () => {
    expect(diffSpecs(baseSpec(), baseSpec())).toEqual([]);
  });

  it('a removed operation', () => {
    const after = changed((spec) => delete spec.paths['/items/{itemId}']);
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'operation-removed', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get' }]);
  });

  it('a renamed operation: the old operationId removed (breaking), the new one added', () => {
    const after = changed((spec) => (spec.paths['/items/{itemId}'].get.operationId = 'fetchItem'));
    const changes = diffSpecs(baseSpec(), after);
    expect(changes.map((change) => [change.kind, change.breaking, change.operationIds])).toEqual(
      expect.arrayContaining([
        ['operation-removed', true, ['getItem']],
        ['operation-added', false, ['fetchItem']],
      ]),
    );
  });

  it('an operation moved to another path', () => {
    const after = changed((spec) => {
      spec.paths['/things/{itemId}'] = spec.paths['/items/{itemId}'];
      delete spec.paths['/items/{itemId}'];
    });
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'operation-moved', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1things~1{itemId}/get' }]);
  });

  it('a removed member of a response: reported once at the shared component, with every operation that returns it', () => {
    const after = changed((spec) => delete spec.components.schemas.Item.properties.dueOn);
    const changes = diffSpecs(baseSpec(), after);
    expect(summary(changes)).toEqual([{ kind: 'member-removed', breaking: true, operationIds: ['createItem', 'getItem', 'listItems'], pointer: '/components/schemas/Item/properties/dueOn' }]);
    expect(changes[0]).toMatchObject({ old: 'dueOn', new: 'none' });
  });

  it('a response member no longer required', () => {
    const after = changed((spec) => (spec.components.schemas.Item.required = ['id', 'title']));
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'member-now-optional', breaking: true, operationIds: ['createItem', 'getItem', 'listItems'], pointer: '/components/schemas/Item/properties/status' }]);
  });

  it('a removed parameter', () => {
    const after = changed((spec) => spec.paths['/items'].get.parameters.splice(0, 1));
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'parameter-removed', breaking: true, operationIds: ['listItems'], pointer: '/paths/~1items/get/parameters/0' }]);
  });

  it('a removed enum value: breaking in a parameter a client sends, not in a response it receives', () => {
    const after = changed((spec) => {
      spec.paths['/items'].get.parameters[0].schema.enum = ['OPEN'];
      spec.components.schemas.Item.properties.status.enum = ['OPEN'];
    });
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([
      { kind: 'enum-value-removed', breaking: false, operationIds: ['createItem', 'getItem', 'listItems'], pointer: '/components/schemas/Item/properties/status' },
      { kind: 'enum-value-removed', breaking: true, operationIds: ['listItems'], pointer: '/paths/~1items/get/parameters/0/schema' },
    ]);
  });

  it('a new required request member, and an optional one made required', () => {
    const after = changed((spec) => {
      const body = spec.paths['/items'].post.requestBody.content['application/json'].schema;
      body.properties.projectId = { type: 'string' };
      body.required = ['title', 'projectId', 'code'];
    });
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([
      { kind: 'member-now-required', breaking: true, operationIds: ['createItem'], pointer: '/paths/~1items/post/requestBody/content/application~1json/schema/properties/code' },
      { kind: 'member-added', breaking: true, operationIds: ['createItem'], pointer: '/paths/~1items/post/requestBody/content/application~1json/schema/properties/projectId' },
    ]);
  });

  it('a new required parameter', () => {
    const after = changed((spec) => spec.paths['/items'].get.parameters.push({ name: 'projectId', in: 'query', required: true, schema: { type: 'string' } }));
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'parameter-added', breaking: true, operationIds: ['listItems'], pointer: '/paths/~1items/get/parameters/2' }]);
  });

  it('a type removed from a union in a request', () => {
    const after = changed((spec) => (spec.paths['/items'].post.requestBody.content['application/json'].schema.properties.note.type = 'string'));
    const changes = diffSpecs(baseSpec(), after);
    expect(summary(changes)).toEqual([{ kind: 'type-removed', breaking: true, operationIds: ['createItem'], pointer: '/paths/~1items/post/requestBody/content/application~1json/schema/properties/note' }]);
    expect(changes[0]).toMatchObject({ old: 'string | null', new: 'string' });
  });

  it('a smaller maxLength, a smaller maximum and a new pattern in a request', () => {
    const after = changed((spec) => {
      spec.paths['/items'].post.requestBody.content['application/json'].schema.properties.title.maxLength = 100;
      spec.paths['/items'].post.requestBody.content['application/json'].schema.properties.code.pattern = '^[A-Z]+$';
      spec.paths['/items'].get.parameters[1].schema.maximum = 50;
    });
    const changes = diffSpecs(baseSpec(), after);
    expect(changes.map((change) => [change.kind, change.breaking, change.old, change.new])).toEqual([
      ['constraint-narrowed', true, 'maximum: 100', 'maximum: 50'],
      ['constraint-narrowed', true, 'pattern: none', 'pattern: "^[A-Z]+$"'],
      ['constraint-narrowed', true, 'maxLength: 200', 'maxLength: 100'],
    ]);
  });

  it('a removed response status', () => {
    const after = changed((spec) => delete spec.paths['/items/{itemId}'].get.responses['404']);
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'response-removed', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/responses/404' }]);
  });
});

describe('diffSpecs: webhooks, which this API sends and a subscriber reads', () => {
  const withWebhook = (payload: JsonObject): JsonObject =>
    changed((spec) => {
      spec.webhooks = { 'item.created': { post: { operationId: 'onItemCreated', requestBody: { required: true, content: { 'application/json': { schema: payload } } }, responses: { '200': { description: 'received' } } } } };
    });
  const payload = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, title: { type: 'string' } } };

  it('a member removed from an event payload is breaking', () => {
    const after = withWebhook({ ...payload, properties: { id: { type: 'string' } } });
    expect(summary(diffSpecs(withWebhook(payload), after))).toEqual([
      { kind: 'member-removed', breaking: true, operationIds: ['onItemCreated'], pointer: '/webhooks/item.created/post/requestBody/content/application~1json/schema/properties/title' },
    ]);
  });

  it('a member an allOf part declares again (an envelope narrowed by its event) is compared in every part', () => {
    const envelope = { type: 'object', required: ['data'], properties: { data: { type: 'object' } } };
    const event = (object: JsonObject): JsonObject => ({ allOf: [envelope, { properties: { data: { type: 'object', properties: { object } } } }] });
    const before = withWebhook(event({ type: 'object', properties: { id: { type: 'string' }, title: { type: 'string' } } }));
    const after = withWebhook(event({ type: 'object', properties: { id: { type: 'string' } } }));
    expect(summary(diffSpecs(before, after))).toEqual([
      {
        kind: 'member-removed',
        breaking: true,
        operationIds: ['onItemCreated'],
        pointer: '/webhooks/item.created/post/requestBody/content/application~1json/schema/allOf/1/properties/data/properties/object/properties/title',
      },
    ]);
  });

  it('a new required member of an event payload is not', () => {
    const after = withWebhook({ ...payload, required: ['id', 'title', 'at'], properties: { ...payload.properties, at: { type: 'string' } } });
    expect(diffSpecs(withWebhook(payload), after).map((change) => [change.kind, change.breaking])).toEqual([
      ['member-added', false],
      ['member-now-required', false],
    ]);
  });
});

describe('diffSpecs: changes that are not breaking', () => {
  it('an added operation', () => {
    const after = changed((spec) => (spec.paths['/items/{itemId}'].delete = { operationId: 'deleteItem', responses: { '204': { description: 'gone' } } }));
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([{ kind: 'operation-added', breaking: false, operationIds: ['deleteItem'], pointer: '/paths/~1items~1{itemId}/delete' }]);
  });

  it('an added optional request member and an added optional parameter', () => {
    const after = changed((spec) => {
      spec.paths['/items'].post.requestBody.content['application/json'].schema.properties.priority = { type: 'string' };
      spec.paths['/items'].get.parameters.push({ name: 'q', in: 'query', schema: { type: 'string' } });
    });
    expect(diffSpecs(baseSpec(), after).map((change) => [change.kind, change.breaking, change.operationIds])).toEqual([
      ['parameter-added', false, ['listItems']],
      ['member-added', false, ['createItem']],
    ]);
  });

  it('a widened enum, in a parameter and in a response', () => {
    const after = changed((spec) => {
      spec.paths['/items'].get.parameters[0].schema.enum = ['OPEN', 'DONE', 'ARCHIVED'];
      spec.components.schemas.Item.properties.status.enum = ['OPEN', 'DONE', 'ARCHIVED'];
    });
    const changes = diffSpecs(baseSpec(), after);
    expect(changes.map((change) => [change.kind, change.breaking])).toEqual([
      ['enum-value-added', false],
      ['enum-value-added', false],
    ]);
    expect(changes[0]).toMatchObject({ old: 'enum ["OPEN","DONE"]', new: 'enum ["OPEN","DONE","ARCHIVED"]' });
  });

  it('an added response member and an added response status', () => {
    const after = changed((spec) => {
      spec.components.schemas.Item.properties.labels = { type: 'array', items: { type: 'string' } };
      spec.paths['/items/{itemId}'].get.responses['410'] = { description: 'gone' };
    });
    expect(summary(diffSpecs(baseSpec(), after))).toEqual([
      { kind: 'member-added', breaking: false, operationIds: ['createItem', 'getItem', 'listItems'], pointer: '/components/schemas/Item/properties/labels' },
      { kind: 'response-added', breaking: false, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/responses/410' },
    ]);
  });

  it('a wider request: a larger maxLength, a type added to a union', () => {
    const after = changed((spec) => {
      const body = spec.paths['/items'].post.requestBody.content['application/json'].schema;
      body.properties.title.maxLength = 500;
      body.properties.code.type = ['string', 'null'];
    });
    expect(diffSpecs(baseSpec(), after).map((change) => [change.kind, change.breaking])).toEqual([
      ['type-added', false],
      ['constraint-widened', false],
    ]);
  });
});

describe('diffSpecs: response headers, closed requests, union branches, security and path templates', () => {
  const withRateLimitHeader = (header: JsonObject): JsonObject =>
    changed((spec) => (spec.paths['/items/{itemId}'].get.responses['200'].headers = { 'RateLimit-Remaining': header }));
  const rateLimitHeader = { required: true, schema: { type: 'integer', minimum: 0 } };

  it('a response header removed, or no longer always sent, is breaking; one added is not', () => {
    const before = withRateLimitHeader(rateLimitHeader);
    const removed = changed((spec) => (spec.paths['/items/{itemId}'].get.responses['200'].headers = {}));
    expect(summary(diffSpecs(before, removed))).toEqual([
      { kind: 'response-header-removed', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/responses/200/headers/RateLimit-Remaining' },
    ]);
    expect(summary(diffSpecs(before, withRateLimitHeader({ schema: rateLimitHeader.schema })))).toEqual([
      { kind: 'response-header-now-optional', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/responses/200/headers/RateLimit-Remaining' },
    ]);
    expect(summary(diffSpecs(baseSpec(), before))).toEqual([
      { kind: 'response-header-added', breaking: false, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/responses/200/headers/RateLimit-Remaining' },
    ]);
  });

  it("a response header's schema is compared like a response member's, names case-insensitively", () => {
    const before = withRateLimitHeader(rateLimitHeader);
    const after = changed((spec) => (spec.paths['/items/{itemId}'].get.responses['200'].headers = { 'ratelimit-remaining': { required: true, schema: { type: ['integer', 'string'] } } }));
    expect(diffSpecs(before, after).map((change) => [change.kind, change.breaking])).toEqual([
      ['constraint-widened', false],
      ['type-added', true],
    ]);
  });

  it('additionalProperties: false new in a request body is breaking; dropped from a response is not', () => {
    const closedRequest = changed((spec) => (spec.paths['/items'].post.requestBody.content['application/json'].schema.additionalProperties = false));
    expect(summary(diffSpecs(baseSpec(), closedRequest))).toEqual([
      { kind: 'constraint-narrowed', breaking: true, operationIds: ['createItem'], pointer: '/paths/~1items/post/requestBody/content/application~1json/schema' },
    ]);
    const closedResponse = changed((spec) => (spec.components.schemas.Item.additionalProperties = false));
    expect(diffSpecs(closedResponse, baseSpec()).map((change) => [change.kind, change.breaking])).toEqual([['constraint-widened', false]]);
    expect(diffSpecs(closedRequest, baseSpec()).map((change) => [change.kind, change.breaking])).toEqual([['constraint-widened', false]]);
  });

  const withUnion = (branches: JsonValue[]): JsonObject =>
    changed((spec) => {
      spec.components.schemas.ByEmail = { type: 'object', required: ['email'], properties: { email: { type: 'string' } } };
      spec.components.schemas.ByPhone = { type: 'object', required: ['phone'], properties: { phone: { type: 'string' } } };
      spec.components.schemas.ByHandle = { type: 'object', required: ['handle'], properties: { handle: { type: 'string' } } };
      spec.paths['/items'].post.requestBody.content['application/json'].schema.properties.contact = { oneOf: branches };
      spec.components.schemas.Item.properties.contact = { oneOf: branches };
    });
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

  it('a oneOf branch removed from a request is breaking, from a response not; one added is not (like an enum value)', () => {
    const two = withUnion([ref('ByEmail'), ref('ByPhone')]);
    const changes = diffSpecs(two, withUnion([ref('ByEmail')]));
    expect(changes.map((change) => [change.kind, change.breaking, change.operationIds])).toEqual([
      ['branch-removed', false, ['createItem', 'getItem', 'listItems']],
      ['branch-removed', true, ['createItem']],
    ]);
    expect(changes[1]).toMatchObject({ old: '#/components/schemas/ByPhone', new: 'none' });
    expect(diffSpecs(two, withUnion([ref('ByEmail'), ref('ByPhone'), ref('ByHandle')])).map((change) => [change.kind, change.breaking])).toEqual([
      ['branch-added', false],
      ['branch-added', false],
    ]);
  });

  it('branches are paired by the component they reference, so a reordered union is no change, and a changed branch is compared inside', () => {
    const two = withUnion([ref('ByEmail'), ref('ByPhone')]);
    expect(diffSpecs(two, withUnion([ref('ByPhone'), ref('ByEmail')]))).toEqual([]);
    const inlineBefore = withUnion([{ type: 'string', maxLength: 50 }, { type: 'integer' }]);
    const inlineAfter = withUnion([{ type: 'string', maxLength: 20 }, { type: 'integer' }]);
    expect(diffSpecs(inlineBefore, inlineAfter).map((change) => [change.kind, change.breaking, change.old, change.new])).toEqual([
      ['constraint-narrowed', false, 'maxLength: 50', 'maxLength: 20'],
      ['constraint-narrowed', true, 'maxLength: 50', 'maxLength: 20'],
    ]);
  });

  it('a referenced branch added before an inline one leaves the inline one paired with itself', () => {
    const before = withUnion([{ type: 'string', maxLength: 50 }]);
    const after = withUnion([ref('ByEmail'), { type: 'string', maxLength: 50 }]);
    const kinds = diffSpecs(before, after).map((change) => change.kind);
    // Paired with itself: nothing removed, no constraint changed; only the new branch (and its new type) is reported.
    expect(kinds.filter((kind) => kind === 'branch-added')).toHaveLength(2);
    expect(kinds.filter((kind) => kind === 'branch-removed' || kind.startsWith('constraint-'))).toEqual([]);
  });

  const withSecurity = (security: JsonValue | undefined): JsonObject =>
    changed((spec) => {
      if (security === undefined) delete spec.paths['/items/{itemId}'].get.security;
      else spec.paths['/items/{itemId}'].get.security = security;
    });
  const patOrOauth: JsonValue = [{ bearerAuth: [] }, { oauth2: ['items:read'] }];

  it('a scope added to a requirement, an alternative removed, or a public operation protected is breaking', () => {
    const before = withSecurity(patOrOauth);
    const moreScopes = diffSpecs(before, withSecurity([{ bearerAuth: [] }, { oauth2: ['items:read', 'items:admin'] }]));
    expect(summary(moreScopes)).toEqual([{ kind: 'security-narrowed', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{itemId}/get/security' }]);
    expect(moreScopes[0]).toMatchObject({ old: 'bearerAuth or oauth2 [items:read]', new: 'bearerAuth or oauth2 [items:admin, items:read]' });
    expect(diffSpecs(before, withSecurity([{ bearerAuth: [] }])).map((change) => [change.kind, change.breaking])).toEqual([['security-narrowed', true]]);
    expect(diffSpecs(withSecurity(undefined), before).map((change) => [change.kind, change.breaking, change.old])).toEqual([['security-narrowed', true, 'public']]);
  });

  it('a scope dropped, an alternative added or a reordered requirement is not breaking (the reordering is no change at all)', () => {
    const before = withSecurity([{ bearerAuth: [] }, { oauth2: ['items:read', 'items:list'] }]);
    expect(diffSpecs(before, withSecurity([{ oauth2: ['items:list', 'items:read'] }, { bearerAuth: [] }]))).toEqual([]);
    expect(diffSpecs(before, withSecurity(patOrOauth)).map((change) => [change.kind, change.breaking])).toEqual([['security-widened', false]]);
    expect(diffSpecs(withSecurity([{ bearerAuth: [] }]), withSecurity(patOrOauth)).map((change) => [change.kind, change.breaking])).toEqual([['security-widened', false]]);
  });

  it('the document-wide requirement applies to operations without their own', () => {
    const before = changed((spec) => (spec.security = [{ bearerAuth: [] }]));
    const after = changed((spec) => (spec.security = [{ oauth2: ['items:read'] }]));
    expect(diffSpecs(before, after).map((change) => [change.kind, change.breaking, change.operationIds])).toEqual([
      ['security-narrowed', true, ['listItems']],
      ['security-narrowed', true, ['createItem']],
      ['security-narrowed', true, ['getItem']],
    ]);
  });

  it('a path parameter renamed in the same place of the template has not moved the operation, but is breaking (clients name it)', () => {
    const after = changed((spec) => {
      const item = spec.paths['/items/{itemId}'];
      item.get.parameters[0].name = 'id';
      spec.paths['/items/{id}'] = item;
      delete spec.paths['/items/{itemId}'];
    });
    const changes = diffSpecs(baseSpec(), after);
    expect(summary(changes)).toEqual([{ kind: 'parameter-renamed', breaking: true, operationIds: ['getItem'], pointer: '/paths/~1items~1{id}/get/parameters/0' }]);
    expect(changes[0]).toMatchObject({ old: 'path parameter itemId', new: 'path parameter id' });
  });

  it('a path parameter moved to another segment is a moved operation', () => {
    const after = changed((spec) => {
      spec.paths['/items/{itemId}/view'] = spec.paths['/items/{itemId}'];
      delete spec.paths['/items/{itemId}'];
    });
    expect(diffSpecs(baseSpec(), after).map((change) => [change.kind, change.breaking])).toEqual([['operation-moved', true]]);
  });
});

describe('npm run check:contract against the released snapshot (a temporary copy of specs/)', () => {
  const temporaryDirs: string[] = [];
  afterAll(() => {
    for (const dir of temporaryDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The version the copy's specs carry, released on RELEASED_ON as the baseline of each case; the next major; the entries so far. */
  let version = '';
  let nextMajor = '';
  let entryCount = 0;
  let releasedOn = '';
  const RELEASED_ON = '2026-11-30';

  /** A copy of specs/ whose current state is released (whatever the repository has released), so that each case starts from no change. */
  function copyOfSpecs(): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-release-'));
    temporaryDirs.push(root);
    fs.cpSync(path.join(REPO_ROOT, 'specs'), path.join(root, 'specs'), { recursive: true });
    version = (YAML.parse(fs.readFileSync(path.join(root, 'specs/work-platform/openapi.yaml'), 'utf8')) as { info: { version: string } }).info.version;
    nextMajor = `${Number(version.split('.')[0]) + 1}.0.0`;
    entryCount = (YAML.parse(fs.readFileSync(path.join(root, 'specs/work-platform/changelog.yaml'), 'utf8')) as { entries: unknown[] }).entries.length;
    expect(releaseContracts(root, ['work-platform'], RELEASED_ON).problems).toEqual([]);
    // Released on RELEASED_ON, or earlier when the repository had released this state already.
    releasedOn = readReleased(root, 'work-platform')!.mark.date;
    return root;
  }
  const edit = (root: string, file: string, change: (text: string) => string) => fs.writeFileSync(path.join(root, file), change(fs.readFileSync(path.join(root, file), 'utf8')));
  const problems = (root: string) => checkReleases(root, ['work-platform'], '2026-12-01').map(formatProblem);
  const editChangelog = (root: string, change: (entries: Record<string, unknown>[]) => void) =>
    edit(root, 'specs/work-platform/changelog.yaml', (text) => {
      const changelog = YAML.parse(text) as { entries: Record<string, unknown>[] };
      change(changelog.entries);
      return YAML.stringify(changelog);
    });
  const appendEntry = (root: string, entry: Record<string, unknown>) => editChangelog(root, (entries) => entries.push(entry));

  it('passes on the committed specs', () => {
    expect(checkReleases(REPO_ROOT, ['portfolio', 'work-platform'], '2026-12-01').map(formatProblem)).toEqual([]);
  });

  /** Every operation that returns a Task: the task operations, and every event (the envelope's `data.object` may be a task). */
  const eventOperations = Object.values((bundledDocument(REPO_ROOT, 'work-platform').webhooks ?? {}) as Record<string, { post: { operationId: string } }>).map(
    (event) => event.post.operationId,
  );
  const TASK_READERS = ['createTask', 'getTask', 'listTasks', 'updateTask', ...eventOperations].sort();

  it('fails on a removed response member without an entry, saying which entry to write and which version to set', () => {
    const root = copyOfSpecs();
    edit(root, 'specs/work-platform/components/schemas/Task.yaml', (text) => text.replace(/\n {2}dueOn:\n(?: {4}.*\n)+/, '\n').replace('priority, dueOn, assigneeId', 'priority, assigneeId'));
    const found = problems(root);
    expect(found).toHaveLength(2);
    expect(found[0]).toContain(`specs/work-platform/changelog.yaml: has no entry since the release of ${version} (${releasedOn}) for this change:`);
    expect(found[0]).toContain(`breaking member-removed at /components/schemas/Task/properties/dueOn (${TASK_READERS.join(', ')}): dueOn (required) → none`);
    expect(found[0]).toContain("- date: '2026-12-01'");
    expect(found[0]).toContain(`affectedOperations: [${TASK_READERS.join(', ')}]`);
    expect(found[0]).toContain(`version: '${nextMajor}'`);
    expect(found[0]).toContain("old: 'dueOn (required)'");
    expect(found[0]).toContain('breaking: true');
    expect(found[1]).toContain(`specs/work-platform/openapi.yaml: info.version: breaking change since the release of ${version} without a new major version:`);
    expect(found[1]).toContain(`set info.version to '${nextMajor}'`);
  });

  it('then asks for breaking: true and the new version in the entry, and passes once info.version has the next major', () => {
    const root = copyOfSpecs();
    edit(root, 'specs/work-platform/components/schemas/Task.yaml', (text) => text.replace(/\n {2}dueOn:\n(?: {4}.*\n)+/, '\n').replace('priority, dueOn, assigneeId', 'priority, assigneeId'));
    appendEntry(root, { date: '2026-12-01', version, summary: 'Tasks lose dueOn.', affectedOperations: TASK_READERS, old: 'dueOn', new: 'none', breaking: false });
    const found = problems(root);
    expect(found).toHaveLength(2);
    expect(found[0]).toContain(`info.version: breaking change since the release of ${version} without a new major version`);
    expect(found[1]).toContain('entry "Tasks lose dueOn.": describes a breaking change');
    expect(found[1]).toContain('write breaking: true');

    editChangelog(root, (entries) => Object.assign(entries.at(-1)!, { version: nextMajor, breaking: true }));
    edit(root, 'specs/work-platform/openapi.yaml', (text) => text.replace(`  version: ${version}\n`, `  version: ${nextMajor}\n`));
    expect(problems(root)).toEqual([]);

    const released = releaseContracts(root, ['work-platform'], '2026-12-01');
    const mark = { date: '2026-12-01', version: nextMajor, changelogEntries: entryCount + 1 };
    expect(released).toEqual({ outcomes: [{ api: 'work-platform', released: mark }], problems: [] });
    expect(JSON.parse(fs.readFileSync(path.join(root, releasedFile('work-platform')), 'utf8'))['x-released']).toEqual(mark);
    expect(problems(root)).toEqual([]);
  });

  it('accepts an added operation with an entry and no new major version; names the entry and member of an invalid changelog', () => {
    const root = copyOfSpecs();
    edit(root, 'specs/work-platform/openapi.yaml', (text) => text.replace('  /v1/changelog.json:\n', '  /v1/changelog-copy.json:\n    $ref: ./paths/changelog-copy.yaml\n  /v1/changelog.json:\n'));
    fs.writeFileSync(path.join(root, 'specs/work-platform/paths/changelog-copy.yaml'), fs.readFileSync(path.join(root, 'specs/work-platform/paths/changelog-json.yaml'), 'utf8').replace('operationId: getChangelogJson', 'operationId: getChangelogCopy'));
    expect(problems(root).join('\n')).toContain('operation-added at /paths/~1v1~1changelog-copy.json/get (getChangelogCopy): none → GET /v1/changelog-copy.json (getChangelogCopy)');

    appendEntry(root, { date: '2026-12-01', version, summary: 'A copy of the changelog.', affectedOperations: ['getChangelogCopy'], old: 'none', new: 'GET /v1/changelog-copy.json', breaking: false });
    expect(problems(root)).toEqual([]);

    appendEntry(root, { date: '2026-12-01', version, summary: 'Half an entry.', affectedOperations: [] });
    const half = `specs/work-platform/changelog.yaml: entry ${entryCount + 2} (2026-12-01 "Half an entry."): member`;
    expect(problems(root)).toEqual([
      `${half} \`old\` is missing`,
      `${half} \`new\` is missing`,
      `${half} \`breaking\` is missing`,
      `${half} \`affectedOperations\` must NOT have fewer than 1 items`,
    ]);
  });
});
