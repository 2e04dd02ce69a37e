// The build steps behind the rules in the schemas: enums from a maintained list (x-enum-source), each operation's
// problem types (x-problem-types), and the storage limits on the request schemas.
import currencyCodes from 'currency-codes';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../scripts/contract/document.js';
import { expandEnumSources } from '../../scripts/contract/enumSources.js';
import { operationProblemTypes, withOperationProblemTypes } from '../../scripts/contract/problemTypes.js';
import { checkRequestLimits } from '../../scripts/contract/requestLimits.js';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';
import YAML from 'yaml';

describe('x-enum-source', () => {
  it('writes the ISO 4217 codes of currency-codes as the enum, with null for a nullable schema, and drops the keyword', () => {
    const { document, problems } = expandEnumSources(
      { components: { schemas: { Code: { type: 'string', 'x-enum-source': 'currency-codes' }, Maybe: { type: ['string', 'null'], 'x-enum-source': 'currency-codes' } } } },
      'specs/x/openapi.yaml',
    );
    expect(problems).toEqual([]);
    const schemas = (document.components as JsonObject).schemas as Record<string, JsonObject>;
    expect(schemas.Code).toEqual({ type: 'string', enum: currencyCodes.codes() });
    expect(schemas.Code!.enum).toContain('EUR');
    expect(schemas.Code!.enum).not.toContain('BTC');
    expect(schemas.Code!.enum).not.toContain('ZZZ');
    expect((schemas.Maybe!.enum as unknown[]).at(-1)).toBeNull();
  });

  it('names an unknown source, and a schema with an enum of its own', () => {
    const { problems } = expandEnumSources(
      { a: { 'x-enum-source': 'crypto-coins' }, b: { enum: ['EUR'], 'x-enum-source': 'currency-codes' } },
      'specs/x/openapi.yaml',
    );
    expect(problems.map((problem) => [problem.where, problem.message])).toEqual([
      ['#/a', expect.stringContaining('must be one of currency-codes')],
      ['#/b', expect.stringContaining('delete the enum')],
    ]);
  });
});

const problemSchema = {
  type: 'object',
  'x-problem-types': {
    'bad-request': { status: 400, title: 'Bad request', when: 'x' },
    'rate-limited': { status: 429, title: 'Rate', when: 'x' },
    'quota-exceeded': { status: 429, title: 'Quota', when: 'x' },
    'ai-spend-cap-exceeded': { status: 429, title: 'Cap', when: 'x' },
  },
};
const problemResponse = (extra: JsonObject = {}): JsonObject => ({ description: 'p', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } }, ...extra });

function documentWith(operation: JsonObject, responses: JsonObject = {}): JsonObject {
  return {
    openapi: '3.1.0',
    paths: { '/v1/things': { get: { operationId: 'listThings', ...operation } } },
    components: { schemas: { Problem: problemSchema }, responses },
  };
}

describe("each operation's x-problem-types", () => {
  it('lists every type of each declared problem status, or the types a response narrows it to', () => {
    const document = documentWith(
      { responses: { '200': { description: 'ok' }, '400': { $ref: '#/components/responses/Bad' }, '429': { $ref: '#/components/responses/Limited' } } },
      { Bad: problemResponse(), Limited: problemResponse({ 'x-problem-types': ['rate-limited', 'quota-exceeded'] }) },
    );
    expect(operationProblemTypes(document, 'root').problems).toEqual([]);
    const written = withOperationProblemTypes(document) as any;
    expect(written.paths['/v1/things'].get['x-problem-types']).toEqual(['bad-request', 'rate-limited', 'quota-exceeded']);
    expect((document as any).paths['/v1/things'].get['x-problem-types']).toBeUndefined();
  });

  it('refuses a response that names a type of another status, a status no type has, and a hand-written operation list', () => {
    const document = documentWith(
      { 'x-problem-types': ['bad-request'], responses: { '429': problemResponse({ 'x-problem-types': ['bad-request'] }), '418': problemResponse() } },
    );
    const messages = operationProblemTypes(document, 'root').problems.map((problem) => problem.message);
    expect(messages).toEqual([
      expect.stringContaining('delete x-problem-types: the build writes it'),
      expect.stringContaining('no problem type in Problem\'s x-problem-types has status 418'),
      expect.stringContaining('must list problem types of status 429'),
    ]);
  });
});

describe('storage limits on the request schemas', () => {
  it('wants each Create/Update member to carry the maxLength of its resource member', () => {
    const schemas = {
      Task: { properties: { title: { type: 'string', maxLength: 200 }, note: { type: 'string' } } },
      TaskCreate: { properties: { title: { type: 'string', maxLength: 200 }, note: { type: 'string' } } },
      TaskUpdate: { properties: { title: { type: 'string' } } },
      TaskList: { properties: { title: { type: 'string' } } },
    };
    const problems = checkRequestLimits({ components: { schemas } }, 'root');
    expect(problems).toEqual([{ file: 'root', where: '#/components/schemas/TaskUpdate/properties/title', message: 'write maxLength: 200, the storage limit Task.title declares (found none)' }]);
  });
});

describe('the served documents of a WEBHOOK_ALLOW_LOOPBACK server', () => {
  it('take x-loopback-pattern as the pattern in openapi.json, openapi.yaml and the pipeline document; the default keeps https only', () => {
    const plain = loadServedArtifacts('work-platform', 'http://api.example.test');
    const loopback = loadServedArtifacts('work-platform', 'http://api.example.test', { allowLoopbackWebhooks: true });
    const urlSchema = (document: any) => document.components.schemas.WebhookUrl;
    expect(urlSchema(plain.document).pattern).toBe('^https://');
    expect(urlSchema(JSON.parse(plain.openapiJson)).pattern).toBe('^https://');
    expect(urlSchema(YAML.parse(plain.openapiYaml)).pattern).toBe('^https://');
    const loopbackPattern = urlSchema(plain.document)['x-loopback-pattern'];
    expect(loopbackPattern).toMatch(/127/);
    expect(urlSchema(loopback.document).pattern).toBe(loopbackPattern);
    expect(urlSchema(JSON.parse(loopback.openapiJson)).pattern).toBe(loopbackPattern);
    expect(urlSchema(YAML.parse(loopback.openapiYaml)).pattern).toBe(loopbackPattern);
    // Everything else reads the same.
    const withoutPattern = (text: string) => text.replaceAll(JSON.stringify(loopbackPattern), '"<pattern>"').replaceAll('"^https://"', '"<pattern>"');
    expect(withoutPattern(loopback.openapiJson)).toBe(withoutPattern(plain.openapiJson));
    expect(loopback.postmanJson).toBe(plain.postmanJson);
  });
});
