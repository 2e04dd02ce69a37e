import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postman from 'postman-collection';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { buildContracts, compareWithDisk, discoverApis, type GeneratedFile } from '../../scripts/contract/build.js';
import { bundleSpec } from '../../scripts/contract/bundle.js';
import { checkConventions } from '../../scripts/contract/conventions.js';
import {
  isJsonObject,
  listOperations,
  lowestSuccessStatus,
  resolvePointer,
  type JsonObject,
  type JsonValue,
} from '../../scripts/contract/document.js';
import { generatedNotice } from '../../scripts/contract/openapiFiles.js';
import { deterministicUuid, POSTMAN_SCHEMA_URL } from '../../scripts/contract/postmanCollection.js';
import { CLEAN_UP_FOLDER } from '../../scripts/contract/postmanRun.js';
import { RUN_PLANS } from '../../scripts/contract/postmanRunPlan.js';
import { ContractBuildError, formatProblem } from '../../scripts/contract/problems.js';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_TIMEOUT = 60_000;
const apis = discoverApis(REPO_ROOT).map((spec) => spec.api);

function readGenerated(api: string, name: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, 'generated', api, name), 'utf8');
}

function allRefs(node: JsonValue, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((child) => allRefs(child, found));
  else if (isJsonObject(node)) {
    if (typeof node.$ref === 'string') found.push(node.$ref);
    Object.values(node).forEach((child) => allRefs(child, found));
  }
  return found;
}

const temporaryDirs: string[] = [];

/** Writes a repository-shaped temp dir (`specs/<api>/...`) and returns its root. */
function writeTempRepo(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-build-'));
  temporaryDirs.push(root);
  for (const [relative, contents] of Object.entries(files)) {
    const target = path.join(root, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, contents);
  }
  return root;
}

