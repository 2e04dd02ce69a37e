// x-conventions: what the build adds to every operation from its own declarations, and the refusal of hand-written
// copies. Each case builds a small spec in a temporary repository with the real build.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildContracts } from '../../scripts/contract/build.js';
import { readSpecOperations } from '../../src/contract/specOperations.js';
import { ContractBuildError, formatProblem } from '../../scripts/contract/problems.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_TIMEOUT = 60_000;
const temporaryDirs: string[] = [];
afterAll(() => {
  for (const dir of temporaryDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const ROOT = `openapi: 3.1.0
info: {title: Tiny API, version: 1.0.0}
servers: [{url: 'http://localhost:3000'}]
security: [{bearer: []}]
tags: [{name: Items}]
x-conventions:
  description: Added by the build.
  successHeaders:
    - of: every
      headers: [X-Request-Id]
    - of: protected
      headers: [X-RateLimit-Limit, X-RateLimit-Remaining]
  responses:
    - {status: '400', of: every, response: Problem}
    - {status: '401', of: protected, response: Unauthorized}
    - {status: '405', of: every, response: MethodNotAllowed}
    - {status: '413', of: requestBody, response: Problem}
    - {status: '422', of: [requestBody, queryParameters, idempotencyKey], response: Validation}
    - {status: '429', of: protected, response: RateLimited, byRateLimitClass: {ai: AiRateLimited}}
    - {status: '500', of: every, response: Problem}
    - {status: '503', of: protected, response: Problem}
paths:
  /items:
    $ref: ./paths/items.yaml
  /items/{id}:
    $ref: ./paths/item.yaml
  /spec.json:
    $ref: ./paths/spec.yaml
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  headers:
    X-Request-Id: {description: The request id., required: true, schema: {type: string}}
    X-RateLimit-Limit: {description: The allowance., required: true, schema: {type: integer}}
    X-RateLimit-Remaining: {description: What is left., required: true, schema: {type: integer}}
  responses:
    Unauthorized: {description: No credential.}
    MethodNotAllowed: {description: Another method.}
    Problem: {description: A problem.}
    Validation: {description: Invalid.}
    RateLimited: {description: Too many.}
    AiRateLimited: {description: Too many AI calls.}
    Shown:
      description: The item.
      content:
        application/json:
          schema: {type: object, example: {id: itm_1}}
`;

const ITEMS = `get:
  operationId: listItems
  tags: [Items]
  summary: List items
  x-ratelimit-class: read
  x-required-scopes: []
  parameters:
    - {name: limit, in: query, schema: {type: integer}}
  responses:
    '200':
      description: The items.
      headers:
        ETag: {description: A tag., schema: {type: string}}
      content:
        application/json:
          schema: {type: array, example: []}
post:
  operationId: draftItem
  tags: [Items]
  summary: Draft an item
  x-ratelimit-class: ai
  x-required-scopes: []
  x-idempotent: false
  requestBody:
    content:
      application/json:
        schema: {type: object}
  responses:
    '200':
      description: The draft.
      content:
        application/json:
          schema: {type: object, example: {}}
`;

const ITEM = `get:
  operationId: getItem
  tags: [Items]
  summary: Get an item
  x-ratelimit-class: read
  x-required-scopes: []
  parameters:
    - {name: id, in: path, required: true, schema: {type: string}, example: itm_1}
  responses:
    '200':
      $ref: ../openapi.yaml#/components/responses/Shown
    '404': {$ref: ../openapi.yaml#/components/responses/Problem}
`;

const SPEC = `get:
  operationId: getSpec
  tags: [Items]
  summary: Download the spec
  security: []
  x-ratelimit-class: unmetered
  x-required-scopes: []
  responses:
    '200':
      description: The document.
      content:
        application/yaml:
          schema: {type: string}
`;

function writeRepo(files: Record<string, string> = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-conventions-'));
  temporaryDirs.push(root);
  const all: Record<string, string> = {
    'specs/tiny/openapi.yaml': ROOT,
    'specs/tiny/paths/items.yaml': ITEMS,
    'specs/tiny/paths/item.yaml': ITEM,
    'specs/tiny/paths/spec.yaml': SPEC,
    'specs/tiny/changelog.yaml': 'entries: []\n',
    'specs/changelog.schema.json': fs.readFileSync(path.join(REPO_ROOT, 'specs/changelog.schema.json'), 'utf8'),
    ...files,
  };
  for (const [relative, contents] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), contents);
  }
  return root;
}

async function servedDocument(root: string) {
  const files = await buildContracts(root);
  return JSON.parse(files.find((file) => file.path === 'generated/tiny/openapi.json')!.contents);
}

async function problemsOf(root: string): Promise<string[]> {
  return buildContracts(root).then(
    () => [],
    (error: unknown) => {
      if (!(error instanceof ContractBuildError)) throw error;
      return error.problems.map(formatProblem);
    },
  );
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

describe('x-conventions: what the build adds', () => {
  it('adds the headers to every 2xx answer, before the operation\'s own, and the limit headers only where a credential is needed', async () => {
    const document = await servedDocument(writeRepo());
    const listed = document.paths['/items'].get.responses['200'];
    expect(Object.keys(listed.headers)).toEqual(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'ETag']);
    expect(listed.headers['X-RateLimit-Limit']).toEqual(ref('headers', 'X-RateLimit-Limit'));
    expect(Object.keys(listed)).toEqual(['description', 'headers', 'content']);
    // A public operation: the request id, no limit headers, and no 401 or 429.
    const spec = document.paths['/spec.json'].get.responses;
    expect(Object.keys(spec['200'].headers)).toEqual(['X-Request-Id']);
    expect(Object.keys(spec)).toEqual(['200', '400', '405', '500']);
  }, BUILD_TIMEOUT);

  it('adds each error answer where it can occur, ordered by status, with the response of the rate-limit class', async () => {
    const document = await servedDocument(writeRepo());
    const list = document.paths['/items'].get.responses;
    expect(Object.keys(list)).toEqual(['200', '400', '401', '405', '422', '429', '500', '503']);
    expect(list['401']).toEqual(ref('responses', 'Unauthorized'));
    expect(list['429']).toEqual(ref('responses', 'RateLimited'));
    const draft = document.paths['/items'].post.responses;
    expect(Object.keys(draft)).toEqual(['200', '400', '401', '405', '413', '422', '429', '500', '503']);
    expect(draft['429']).toEqual(ref('responses', 'AiRateLimited'));
    // No query parameter, no body, no Idempotency-Key: nothing to refuse with 422 or 413.
    expect(Object.keys(document.paths['/items/{id}'].get.responses)).toEqual(['200', '400', '401', '404', '405', '429', '500', '503']);
  }, BUILD_TIMEOUT);

  it('copies a success answer that is a component into the operation, leaving the component as written', async () => {
    const document = await servedDocument(writeRepo());
    const shown = document.paths['/items/{id}'].get.responses['200'];
    expect(shown.$ref).toBeUndefined();
    expect(Object.keys(shown.headers)).toEqual(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining']);
    expect(shown.content).toEqual(document.components.responses.Shown.content);
    expect(document.components.responses.Shown.headers).toBeUndefined();
  }, BUILD_TIMEOUT);

  it('serves no x-conventions block, and an API without one gets nothing added', async () => {
    const document = await servedDocument(writeRepo());
    expect(document['x-conventions']).toBeUndefined();
    const without = ROOT.replace(/x-conventions:\n(?: {2}.*\n)+/, '');
    const plain = await buildContracts(writeRepo({ 'specs/tiny/openapi.yaml': without })).then(
      () => undefined,
      (error: ContractBuildError) => error.problems.map(formatProblem),
    );
    // Without conventions the house rules still want the protected answers written out.
    expect(plain).toEqual(expect.arrayContaining([expect.stringContaining('needs a credential but does not declare 400, 401, 429, 500, 503')]));
  }, BUILD_TIMEOUT);
});

describe('x-conventions: hand-written copies', () => {
  it('refuses an error answer that differs from the convention, saying what the build adds and what to delete', async () => {
    const problems = await problemsOf(writeRepo({ 'specs/tiny/paths/item.yaml': ITEM.replace("    '404'", "    '401': {description: Go away.}\n    '404'") }));
    expect(problems).toEqual([
      "specs/tiny/paths/item.yaml: GET /items/{id} (getItem): '401' differs from the convention: the build adds $ref #/components/responses/Unauthorized for operations that need a credential (specs/tiny/openapi.yaml x-conventions), and this operation writes an inline object; delete it here (change the shared response component, or the convention, if every such operation should answer otherwise)",
    ]);
  }, BUILD_TIMEOUT);

  it('refuses the other class\'s 429, which the convention gives by x-ratelimit-class', async () => {
    const problems = await problemsOf(writeRepo({ 'specs/tiny/paths/items.yaml': ITEMS.replace("          schema: {type: object, example: {}}\n", "          schema: {type: object, example: {}}\n    '429': {$ref: ../openapi.yaml#/components/responses/RateLimited}\n") }));
    expect(problems).toEqual([expect.stringContaining("POST /items (draftItem): '429' differs from the convention: the build adds $ref #/components/responses/AiRateLimited for operations that need a credential of rate-limit class ai")]);
  }, BUILD_TIMEOUT);

  it('calls an identical copy redundant', async () => {
    const problems = await problemsOf(writeRepo({ 'specs/tiny/paths/item.yaml': ITEM.replace("    '404'", "    '500': {$ref: ../openapi.yaml#/components/responses/Problem}\n    '404'") }));
    expect(problems).toEqual([
      "specs/tiny/paths/item.yaml: GET /items/{id} (getItem): '500' is redundant: the build adds it ($ref #/components/responses/Problem) for every operation (specs/tiny/openapi.yaml x-conventions); delete it here",
    ]);
  }, BUILD_TIMEOUT);

  it('refuses a copied header on a success answer, differing (whatever its case) or identical', async () => {
    const items = ITEMS.replace(
      '        ETag: {description: A tag., schema: {type: string}}\n',
      '        ETag: {description: A tag., schema: {type: string}}\n        x-ratelimit-limit: {description: Mine., schema: {type: string}}\n        X-Request-Id: {$ref: ../openapi.yaml#/components/headers/X-Request-Id}\n',
    );
    const problems = await problemsOf(writeRepo({ 'specs/tiny/paths/items.yaml': items }));
    expect(problems).toEqual([
      'specs/tiny/paths/items.yaml: GET /items (listItems): header x-ratelimit-limit of the 200 answer differs from the convention: the build adds X-RateLimit-Limit as $ref #/components/headers/X-RateLimit-Limit on every 2xx answer of operations that need a credential (specs/tiny/openapi.yaml x-conventions), and this answer writes an inline object; delete it here (change components/headers/X-RateLimit-Limit if every answer should say otherwise)',
      'specs/tiny/paths/items.yaml: GET /items (listItems): header X-Request-Id of the 200 answer is redundant: the build adds it on every 2xx answer of every operation (specs/tiny/openapi.yaml x-conventions); delete it here',
    ]);
  }, BUILD_TIMEOUT);

  it('leaves alone a header no convention gives the operation (a limit header on a public one)', async () => {
    const spec = SPEC.replace("      description: The document.\n", "      description: The document.\n      headers:\n        X-RateLimit-Limit: {description: Never sent., schema: {type: integer}}\n");
    expect(await problemsOf(writeRepo({ 'specs/tiny/paths/spec.yaml': spec }))).toEqual([]);
  }, BUILD_TIMEOUT);

  it('names what is wrong in the block itself', async () => {
    const root = ROOT.replace('response: Unauthorized}', 'response: Unauthorised}').replace('{status: \'405\', of: every', "{status: '405', of: everything");
    const problems = await problemsOf(writeRepo({ 'specs/tiny/openapi.yaml': root }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^specs\/tiny\/openapi\.yaml: x-conventions\.responses\[1\]\.response: "Unauthorised" is not under components\.responses; name one of Unauthorized, /),
        'specs/tiny/openapi.yaml: x-conventions.responses[2].of: write one of every, protected, public, requestBody, queryParameters, idempotencyKey, requiredRoles (or a list of them)',
        // What the broken entry would have added is then missing, and said so.
        "specs/tiny/paths/item.yaml: GET /items/{id} (getItem): needs a credential but does not declare 401; add '401' to the API's x-conventions (or to the operation's responses), or `security: []` if the operation is public",
      ]),
    );
  }, BUILD_TIMEOUT);
});

