import { loadContractDocument } from '../support/contractClient.js';
import type { ErrorObject } from 'ajv';
import type { Document } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { ContractBackend } from '../../src/contract/contractBackend.js';
import { recordingLogger } from '../support/recordingLogger.js';
import { CursorError } from '../../src/paging/cursor.js';
import {
  ApiProblem,
  cursorProblem,
  DEFAULT_PROBLEM_TYPE_BASE,
  INTERNAL_DETAIL,
  PROBLEM_TYPES,
  validationProblem,
  type ProblemSlug,
} from '../../src/workPlatform/problems.js';
import { toProblemReply } from '../../src/workPlatform/problemFunnel.js';
import { validationIssues, type ValidationIssue } from '../../src/contract/validationIssues.js';

const BASE = DEFAULT_PROBLEM_TYPE_BASE;

describe('PROBLEM_TYPES', () => {
  it('is the closed catalogue of the contract (x-problem-types of its Problem schema), with fixed titles', () => {
    const declared = (loadContractDocument('work-platform') as any).components.schemas.Problem['x-problem-types'] as Record<string, { status: number; title: string }>;
    expect(Object.keys(declared).length).toBeGreaterThan(15);
    expect(Object.fromEntries(Object.entries(PROBLEM_TYPES).map(([slug, { status, title }]) => [slug, [status, title]]))).toEqual(
      Object.fromEntries(Object.entries(declared).map(([slug, { status, title }]) => [slug, [status, title]])),
    );
    expect(Object.isFrozen(PROBLEM_TYPES)).toBe(true);
  });

  it("is shown in the served contract as one valid example per type in the Problem schema's examples", () => {
    const document = loadContractDocument('work-platform') as any;
    const examples = document.components.schemas.Problem.examples as { type: string; status: number; title: string }[];
    expect(examples.map((example) => example.type.split('/').at(-1))).toEqual(Object.keys(PROBLEM_TYPES));
    const ajv = createAjv2020({ validateSchema: false });
    ajv.addSchema(document, 'problems-contract');
    const validate = ajv.compile({ $ref: 'problems-contract#/components/schemas/Problem' });
    for (const example of examples) expect(validate(example), `${example.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    for (const example of examples) expect([example.status, example.title]).toEqual([PROBLEM_TYPES[example.type.split('/').at(-1) as ProblemSlug].status, PROBLEM_TYPES[example.type.split('/').at(-1) as ProblemSlug].title]);
  });

  it('refuses a slug outside the catalogue', () => {
    expect(() => new ApiProblem('teapot' as ProblemSlug, { detail: 'x' })).toThrow(/unknown problem type/);
  });
});

describe('toProblemReply', () => {
  it.each(Object.keys(PROBLEM_TYPES) as ProblemSlug[])('renders %s', (slug) => {
    const reply = toProblemReply(new ApiProblem(slug, { detail: 'Because.' }), 'req_1', BASE, recordingLogger());
    expect(reply).toEqual({
      status: PROBLEM_TYPES[slug].status,
      headers: { 'content-type': 'application/problem+json' },
      body: {
        type: `${BASE}/${slug}`,
        title: PROBLEM_TYPES[slug].title,
        status: PROBLEM_TYPES[slug].status,
        detail: 'Because.',
        requestId: 'req_1',
      },
    });
  });

  it('adds the code, the headers and the extension members, in that order after the core members', () => {
    const problem = new ApiProblem('rate-limited', {
      detail: 'The write bucket of this workspace is spent; retry after 12 seconds.',
      code: 'write-limit',
      headers: { 'Retry-After': '12', 'X-RateLimit-Class': 'write' },
      extensions: { rateLimit: { class: 'write', limit: 60, windowMs: 60_000, retryAfterSec: 12, tier: 'free' } },
    });
    const reply = toProblemReply(problem, 'req_2', BASE, recordingLogger());
    expect(reply.headers).toEqual({ 'Retry-After': '12', 'X-RateLimit-Class': 'write', 'content-type': 'application/problem+json' });
    expect(Object.keys(reply.body as object)).toEqual(['type', 'title', 'status', 'detail', 'requestId', 'code', 'rateLimit']);
    expect(reply.body).toMatchObject({ code: 'write-limit', rateLimit: { class: 'write', retryAfterSec: 12 } });
  });

  it('carries every extension the contract declares', () => {
    const extensions = {
      errors: [{ path: '/title', message: 'must have at least 1 character', code: 'too_small' as const }],
      requiredScopes: ['tasks:write'],
      grantedScopes: ['tasks:read'],
      rateLimit: { class: 'read' as const, limit: 300, windowMs: 60_000, retryAfterSec: 1, tier: 'free' as const },
      quota: { period: 'month' as const, limit: 10_000, used: 10_000, resetAt: '2026-12-01T00:00:00.000Z' },
    };
    const reply = toProblemReply(new ApiProblem('forbidden', { detail: 'd', extensions }), 'r', BASE, recordingLogger());
    expect(reply.body).toMatchObject(extensions);
  });

  it('never lets extensions or headers override the core members or the content type', () => {
    const problem = new ApiProblem('not-found', {
      detail: 'No task tsk_1.',
      code: 'task-not-found',
      headers: { 'Content-Type': 'text/html' },
      extensions: { status: 200, type: 'about:blank', stack: 'x' } as never,
    });
    const reply = toProblemReply(problem, 'req_3', BASE, recordingLogger());
    expect(reply.status).toBe(404);
    expect(reply.headers).toEqual({ 'content-type': 'application/problem+json' });
    expect(reply.body).toEqual({
      type: `${BASE}/not-found`,
      title: 'Not found',
      status: 404,
      detail: 'No task tsk_1.',
      requestId: 'req_3',
      code: 'task-not-found',
    });
  });

  it('joins the type base without a doubled slash', () => {
    const reply = toProblemReply(new ApiProblem('conflict', { detail: 'd' }), 'r', 'https://example.test/p/', recordingLogger());
    expect((reply.body as { type: string }).type).toBe('https://example.test/p/conflict');
  });

  it('turns an unknown error into a generic 500, logging it with the request id and never showing it', () => {
    const logger = recordingLogger();
    const error = new Error('SQLITE_CORRUPT: database disk image is malformed at /var/data/app.db');
    const reply = toProblemReply(error, 'req_4', BASE, logger);
    expect(reply).toEqual({
      status: 500,
      headers: { 'content-type': 'application/problem+json' },
      body: { type: `${BASE}/internal`, title: 'Internal server error', status: 500, detail: INTERNAL_DETAIL, requestId: 'req_4' },
    });
    const text = JSON.stringify(reply);
    expect(text).not.toContain('SQLITE');
    expect(text).not.toContain('at ');
    expect(logger.lines).toEqual([{ level: 'error', message: 'unhandled error', fields: { requestId: 'req_4', error } }]);
  });

  it.each([
    ['a string', 'boom'],
    ['undefined', undefined],
    ['null', null],
    ['a plain object', { status: 404, message: 'looks like a problem' }],
  ])('treats a thrown %s as unknown', (_, thrown) => {
    const logger = recordingLogger();
    const reply = toProblemReply(thrown, 'req_5', BASE, logger);
    expect(reply.status).toBe(500);
    expect(logger.lines).toHaveLength(1);
  });

  it('logs a deliberate 500 problem with its cause, and does not log client problems', () => {
    const logger = recordingLogger();
    const cause = new Error('disk full');
    toProblemReply(new ApiProblem('internal', { detail: INTERNAL_DETAIL, cause }), 'req_6', BASE, logger);
    toProblemReply(new ApiProblem('not-found', { detail: 'd' }), 'req_7', BASE, logger);
    expect(logger.lines).toEqual([
      { level: 'error', message: 'server problem', fields: { requestId: 'req_6', slug: 'internal', code: undefined, detail: INTERNAL_DETAIL, error: cause } },
    ]);
  });

  it('an ApiProblem is an Error whose message is the detail', () => {
    const problem = new ApiProblem('conflict', { detail: 'Version 3 is stale.', code: 'version-conflict' });
    expect(problem).toBeInstanceOf(Error);
    expect(problem.message).toBe('Version 3 is stale.');
    expect(problem).toMatchObject({ name: 'ApiProblem', slug: 'conflict', status: 409, title: 'Conflict', code: 'version-conflict' });
  });
});

// A Task-like body schema, as the contract declares TaskCreate (plus a few keywords to cover every code).
const taskCreateSchema = {
  type: 'object',
  required: ['projectId', 'title'],
  additionalProperties: false,
  properties: {
    projectId: { type: 'string', pattern: '^prj_[A-Za-z0-9]+$' },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    priority: { type: 'string', enum: ['LOW', 'MEDIUM', 'HIGH'] },
    status: { type: 'string', enum: ['TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE'] },
    dueOn: { type: ['string', 'null'], format: 'date-time' },
    assigneeId: { type: ['string', 'null'], pattern: '^usr_[A-Za-z0-9]+$' },
    estimate: { type: 'integer', minimum: 1, maximum: 40 },
    weight: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    labels: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', minLength: 1 } },
    kind: { const: 'task' },
    severity: { type: ['string', 'null'], enum: ['S1', 'S2', null] },
    reviewer: { anyOf: [{ type: 'string', enum: ['LEAD', 'PEER'] }, { type: 'null' }] },
    'a/b~c': { type: 'boolean' },
  },
} as const;

const validateBody = createAjv2020().compile(taskCreateSchema);

function bodyIssues(body: unknown): ValidationIssue[] {
  expect(validateBody(body)).toBe(false);
  return validationIssues(validateBody.errors ?? [], 'body');
}

const validTask = { projectId: 'prj_abc', title: 'Write the spec' };

describe('validationIssues over a body (Ajv 2020-12, allErrors)', () => {
  it.each<[string, Record<string, unknown>, ValidationIssue]>([
    ['a missing property', { title: 'x' }, { path: '/projectId', code: 'required', message: 'is required' }],
    ['a wrong type', { ...validTask, title: 5 }, { path: '/title', code: 'invalid_type', message: 'must be a string' }],
    ['a nullable wrong type', { ...validTask, dueOn: 5 }, { path: '/dueOn', code: 'invalid_type', message: 'must be a string or null' }],
    ['an integer given a fraction', { ...validTask, estimate: 1.5 }, { path: '/estimate', code: 'invalid_type', message: 'must be an integer' }],
    ['a number given a boolean', { ...validTask, weight: true }, { path: '/weight', code: 'invalid_type', message: 'must be a number' }],
    ['a boolean given a string', { ...validTask, 'a/b~c': 'yes' }, { path: '/a~1b~0c', code: 'invalid_type', message: 'must be true or false' }],
    ['an enum', { ...validTask, priority: 'URGENT' }, { path: '/priority', code: 'invalid_enum_value', message: 'must be one of LOW, MEDIUM, HIGH' }],
    ['an enum given a number', { ...validTask, priority: 3 }, { path: '/priority', code: 'invalid_enum_value', message: 'must be one of LOW, MEDIUM, HIGH' }],
    ['a const', { ...validTask, kind: 'bug' }, { path: '/kind', code: 'invalid_enum_value', message: 'must be task' }],
    ['a nullable enum (anyOf)', { ...validTask, reviewer: 'BOSS' }, { path: '/reviewer', code: 'invalid_enum_value', message: 'must be one of LEAD, PEER or null' }],
    ['a nullable enum given a number', { ...validTask, reviewer: 1 }, { path: '/reviewer', code: 'invalid_enum_value', message: 'must be one of LEAD, PEER or null' }],
    ['a nullable enum (type list)', { ...validTask, severity: 'x' }, { path: '/severity', code: 'invalid_enum_value', message: 'must be one of S1, S2, null' }],
    ['minLength', { ...validTask, title: '' }, { path: '/title', code: 'too_small', message: 'must have at least 1 character' }],
    ['maxLength', { ...validTask, title: 'x'.repeat(201) }, { path: '/title', code: 'too_big', message: 'must have at most 200 characters' }],
    ['minimum', { ...validTask, estimate: 0 }, { path: '/estimate', code: 'too_small', message: 'must be at least 1' }],
    ['maximum', { ...validTask, estimate: 41 }, { path: '/estimate', code: 'too_big', message: 'must be at most 40' }],
    ['exclusiveMinimum', { ...validTask, weight: 0 }, { path: '/weight', code: 'too_small', message: 'must be greater than 0' }],
    ['exclusiveMaximum', { ...validTask, weight: 1 }, { path: '/weight', code: 'too_big', message: 'must be less than 1' }],
    ['minItems', { ...validTask, labels: [] }, { path: '/labels', code: 'too_small', message: 'must have at least 1 item' }],
    ['maxItems', { ...validTask, labels: ['a', 'b', 'c'] }, { path: '/labels', code: 'too_big', message: 'must have at most 2 items' }],
    ['an array item', { ...validTask, labels: [''] }, { path: '/labels/0', code: 'too_small', message: 'must have at least 1 character' }],
    [
      'format',
      { ...validTask, dueOn: '2026-11-23' },
      { path: '/dueOn', code: 'invalid_format', message: 'must be an ISO 8601 date-time with a time zone, such as 2026-11-23T09:41:00.000Z' },
    ],
    ['an id pattern', { ...validTask, projectId: 'tsk_1' }, { path: '/projectId', code: 'invalid_format', message: 'must be "prj_" followed by letters and digits' }],
    ['an unknown property', { ...validTask, colour: 'red' }, { path: '/colour', code: 'unrecognized_keys', message: 'is not a recognized field' }],
  ])('%s', (_, body, expected) => {
    expect(bodyIssues(body)).toEqual([expected]);
  });

  it('a body that is not an object', () => {
    expect(bodyIssues([])).toEqual([{ path: '', code: 'invalid_type', message: 'must be an object' }]);
  });

  it('lists every failing field once, in the order Ajv reports them', () => {
    const issues = bodyIssues({ title: '', priority: 'URGENT', dueOn: 'soon', extra: 1, other: 2, assigneeId: 'bob' });
    expect(issues).toEqual([
      { path: '/projectId', code: 'required', message: 'is required' },
      { path: '/extra', code: 'unrecognized_keys', message: 'is not a recognized field' },
      { path: '/other', code: 'unrecognized_keys', message: 'is not a recognized field' },
      { path: '/title', code: 'too_small', message: 'must have at least 1 character' },
      { path: '/priority', code: 'invalid_enum_value', message: 'must be one of LOW, MEDIUM, HIGH' },
      { path: '/dueOn', code: 'invalid_format', message: expect.stringMatching(/^must be an ISO 8601 date-time/) },
      { path: '/assigneeId', code: 'invalid_format', message: 'must be "usr_" followed by letters and digits' },
    ]);
  });

  it('unevaluatedProperties and minProperties', () => {
    const validate = createAjv2020().compile({
      type: 'object',
      minProperties: 1,
      allOf: [{ properties: { title: { type: 'string' } } }],
      unevaluatedProperties: false,
    });
    expect(validate({ colour: 'red' })).toBe(false);
    expect(validationIssues(validate.errors ?? [], 'body')).toEqual([
      { path: '/colour', code: 'unrecognized_keys', message: 'is not a recognized field' },
    ]);
    expect(validate({})).toBe(false);
    expect(validationIssues(validate.errors ?? [], 'body')).toEqual([{ path: '', code: 'too_small', message: 'must have at least 1 field' }]);
  });

  it('falls back to invalid_type with the message of any other keyword', () => {
    const validate = createAjv2020().compile({ type: 'object', properties: { n: { type: 'integer', multipleOf: 5 }, tags: { type: 'array', uniqueItems: true } } });
    expect(validate({ n: 7, tags: ['a', 'a'] })).toBe(false);
    expect(validationIssues(validate.errors ?? [], 'body')).toEqual([
      { path: '/n', code: 'invalid_type', message: 'must be multiple of 5' },
      { path: '/tags', code: 'invalid_type', message: expect.stringMatching(/^must NOT have duplicate items/) },
    ]);
  });

  it('a lone anyOf summary still yields an entry', () => {
    const summary: ErrorObject = { keyword: 'oneOf', instancePath: '/x', schemaPath: '#/oneOf', params: { passingSchemas: [0, 1] }, message: 'must match exactly one schema in oneOf' };
    expect(validationIssues([summary], 'body')).toEqual([{ path: '/x', code: 'invalid_type', message: 'does not match any of the allowed forms' }]);
  });
});

// The same schema behind openapi-backend, which prefixes instance paths with /requestBody, /query, /path, /header.
const document = {
  openapi: '3.1.0',
  info: { title: 'test', version: '1' },
  paths: {
    '/projects/{projectId}/tasks': {
      post: {
        operationId: 'createTask',
        parameters: [
          { name: 'projectId', in: 'path', required: true, schema: { type: 'string', pattern: '^prj_[A-Za-z0-9]+$' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'order', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'] } },
          { name: 'mode', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'Idempotency-Key', in: 'header', schema: { type: 'string', maxLength: 5 } },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: taskCreateSchema } } },
        responses: { '201': { description: 'created' } },
      },
    },
  },
} as unknown as Document;

describe('validationProblem over openapi-backend request errors', () => {
  let backend: ContractBackend;
  beforeAll(async () => {
    backend = await new ContractBackend(document).init();
  });

  function requestErrors(request: { path: string; query?: string; headers?: Record<string, string>; body?: unknown }): ErrorObject[] {
    const result = backend.validateRequest(
      {
        method: 'POST',
        path: request.path,
        query: request.query ?? 'mode=x',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: request.body,
      },
      // The operation object: ContractBackend's own query rules read its declared parameters.
      backend.router.getOperation('createTask')!,
    );
    expect(result.valid).toBe(false);
    return result.errors ?? [];
  }

  it('maps body and parameters together, one entry per field', () => {
    const problem = validationProblem(
      requestErrors({
        path: '/projects/nope/tasks',
        query: 'limit=500&order=up',
        headers: { 'idempotency-key': 'far-too-long' },
        body: { title: '', priority: 'URGENT', colour: 'red' },
      }),
    );
    expect(problem.slug).toBe('validation');
    expect(problem.status).toBe(422);
    expect(problem.extensions.errors).toEqual(
      expect.arrayContaining([
        { path: '/projectId', code: 'required', message: 'is required' },
        { path: '/colour', code: 'unrecognized_keys', message: 'is not a recognized field' },
        { path: '/title', code: 'too_small', message: 'must have at least 1 character' },
        { path: '/priority', code: 'invalid_enum_value', message: 'must be one of LOW, MEDIUM, HIGH' },
        { path: '?limit', code: 'too_big', message: 'must be at most 100' },
        { path: '?order', code: 'invalid_enum_value', message: 'must be one of asc, desc' },
        { path: '?mode', code: 'required', message: 'is required' },
        { path: '{projectId}', code: 'invalid_format', message: 'must be "prj_" followed by letters and digits' },
        { path: 'idempotency-key', code: 'too_big', message: 'must have at most 5 characters' },
      ]),
    );
    expect(problem.extensions.errors).toHaveLength(9);
    expect(problem.detail).toMatch(/^9 fields are invalid: .+; and 6 more \(see errors\)\.$/);
  });

  it('a non-integer query value', () => {
    const problem = validationProblem(requestErrors({ path: '/projects/prj_1/tasks', query: 'mode=x&limit=many', body: validTask }));
    expect(problem.extensions.errors).toEqual([{ path: '?limit', code: 'invalid_type', message: 'must be written as a plain integer' }]);
    expect(problem.detail).toBe('1 field is invalid: ?limit must be written as a plain integer.');
  });

  it('a body of the wrong type', () => {
    const problem = validationProblem(requestErrors({ path: '/projects/prj_1/tasks', body: ['x'] }));
    expect(problem.extensions.errors).toEqual([{ path: '', code: 'invalid_type', message: 'must be an object' }]);
    expect(problem.detail).toBe('1 field is invalid: the body must be an object.');
  });

  it('a missing required body', () => {
    const problem = validationProblem(requestErrors({ path: '/projects/prj_1/tasks', headers: { 'content-type': 'application/json' } }));
    expect(problem.extensions.errors).toEqual([{ path: '', code: 'required', message: 'is required: send a JSON request body' }]);
  });

  it('an unparseable JSON body is a 400 bad-request, code invalid-json', () => {
    const problem = validationProblem(requestErrors({ path: '/projects/prj_1/tasks', body: '{"title": ' }));
    expect(problem).toMatchObject({ slug: 'bad-request', status: 400, code: 'invalid-json', detail: 'The request body is not valid JSON.' });
    expect(problem.extensions.errors).toBeUndefined();
  });

  it('renders through the funnel as the contract shape', () => {
    const problem = validationProblem(requestErrors({ path: '/projects/prj_1/tasks', body: { projectId: 'prj_1', title: '' } }), {
      headers: { 'X-RateLimit-Class': 'write' },
    });
    expect(toProblemReply(problem, 'req_9', BASE, recordingLogger())).toEqual({
      status: 422,
      headers: { 'X-RateLimit-Class': 'write', 'content-type': 'application/problem+json' },
      body: {
        type: `${BASE}/validation`,
        title: 'Validation failed',
        status: 422,
        detail: '1 field is invalid: /title must have at least 1 character.',
        requestId: 'req_9',
        errors: [{ path: '/title', code: 'too_small', message: 'must have at least 1 character' }],
      },
    });
  });

  it('takes a detail of its own', () => {
    expect(validationProblem([], { detail: 'Custom.' }).detail).toBe('Custom.');
    expect(validationProblem([]).detail).toBe('The request failed validation.');
  });

  it('unknown query parameters, if a backend reports them', () => {
    const extra: ErrorObject = { keyword: 'additionalProperties', instancePath: '/query', schemaPath: '#', params: { additionalProperty: 'colour' }, message: '' };
    expect(validationIssues([extra])).toEqual([{ path: '?colour', code: 'unrecognized_keys', message: 'is not a recognized query parameter' }]);
  });
});

describe('cursorProblem', () => {
  it('an unreadable cursor: 422 validation, code invalid-cursor', () => {
    const problem = cursorProblem(new CursorError('unreadable', 'the cursor signature does not match'));
    const reply = toProblemReply(problem, 'req_c', BASE, recordingLogger());
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      type: `${BASE}/validation`,
      title: 'Validation failed',
      status: 422,
      detail: 'The cursor is not a cursor this API issued, or it was altered; restart the listing without a cursor.',
      requestId: 'req_c',
      code: 'invalid-cursor',
      errors: [
        { path: '?cursor', code: 'invalid_cursor', message: 'is not a cursor this API issued, or it was altered; restart the listing without a cursor' },
      ],
    });
  });

  it('a cursor of another listing: code cursor-mismatch', () => {
    const problem = cursorProblem(new CursorError('mismatch', 'the cursor was issued for another workspace'));
    expect(problem.code).toBe('cursor-mismatch');
    expect(problem.detail).not.toContain('workspace');
    expect(problem.extensions.errors).toEqual([{ path: '?cursor', code: 'invalid_cursor', message: expect.stringMatching(/^belongs to a listing with another sort/) }]);
  });
});