afterAll(() => {
  for (const dir of temporaryDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const GOOD_ROOT = `openapi: 3.1.0
info: {title: Tiny API, version: v1}
servers: [{url: 'http://localhost:3000'}]
security: [{bearer: []}]
tags: [{name: Items}]
paths:
  /items/{id}:
    $ref: ./paths/item.yaml
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  responses:
    Problem:
      $ref: ./components/responses/Problem.yaml
  schemas:
    Item:
      $ref: ./components/schemas/Item.yaml
    Error:
      $ref: ./components/schemas/Error.yaml
`;

const GOOD_PROBLEM = `description: An error.
content:
  application/json:
    schema:
      $ref: ../../openapi.yaml#/components/schemas/Error
`;

const GOOD_OPERATION = `get:
  operationId: getItem
  tags: [Items]
  summary: Get an item
  x-ratelimit-class: read
  x-required-scopes: [items:read]
  parameters:
    - {name: id, in: path, required: true, schema: {type: string}, example: itm_1}
  responses:
    '200':
      description: The item.
      content:
        application/json:
          schema:
            $ref: ../openapi.yaml#/components/schemas/Item
    '400': {$ref: ../openapi.yaml#/components/responses/Problem}
    '401': {$ref: ../openapi.yaml#/components/responses/Problem}
    '429': {$ref: ../openapi.yaml#/components/responses/Problem}
    '500': {$ref: ../openapi.yaml#/components/responses/Problem}
    '503': {$ref: ../openapi.yaml#/components/responses/Problem}
`;

function tinySpec(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    'specs/tiny/openapi.yaml': GOOD_ROOT,
    'specs/tiny/paths/item.yaml': GOOD_OPERATION,
    'specs/tiny/components/responses/Problem.yaml': GOOD_PROBLEM,
    'specs/tiny/components/schemas/Item.yaml': 'type: object\nproperties:\n  id: {type: string}\n  related:\n    $ref: ./Related.yaml\nexample: {id: itm_1}\n',
    'specs/tiny/components/schemas/Related.yaml': 'type: object\nproperties:\n  item:\n    $ref: ../../openapi.yaml#/components/schemas/Item\n',
    'specs/tiny/components/schemas/Error.yaml': 'type: object\nproperties:\n  code: {type: string}\n',
    'specs/tiny/changelog.yaml': 'entries: []\n',
    'specs/changelog.schema.json': fs.readFileSync(path.join(REPO_ROOT, 'specs/changelog.schema.json'), 'utf8'),
    ...overrides,
  };
}

describe('committed generated files', () => {
  let files: GeneratedFile[] = [];
  beforeAll(async () => {
    files = await buildContracts(REPO_ROOT);
  }, BUILD_TIMEOUT);

  it('finds at least the portfolio API', () => {
    expect(apis).toContain('portfolio');
  });

  it('are what a fresh build produces (run npm run build:contract when this fails)', () => {
    expect(compareWithDisk(REPO_ROOT, files)).toEqual([]);
  });

  it('carry the do-not-edit notice at the top and end with a newline', () => {
    for (const file of files) {
      const api = file.path.split('/')[1] ?? '';
      const lines = file.contents.split('\n');
      if (file.path.endsWith('openapi.json') || file.path.endsWith('changelog.json')) expect(lines[1], file.path).toBe(`  "x-generated": "${generatedNotice(api)}",`);
      else if (file.path.endsWith('postman-environment.json')) expect(JSON.parse(file.contents)._postman_exported_using, file.path).toMatch(/^Generated from specs\//);
      else if (file.path.endsWith('postman.json')) expect(file.contents, file.path).toContain(generatedNotice(api));
      else expect(lines[0], file.path).toMatch(/^(#|\/\/) Generated from specs\//);
      expect(file.contents.endsWith('\n'), file.path).toBe(true);
    }
  });

  it('are the same when built twice', async () => {
    const again = await buildContracts(REPO_ROOT);
    expect(again).toEqual(files);
  }, BUILD_TIMEOUT);
});

function hasOauthFlow(document: JsonObject): boolean {
  const schemes = isJsonObject(document.components) && isJsonObject(document.components.securitySchemes) ? document.components.securitySchemes : {};
  return Object.values(schemes).some((scheme) => isJsonObject(scheme) && scheme.type === 'oauth2' && isJsonObject(scheme.flows) && isJsonObject(scheme.flows.authorizationCode));
}

describe.each(apis)('generated/%s', (api) => {
  const document = JSON.parse(readGenerated(api, 'openapi.json')) as JsonObject;
  const operations = listOperations(document);

  it('openapi.yaml parses to exactly the document in openapi.json', () => {
    const yamlText = readGenerated(api, 'openapi.yaml');
    expect(yamlText.split('\n')[0]).toBe(`# ${generatedNotice(api)}`);
    expect(YAML.parse(yamlText)).toEqual(document);
    expect(Object.keys(document)[0]).toBe('x-generated');
  });

  it('openapi.json has only internal references, all resolvable', () => {
    const refs = allRefs(document);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true);
      expect(resolvePointer(document, ref.slice(1)), ref).toBeDefined();
    }
    expect(isJsonObject(document.components) && isJsonObject(document.components.schemas)).toBe(true);
  });

  it('postman.json is a v2.1 collection with every operation exactly once, beside the setup requests its run plan adds', () => {
    const json = JSON.parse(readGenerated(api, 'postman.json')) as JsonObject;
    const collection = new postman.Collection(json);
    const exported = collection.toJSON() as { info: { schema: string; name: string; description: unknown } };
    expect(exported.info.schema).toBe(POSTMAN_SCHEMA_URL);
    expect(isJsonObject(json.info) && json.info.schema).toBe(POSTMAN_SCHEMA_URL);
    const info = isJsonObject(document.info) ? document.info : {};
    expect(collection.name).toBe(info.title);
    expect(JSON.stringify(exported.info.description)).toContain('do not edit');

    const servers = Array.isArray(document.servers) ? document.servers : [];
    const firstServer = servers[0];
    expect(collection.variables.get('baseUrl')).toBe(isJsonObject(firstServer) ? firstServer.url : undefined);
    expect(collection.variables.get('bearerToken')).toBe('');
    // An API with an OAuth 2.0 authorization code flow sends bearerToken through Postman's oauth2 auth.
    const credential = hasOauthFlow(document) ? 'oauth2' : 'bearer';
    expect(collection.auth?.type).toBe(credential);
    expect(JSON.stringify(collection.auth?.toJSON())).toContain('{{bearerToken}}');

    const items: InstanceType<typeof postman.Item>[] = [];
    collection.forEachItem((item) => items.push(item));
    // The operations' own requests, and the setup requests of the plan (another request of an operation, named and described as such).
    const setupSteps = Object.values(RUN_PLANS[api]?.lifecycles ?? {}).flat().filter((step) => step.key !== undefined);
    expect(items).toHaveLength(operations.length + setupSteps.length);
    for (const step of setupSteps) {
      const item = items.find((candidate) => candidate.id === deterministicUuid(`${api}:step:${step.operationId}:${step.key}`));
      expect(item?.name, step.name).toBe(step.name);
      expect(JSON.stringify(item?.request.description), step.name).toContain(`\`${step.operationId}\` again`);
    }

    for (const entry of operations) {
      const expectedPath = '/' + entry.path.split('/').filter(Boolean).map((s) => s.replace(/\{([^}]+)\}/g, ':$1')).join('/');
      const label = `${entry.method} ${entry.path}`;
      const matches = items.filter((item) => item.id === deterministicUuid(`${api}:operation:${String(entry.operation.operationId)}`));
      expect(matches, label).toHaveLength(1);
      const item = matches[0]!;
      expect(item.request.method, label).toBe(entry.method.toUpperCase());
      expect('/' + (item.request.url.path ?? []).join('/'), label).toBe(expectedPath);
      expect(item.name, label).toBe(entry.operation.summary);
      expect(item.request.url.getHost(), label).toBe('{{baseUrl}}');

      // Path variables are declared and carry the spec's example or an id the run keeps in a declared collection variable, so nothing is sent literally.
      for (const segment of expectedPath.split('/').filter((s) => s.startsWith(':'))) {
        const value: unknown = item.request.url.variables.get(segment.slice(1));
        expect(typeof value === 'string' && value.length > 0, `${label} :${segment}`).toBe(true);
        const variable = /^\{\{(.+)\}\}$/.exec(String(value))?.[1];
        if (variable) expect(collection.variables.has(variable), `${label} :${segment} ${variable}`).toBe(true);
        else expect(String(value), `${label} :${segment}`).not.toMatch(/[{}]/);
      }

      // Status, content type and body schema (or no body), asserted by every request.
      const status = lowestSuccessStatus(entry.operation);
      const tests = item.events.listeners('test');
      expect(tests, label).toHaveLength(1);
      const exec = tests[0]?.script.exec ?? [];
      expect(exec[0], label).toBe(`pm.test("status is ${status}", () => pm.response.to.have.status(${status}));`);
      if (status === 204) expect(exec[1], label).toBe('pm.test("no body, as the 204 declares none", () => pm.expect(pm.response.text()).to.equal(""));');
      else {
        expect(exec[1], label).toMatch(/^pm\.test\("Content-Type is [a-z]+\/[a-z0-9.+-]+", /);
        expect(exec[2], label).toMatch(/^const schema = \{.*\};$/);
        expect(exec[3], label).toMatch(/^pm\.test\("body matches the .*schema", /);
        // What the sandbox's Ajv 6 (draft-07) cannot read is translated, and nothing refers outside the schema.
        expect(exec[2], label).not.toMatch(/"\$ref":"#\/components|\$defs|prefixItems|dependentRequired|unevaluated|"\$schema"/);
      }

      const itemAuth = item.getAuth();
      if (entry.isPublic) expect(itemAuth?.type, label).toBe('noauth');
      else expect(itemAuth?.type, label).toBe(credential);
    }
  });

  it('postman.json has a folder per spec tag, in tag order except where a folder uses what a later tag creates, and the clean-up last', () => {
    const json = JSON.parse(readGenerated(api, 'postman.json')) as { item: { name: string; item: { request: { url: { raw: string }; body?: { raw: string } } }[] }[] };
    const tagNames = (Array.isArray(document.tags) ? document.tags : [])
      .filter(isJsonObject)
      .map((tag) => tag.name)
      .filter((name) => operations.some((entry) => Array.isArray(entry.operation.tags) && entry.operation.tags[0] === name));
    const folders = json.item.map((folder) => folder.name);
    expect(folders.filter((name) => name !== CLEAN_UP_FOLDER).sort()).toEqual([...tagNames].sort());
    if (folders.includes(CLEAN_UP_FOLDER)) expect(folders.at(-1)).toBe(CLEAN_UP_FOLDER);
    // A folder that runs before a tag listed earlier uses a record created in a folder before it.
    const createdBy = (folder: (typeof json.item)[number]) => new Set(folder.item.flatMap((item) => [...JSON.stringify(item).matchAll(/collectionVariables\.set\(\\"([a-zA-Z]+Id)\\"/g)].map((match) => match[1]!)));
    const usedBy = (folder: (typeof json.item)[number]) => new Set(folder.item.flatMap((item) => [...`${item.request.url.raw} ${JSON.stringify(item)}`.matchAll(/\{\{([a-zA-Z]+Id)\}\}/g)].map((match) => match[1]!)));
    json.item.forEach((folder, index) => {
      for (const variable of usedBy(folder)) {
        const creator = json.item.findIndex((other) => createdBy(other).has(variable));
        expect(creator, `${folder.name} uses ${variable}`).toBeGreaterThanOrEqual(0);
        expect(creator, `${folder.name} uses ${variable}`).toBeLessThanOrEqual(index);
      }
    });
    const outOfTagOrder = folders.filter((name) => name !== CLEAN_UP_FOLDER).some((name, index, list) => tagNames.indexOf(name) < tagNames.indexOf(list[index - 1] ?? name));
    if (!outOfTagOrder) expect(folders.filter((name) => name !== CLEAN_UP_FOLDER)).toEqual(tagNames);
  });

  it('types.ts declares every operation', () => {
    const types = readGenerated(api, 'types.ts');
    expect(types).toContain('export interface paths');
    for (const entry of operations) expect(types).toContain(`${String(entry.operation.operationId)}: {`);
  });
});

describe('loadServedArtifacts', () => {
  const baseUrl = 'https://portfolio.example.test';
  const served = loadServedArtifacts('portfolio', `${baseUrl}/`);

  it('serves the public base URL as the only server, in JSON and YAML alike', () => {
    const json = JSON.parse(served.openapiJson) as JsonObject;
    expect(json.servers).toEqual([{ url: baseUrl, description: expect.any(String) }]);
    expect(YAML.parse(served.openapiYaml)).toEqual(json);
    expect(served.document).toEqual(json);
    expect(served.openapiYaml.split('\n')[0]).toBe(`# ${generatedNotice('portfolio')}`);
    expect(Object.keys(json)).toEqual(Object.keys(JSON.parse(readGenerated('portfolio', 'openapi.json')) as object));
  });

  it('sets the Postman baseUrl variable to the public base URL', () => {
    const collection = new postman.Collection(JSON.parse(served.postmanJson) as object);
    expect(collection.variables.get('baseUrl')).toBe(baseUrl);
    expect(collection.variables.get('bearerToken')).toBe('');
  });

  it('leaves the committed files alone', () => {
    expect(readGenerated('portfolio', 'openapi.json')).toContain('"url": "http://localhost:3000"');
  });
});

describe('bundler', () => {
  it('inlines file references and turns references to the root document into internal ones', () => {
    const root = writeTempRepo(tinySpec());
    const bundled = bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root });
    const { document } = bundled;
    expect(resolvePointer(document, '/paths/~1items~1{id}/get/responses/200/content/application~1json/schema')).toEqual({
      $ref: '#/components/schemas/Item',
    });
    expect(resolvePointer(document, '/components/schemas/Item/properties/related/properties/item')).toEqual({
      $ref: '#/components/schemas/Item',
    });
    expect(resolvePointer(document, '/components/responses/Problem/content/application~1json/schema')).toEqual({
      $ref: '#/components/schemas/Error',
    });
    for (const ref of allRefs(document)) expect(ref.startsWith('#/')).toBe(true);
    expect(checkConventions(bundled)).toEqual([]);
  });

  it('names the file and the ref of a missing file', () => {
    const root = writeTempRepo(
      tinySpec({ 'specs/tiny/components/schemas/Item.yaml': 'type: object\nproperties:\n  tag:\n    $ref: ./Tag.yaml\n' }),
    );
    expect(() => bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root })).toThrow(
      'specs/tiny/components/schemas/Item.yaml: $ref ./Tag.yaml: the referenced file specs/tiny/components/schemas/Tag.yaml does not exist',
    );
  });

  it('reports every reference to a missing file once, and invalid YAML', () => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/components/schemas/Item.yaml': 'type: object\nproperties:\n  a:\n    $ref: ./Gone.yaml\n',
        'specs/tiny/components/schemas/Error.yaml': 'type: object\nproperties:\n  b:\n    $ref: ./Gone.yaml\n',
        'specs/tiny/components/responses/Problem.yaml': 'description: [unclosed\n',
      }),
    );
    let caught: unknown;
    try {
      bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ContractBuildError);
    const problems = (caught as ContractBuildError).problems.map(formatProblem);
    expect(problems.filter((problem) => problem.includes('Gone.yaml does not exist'))).toEqual([
      'specs/tiny/components/schemas/Item.yaml: $ref ./Gone.yaml: the referenced file specs/tiny/components/schemas/Gone.yaml does not exist',
      'specs/tiny/components/schemas/Error.yaml: $ref ./Gone.yaml: the referenced file specs/tiny/components/schemas/Gone.yaml does not exist',
    ]);
    expect(problems.some((problem) => problem.startsWith('specs/tiny/components/responses/Problem.yaml: invalid YAML'))).toBe(true);
  });

  it('reports a cycle between files with the chain', () => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/components/schemas/Item.yaml': 'type: object\nproperties:\n  next:\n    $ref: ./Next.yaml\n',
        'specs/tiny/components/schemas/Next.yaml': 'type: object\nproperties:\n  back:\n    $ref: ./Item.yaml\n',
      }),
    );
    expect(() => bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root })).toThrow(
      /specs\/tiny\/components\/schemas\/Next\.yaml: \$ref \.\/Item\.yaml: reference cycle specs\/tiny\/components\/schemas\/Item\.yaml -> specs\/tiny\/components\/schemas\/Next\.yaml -> specs\/tiny\/components\/schemas\/Item\.yaml/,
    );
  });

  it('reports a reference to a root component that does not exist', () => {
    const root = writeTempRepo(
      tinySpec({ 'specs/tiny/paths/item.yaml': GOOD_OPERATION.replace('schemas/Item', 'schemas/Itme') }),
    );
    expect(() => bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root })).toThrow(
      'specs/tiny/paths/item.yaml: $ref ../openapi.yaml#/components/schemas/Itme: the root document has nothing at #/components/schemas/Itme',
    );
  });
});