describe('the conventions of this repository', () => {
  const served = (api: string) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'generated', api, 'openapi.json'), 'utf8'));
  const operationsOf = (document: any) => readSpecOperations(document).map(({ path: template, operation, isPublic }) => ({ template, operation: operation as any, isPublic }));
  const headerNames = (document: any, response: any) => Object.keys((response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response).headers ?? {});

  it('leaves no limit or quota header in the files under specs/*/paths/: the build adds them', () => {
    for (const api of ['portfolio', 'work-platform']) {
      const folder = path.join(REPO_ROOT, 'specs', api, 'paths');
      for (const file of fs.readdirSync(folder)) expect(fs.readFileSync(path.join(folder, file), 'utf8'), `${api}/paths/${file}`).not.toMatch(/X-RateLimit|X-Quota|RateLimit-Policy/);
    }
  });

  it.each([
    ['portfolio', ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Cache-Control', 'Vary'], ['400', '401', '403', '404', '405', '429', '431', '500', '503']],
    [
      'work-platform',
      ['X-Request-Id', 'X-RateLimit-Class', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Window-Ms', 'X-RateLimit-Tier', 'RateLimit-Policy', 'RateLimit', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset'],
      ['400', '401', '403', '405', '429', '431', '500', '503'],
    ],
  ])('serves %s with the limit headers on every 2xx of an operation that needs a credential, none on a public one, and the standard answers', (api, limitHeaders, protectedStatuses) => {
    const document = served(api);
    for (const { template, operation, isPublic } of operationsOf(document)) {
      const where = `${operation.operationId} ${template}`;
      const statuses = Object.keys(operation.responses);
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (!status.startsWith('2')) continue;
        const names = headerNames(document, response);
        if (isPublic) expect(names.filter((name) => name !== 'X-Request-Id' && limitHeaders.includes(name)), where).toEqual([]);
        else expect(names.slice(0, limitHeaders.length), where).toEqual(limitHeaders);
      }
      expect(statuses, where).toEqual(expect.arrayContaining(isPublic ? ['400', '405', '431', '500'] : protectedStatuses));
      // The portfolio answers 400 to a query value out of bounds, never 422.
      if (api === 'portfolio') expect(statuses, where).not.toContain('422');
      if (operation.requestBody) expect(statuses, where).toEqual(expect.arrayContaining(['413', '415', '422']));
    }
  });

  it('declares 405 with Allow and 431 on every operation of both APIs', () => {
    for (const api of ['portfolio', 'work-platform']) {
      const document = served(api);
      for (const { operation } of operationsOf(document)) {
        expect(headerNames(document, operation.responses['405']), operation.operationId).toEqual(['X-Request-Id', 'Allow']);
        expect(operation.responses['431'], operation.operationId).toEqual({ $ref: '#/components/responses/RequestHeaderFieldsTooLarge' });
      }
    }
  });
});
