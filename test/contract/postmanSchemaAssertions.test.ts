// The collections' schema assertions bite: run in newman (its own sandbox and Ajv 6) against a
// small local server that answers what each case says, a wrong body fails the assertion while a
// right one passes; and the 2020-12 keywords translated to draft-07 still refuse what they refused.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import newman from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../../scripts/contract/document.js';
import { toDraft7Schema } from '../../scripts/contract/draft7Schema.js';
import { deterministicUuid } from '../../scripts/contract/postmanCollection.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readJson = (file: string) => JSON.parse(readFileSync(`${REPO_ROOT}${file}`, 'utf8')) as JsonObject;

/** What the local server answers next: a status, a content type and a body. */
let answer: { status: number; contentType: string; body: string } = { status: 200, contentType: 'application/json', body: '{}' };
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

interface AssertionResult {
  name: string;
  passed: boolean;
}

/** Runs one item in newman against the local server; answers each assertion's name and outcome. */
async function runItem(item: JsonObject, collectionVariables: JsonObject[] = []): Promise<AssertionResult[]> {
  const collection = {
    info: { name: 'one request', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    variable: [{ key: 'baseUrl', value: baseUrl }, ...collectionVariables],
    item: [item],
  };
  const summary = await new Promise<newman.NewmanRunSummary>((resolve, reject) => {
    newman.run({ collection, reporters: [] }, (error, result) => (error ? reject(error) : resolve(result)));
  });
  expect(summary.run.stats.requests.total).toBe(1);
  return (summary.run.executions[0]?.assertions ?? []).map((assertion) => ({ name: assertion.assertion, passed: !assertion.error }));
}

const failed = (results: AssertionResult[]) => results.filter((result) => !result.passed).map((result) => result.name);

describe("the Work-Platform collection's Get a task", () => {
  const collection = readJson('generated/work-platform/postman.json');
  const document = readJson('generated/work-platform/openapi.json');
  const folders = collection.item as { item: JsonObject[] }[];
  const getTask = folders.flatMap((folder) => folder.item).find((item) => item.id === deterministicUuid('work-platform:operation:getTask'))!;
  const task = ((document.components as JsonObject).schemas as Record<string, JsonObject>).Task!.example as JsonObject;
  const variables = [{ key: 'taskId', value: String(task.id) }];

  it('passes every assertion on the example task', async () => {
    answer = { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(task) };
    const results = await runItem(getTask, variables);
    expect(results.map((result) => result.name)).toEqual(['status is 200', 'Content-Type is application/json', 'body matches the Task schema']);
    expect(failed(results)).toEqual([]);
  });

  it.each<[string, JsonValue]>([
    ['a member of the wrong type', { ...task, version: '1' }],
    ['a required member missing', Object.fromEntries(Object.entries(task).filter(([key]) => key !== 'title'))],
    ['an undeclared member', { ...task, secret: 'x' }],
    ['a value outside the enum', { ...task, status: 'FINISHED' }],
    ['an id without its prefix', { ...task, id: 'fipgBeTOx2NFYuEuBcyb' }],
    ['a date-time that is not one', { ...task, createdAt: 'yesterday' }],
    ['null where the schema has no null', { ...task, title: null }],
    ['an array instead of the object', [task]],
  ])('fails only its schema assertion on %s', async (_case, body) => {
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
    expect(failed(await runItem(getTask, variables))).toEqual(['body matches the Task schema']);
  });

  it('fails its content-type assertion on another media type, and its status assertion on another status', async () => {
    answer = { status: 200, contentType: 'text/plain', body: JSON.stringify(task) };
    expect(failed(await runItem(getTask, variables))).toEqual(['Content-Type is application/json']);
    answer = { status: 202, contentType: 'application/json', body: JSON.stringify(task) };
    expect(failed(await runItem(getTask, variables))).toEqual(['status is 200']);
  });
});

describe('2020-12 schemas translated for the sandbox (Ajv 6, draft-07)', () => {
  // A document using what draft-07 lacks: $defs reached by $ref (with a sibling), type arrays with
  // null, const, prefixItems with items, dependentRequired, allOf closed by unevaluatedProperties.
  const document: JsonObject = {
    components: {
      schemas: {
        Fields: { type: 'object', required: ['id'], properties: { id: { $ref: '#/components/schemas/Id' }, note: { type: ['string', 'null'] } } },
        Id: { type: 'string', pattern: '^itm_[A-Za-z0-9]+$' },
        Item: {
          type: 'object',
          allOf: [{ $ref: '#/components/schemas/Fields' }],
          properties: {
            kind: { const: 'item' },
            pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
            amountMinor: { type: 'integer' },
            currency: { $ref: '#/$defs/Currency', description: 'a sibling of $ref' },
          },
          dependentRequired: { amountMinor: ['currency'] },
          unevaluatedProperties: false,
        },
      },
    },
    $defs: { Currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
  };
  const schema = toDraft7Schema(document, { $ref: '#/components/schemas/Item' });
  const item: JsonObject = {
    id: 'translated',
    name: 'Translated schema',
    request: { method: 'GET', url: { raw: '{{baseUrl}}/item', host: ['{{baseUrl}}'], path: ['item'] } },
    event: [{ listen: 'test', script: { type: 'text/javascript', exec: [`const schema = ${JSON.stringify(schema)};`, 'pm.test("body matches", () => pm.response.to.have.jsonSchema(schema));'] } }],
  };
  const good = { id: 'itm_1', note: null, kind: 'item', pair: ['a', 1], amountMinor: 100, currency: 'EUR' };

  it('has no $ref, $defs, prefixItems, dependentRequired or unevaluatedProperties left', () => {
    expect(JSON.stringify(schema)).not.toMatch(/\$ref|\$defs|prefixItems|dependentRequired|unevaluated/);
  });

  it('accepts what the 2020-12 schema accepts', async () => {
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify(good) };
    expect(failed(await runItem(item))).toEqual([]);
  });

  it.each<[string, JsonObject]>([
    ['a $ref-inlined pattern broken', { ...good, id: 'x_1' }],
    ['a sibling of $ref broken', { ...good, currency: 'euro' }],
    ['null outside the type array', { ...good, kind: null }],
    ['const broken', { ...good, kind: 'other' }],
    ['a prefixItems position of the wrong type', { ...good, pair: [1, 1] }],
    ['an item beyond prefixItems', { ...good, pair: ['a', 1, 2] }],
    ['dependentRequired broken', Object.fromEntries(Object.entries(good).filter(([key]) => key !== 'currency'))],
    ['a member no part of allOf declares', { ...good, extra: true }],
    ['a required member of an allOf part missing', Object.fromEntries(Object.entries(good).filter(([key]) => key !== 'id'))],
  ])('refuses %s', async (_case, body) => {
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
    expect(failed(await runItem(item))).toEqual(['body matches']);
  });
});

describe('a recursive schema, translated for the sandbox', () => {
  // A tree: nothing to inline forever, so it goes into the embedded schema's own definitions.
  const document: JsonObject = {
    components: {
      schemas: {
        Node: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
        },
      },
    },
  };
  const schema = toDraft7Schema(document, { $ref: '#/components/schemas/Node' });
  const item: JsonObject = {
    id: 'recursive',
    name: 'Recursive schema',
    request: { method: 'GET', url: { raw: '{{baseUrl}}/tree', host: ['{{baseUrl}}'], path: ['tree'] } },
    event: [{ listen: 'test', script: { type: 'text/javascript', exec: [`const schema = ${JSON.stringify(schema)};`, 'pm.test("body matches", () => pm.response.to.have.jsonSchema(schema));'] } }],
  };

  it('refers only inside itself', () => {
    expect(JSON.stringify(schema)).not.toContain('#/components');
    expect(JSON.stringify(schema)).toContain('"$ref":"#/definitions/components.schemas.Node"');
  });

  it('accepts a tree and refuses a bad node three levels down', async () => {
    const tree = { name: 'a', children: [{ name: 'b', children: [{ name: 'c', children: [] }] }] };
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify(tree) };
    expect(failed(await runItem(item))).toEqual([]);
    answer = { status: 200, contentType: 'application/json', body: JSON.stringify({ name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] }) };
    expect(failed(await runItem(item))).toEqual(['body matches']);
  });
});