describe('convention checks', () => {
  it('refuses a changelog in info (x-changelog) and names the file it belongs in; names the changelog entry and member to fix', async () => {
    const legacy = writeTempRepo(tinySpec({ 'specs/tiny/openapi.yaml': GOOD_ROOT.replace('info: {title: Tiny API, version: v1}', "info: {title: Tiny API, version: v1, x-changelog: [{date: '2026-11-25', change: Added.}]}") }));
    const refused = await buildContracts(legacy).catch((error: unknown) => error);
    expect((refused as ContractBuildError).problems.map(formatProblem)).toEqual([
      'specs/tiny/openapi.yaml: info.x-changelog: move each entry to specs/tiny/changelog.yaml (date, version, summary, affectedOperations, old, new, breaking) and delete info.x-changelog',
    ]);
    const invalid = writeTempRepo(tinySpec({ 'specs/tiny/changelog.yaml': "entries:\n  - {date: '2026-11-25', version: v1, summary: Items, affectedOperations: [getItem], old: none, new: 'GET /items/{id}', breaking: no, note: x}\n" }));
    const rejected = await buildContracts(invalid).catch((error: unknown) => error);
    expect((rejected as ContractBuildError).problems.map(formatProblem)).toEqual([
      'specs/tiny/changelog.yaml: entry 1 (2026-11-25 "Items"): member `note` is not a changelog member (allowed: date, version, summary, affectedOperations, old, new, breaking)',
      'specs/tiny/changelog.yaml: entry 1 (2026-11-25 "Items"): member `version` must match pattern "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$"',
      'specs/tiny/changelog.yaml: entry 1 (2026-11-25 "Items"): member `breaking` must be boolean',
    ]);
  }, BUILD_TIMEOUT);

  it('builds the tiny spec', async () => {
    const root = writeTempRepo(tinySpec());
    const files = await buildContracts(root);
    expect(files.map((file) => file.path)).toEqual([
      'generated/tiny/openapi.json',
      'generated/tiny/openapi.yaml',
      'generated/tiny/postman.json',
      'generated/tiny/postman-environment.json',
      'generated/tiny/types.ts',
      'generated/tiny/rules.ts',
      'generated/tiny/changelog.json',
      'generated/specs.sha256',
    ]);
  }, BUILD_TIMEOUT);

  it('gives Postman requests the spec\'s header parameters and JSON body example', async () => {
    const create = `post:
  operationId: createItem
  tags: [Items]
  summary: Create an item
  x-ratelimit-class: write
  x-required-scopes: [items:write]
  parameters:
    - {name: Idempotency-Key, in: header, required: true, schema: {type: string}, example: key-1}
    - {name: X-Trace, in: header, schema: {type: string}}
  requestBody:
    required: true
    content:
      application/json:
        schema: {type: object}
        example: {name: First}
  responses:
    '201': {description: Created.}
    '200': {description: Replayed.}
    '400': {$ref: ../openapi.yaml#/components/responses/Problem}
    '401': {$ref: ../openapi.yaml#/components/responses/Problem}
    '422': {$ref: ../openapi.yaml#/components/responses/Problem}
    '429': {$ref: ../openapi.yaml#/components/responses/Problem}
    '500': {$ref: ../openapi.yaml#/components/responses/Problem}
    '503': {$ref: ../openapi.yaml#/components/responses/Problem}
`;
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/openapi.yaml': GOOD_ROOT.replace('paths:\n', 'paths:\n  /items:\n    $ref: ./paths/items.yaml\n'),
        'specs/tiny/paths/items.yaml': create,
      }),
    );
    const files = await buildContracts(root);
    const postmanFile = files.find((file) => file.path === 'generated/tiny/postman.json');
    const collection = new postman.Collection(JSON.parse(postmanFile?.contents ?? '{}') as object);
    const items: InstanceType<typeof postman.Item>[] = [];
    collection.forEachItem((item) => items.push(item));
    const createItem = items.find((item) => item.name === 'Create an item');
    expect(createItem?.request.method).toBe('POST');
    expect(createItem?.request.headers.get('Idempotency-Key')).toBe('key-1');
    expect(createItem?.request.headers.one('X-Trace')?.disabled).toBe(true); // optional, so off by default
    expect(createItem?.request.headers.one('Idempotency-Key')?.disabled).toBeFalsy();
    expect(createItem?.request.headers.get('Content-Type')).toBe('application/json');
    expect(JSON.parse(createItem?.request.body?.raw ?? 'null')).toEqual({ name: 'First' });
    expect(createItem?.events.listeners('test')[0]?.script.exec).toEqual([
      'pm.test("status is 200", () => pm.response.to.have.status(200));',
      'pm.test("no body, as the 200 declares none", () => pm.expect(pm.response.text()).to.equal(""));',
    ]);
  }, BUILD_TIMEOUT);

  it('lists every violation with the file and the operation to change', async () => {
    const bad = GOOD_OPERATION.replace('  x-ratelimit-class: read\n', '')
      .replace(', example: itm_1', '')
      .replace("    '429': {$ref: ../openapi.yaml#/components/responses/Problem}\n", '')
      .replace('x-required-scopes: [items:read]', 'x-required-scopes: items:read');
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/paths/item.yaml': bad,
        'specs/tiny/openapi.yaml': GOOD_ROOT.replace(
          'paths:\n',
          'paths:\n  /other:\n    get:\n      operationId: getItem\n      security: []\n      responses:\n        \'200\': {description: ok}\n',
        ),
      }),
    );
    const error = await buildContracts(root).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ContractBuildError);
    const problems = (error as ContractBuildError).problems.map(formatProblem);
    const where = 'specs/tiny/paths/item.yaml: GET /items/{id} (getItem)';
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${escape(where)}: operationId getItem is already used by GET /other \\(specs/tiny/openapi\\.yaml\\)`)),
        expect.stringMatching(new RegExp(`^${escape(where)}: missing x-ratelimit-class`)),
        expect.stringMatching(new RegExp(`^${escape(where)}: missing x-required-scopes`)),
        expect.stringMatching(new RegExp(`^${escape(where)}: path parameter id has no example`)),
        expect.stringMatching(new RegExp(`^${escape(where)}: needs a credential but does not declare 429`)),
        expect.stringMatching(/^specs\/tiny\/openapi\.yaml: GET \/other \(getItem\): missing tags/),
        expect.stringMatching(/^specs\/tiny\/openapi\.yaml: GET \/other \(getItem\): missing summary/),
      ]),
    );
    expect((error as Error).message).toContain(`${where}: missing x-ratelimit-class`);
    expect(fs.existsSync(path.join(root, 'generated'))).toBe(false);
  });

  it('wants an example for every JSON success answer, naming the schema file to put it in', async () => {
    const root = writeTempRepo(tinySpec({ 'specs/tiny/components/schemas/Item.yaml': 'type: object\nproperties:\n  id: {type: string}\n' }));
    const problems = await buildContracts(root).then(
      () => [] as string[],
      (caught: unknown) => (caught as ContractBuildError).problems.map(formatProblem),
    );
    expect(problems).toEqual([expect.stringMatching(/^specs\/tiny\/components\/schemas\/Item\.yaml: GET \/items\/\{id\} \(getItem\): the 200 answer has no example; add `example:` to its schema/)]);
  });

  it('wants every event to name what records it (x-emitted-by: operationIds or job:<name>)', async () => {
    const withEvents = (created: string, deleted: string) =>
      GOOD_ROOT +
      `webhooks:
  item.created:
    post:
      operationId: onItemCreated
      summary: item.created${created}
      responses: {'204': {description: received}}
  item.deleted:
    post:
      operationId: onItemDeleted
      summary: item.deleted${deleted}
      responses: {'204': {description: received}}
`;
    const problemsOf = async (root: string) =>
      buildContracts(root).then(
        () => [] as string[],
        (caught: unknown) => (caught as ContractBuildError).problems.map(formatProblem),
      );
    const bad = await problemsOf(writeTempRepo(tinySpec({ 'specs/tiny/openapi.yaml': withEvents('', '\n      x-emitted-by: [deleteItem, job:Nightly]') })));
    expect(bad).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/webhook item\.created: missing x-emitted-by/),
        expect.stringMatching(/webhook item\.deleted: x-emitted-by names "deleteItem", which is neither/),
        expect.stringMatching(/webhook item\.deleted: x-emitted-by names "job:Nightly", which is neither/),
      ]),
    );
    expect(await problemsOf(writeTempRepo(tinySpec({ 'specs/tiny/openapi.yaml': withEvents('\n      x-emitted-by: [getItem]', '\n      x-emitted-by: [job:nightly-purge]') })))).toEqual([]);
  });

  it('names the shared component file when the problem is in a component', () => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/components/responses/Problem.yaml': GOOD_PROBLEM.replace(
          'content:',
          'headers:\n  Retry-After:\n    description: Seconds to wait.\ncontent:',
        ),
      }),
    );
    const bundled = bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root });
    expect(checkConventions(bundled).map(formatProblem)).toEqual(
      ['400', '401', '429', '500', '503'].map(
        (status) =>
          `specs/tiny/components/responses/Problem.yaml: GET /items/{id} (getItem): response ${status} header Retry-After has neither schema nor content`,
      ),
    );
  });

  it('requires every response schema and header to resolve', () => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/paths/item.yaml': GOOD_OPERATION.replace(
          "      description: The item.\n",
          "      description: The item.\n      headers:\n        X-Missing:\n          description: no schema\n",
        ).replace(/schema:\n\s+\$ref: \.\.\/openapi\.yaml#\/components\/schemas\/Item\n/, 'schema_: {}\n'),
      }),
    );
    const bundled = bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root });
    expect(checkConventions(bundled).map(formatProblem)).toEqual([
      'specs/tiny/paths/item.yaml: GET /items/{id} (getItem): response 200 header X-Missing has neither schema nor content',
      'specs/tiny/paths/item.yaml: GET /items/{id} (getItem): response 200 application/json has no schema; add one (responses are validated against it)',
    ]);
  });
});

describe('idempotency convention', () => {
  const post = (extra: string, parameters: string, validation = "\n    '422': {$ref: ../openapi.yaml#/components/responses/Problem}") => `post:
  operationId: createItem
  tags: [Items]
  summary: Create an item
  x-ratelimit-class: write
  x-required-scopes: [items:write]${extra}
  parameters:${parameters}
  responses:
    '201': {description: Created.}
    '400': {$ref: ../openapi.yaml#/components/responses/Problem}
    '401': {$ref: ../openapi.yaml#/components/responses/Problem}${validation}
    '429': {$ref: ../openapi.yaml#/components/responses/Problem}
    '500': {$ref: ../openapi.yaml#/components/responses/Problem}
    '503': {$ref: ../openapi.yaml#/components/responses/Problem}
`;
  const KEY = '\n    - {name: Idempotency-Key, in: header, schema: {type: string}}';
  const problemsOf = (operation: string) => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/openapi.yaml': GOOD_ROOT.replace('paths:\n', 'paths:\n  /items:\n    $ref: ./paths/items.yaml\n'),
        'specs/tiny/paths/items.yaml': operation,
      }),
    );
    return checkConventions(bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root })).map(formatProblem);
  };

  it('wants a POST to declare Idempotency-Key unless it says x-idempotent: false, and the key only where it is idempotent', () => {
    expect(problemsOf(post('', ' []'))).toEqual([
      'specs/tiny/paths/items.yaml: POST /items (createItem): is idempotent (POST by default) but does not declare the Idempotency-Key header parameter; add it (the shared IdempotencyKey parameter) or set `x-idempotent: false`',
    ]);
    expect(problemsOf(post('', KEY))).toEqual([]);
    expect(problemsOf(post('\n  x-idempotent: false', ' []'))).toEqual([]);
    expect(problemsOf(post('\n  x-idempotent: false', KEY))).toEqual([
      'specs/tiny/paths/items.yaml: POST /items (createItem): declares the Idempotency-Key header parameter but is not idempotent; set `x-idempotent: true` or remove the parameter',
    ]);
    expect(problemsOf(post('', KEY, ''))).toEqual([
      "specs/tiny/paths/items.yaml: POST /items (createItem): takes Idempotency-Key, and a malformed key answers 422 validation; declare '422' (the shared Validation response), in the API's x-conventions (`of: idempotencyKey`) or on the operation",
    ]);
    expect(problemsOf(post('\n  x-idempotent: maybe', KEY))).toEqual([
      'specs/tiny/paths/items.yaml: POST /items (createItem): x-idempotent must be true or false (it defaults to true on POST and false elsewhere)',
    ]);
  });
});

describe('security convention', () => {
  it('refuses {} among the security requirements (a credential the server would have to treat as optional)', () => {
    const root = writeTempRepo(
      tinySpec({
        'specs/tiny/paths/item.yaml': GOOD_OPERATION.replace('  x-ratelimit-class: read\n', '  x-ratelimit-class: read\n  security:\n    - {}\n    - bearer: []\n'),
      }),
    );
    expect(checkConventions(bundleSpec(path.join(root, 'specs/tiny/openapi.yaml'), { displayBase: root })).map(formatProblem)).toEqual([
      'specs/tiny/paths/item.yaml: GET /items/{id} (getItem): lists `{}` among its security requirements (a credential is optional), which the server does not serve; write `security: []` for a public operation, or leave `{}` out',
    ]);
  });
});

describe('path files', () => {
  it('names a file under paths/ that the root document never references', async () => {
    const root = writeTempRepo({ ...tinySpec(), 'specs/tiny/paths/orphan.yaml': 'get: {}\n' });
    const failure = await buildContracts(root).catch((error: unknown) => error);
    expect((failure as ContractBuildError).problems.map(formatProblem)).toEqual([
      'specs/tiny/openapi.yaml: specs/tiny/paths/orphan.yaml is not referenced; add `/<route>: { $ref: ./paths/orphan.yaml }` under `paths:` (or delete the file)',
    ]);
  }, BUILD_TIMEOUT);
});

describe('handler files', () => {
  it('names the handler file an operation lacks, a file no operation owns, and a file that does not export its handler', async () => {
    const root = writeTempRepo({
      ...tinySpec(),
      'src/tiny/operations/getItems.ts': "export const getItems = () => ({ status: 200, body: [] });\n",
    });
    const missing = await buildContracts(root).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ContractBuildError);
    expect((missing as ContractBuildError).problems.map(formatProblem)).toEqual([
      expect.stringMatching(/^src\/tiny\/operations\/getItem\.ts: GET \/items\/\{id\} \(getItem\): the operation has no handler; create src\/tiny\/operations\/getItem\.ts with `export const getItem/),
      'src/tiny/operations/getItems.ts: no operation of specs/tiny has operationId getItems; rename the file after its operation, move shared code out of src/tiny/operations/, or delete it',
    ]);

    fs.renameSync(path.join(root, 'src/tiny/operations/getItems.ts'), path.join(root, 'src/tiny/operations/getItem.ts'));
    const misnamed = await buildContracts(root).catch((error: unknown) => error);
    expect((misnamed as ContractBuildError).problems.map(formatProblem)).toEqual([
      'src/tiny/operations/getItem.ts: exports no `getItem`; the server calls the export named after the operation',
    ]);

    fs.writeFileSync(path.join(root, 'src/tiny/operations/getItem.ts'), "export const getItem = () => ({ status: 200, body: {} });\n");
    expect((await buildContracts(root)).length).toBeGreaterThan(0);
  }, BUILD_TIMEOUT);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
