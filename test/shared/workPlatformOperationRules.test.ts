import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { ContractClient, loadContractDocument } from '../support/contractClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The scope and rate-limit class each operation enforces come from the contract's extensions:
 * for every authenticated operation, a token holding exactly the listed scopes passes the gate,
 * and the answer is counted in the listed class.
 */
type Json = Record<string, any>;
const document = loadContractDocument('work-platform') as Json;

function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref.slice(2).split('/').reduce((current: Json, token: string) => current[token.replace(/~1/g, '/')], document);
}

const operations = Object.entries(document.paths as Json).flatMap(([template, pathItem]) =>
  Object.entries(pathItem as Json).map(([method, operation]) => {
    const parameters = ((operation as Json).parameters ?? []).map(resolve);
    let path = template;
    for (const parameter of parameters.filter((candidate: Json) => candidate.in === 'path')) {
      path = path.replace(`{${parameter.name}}`, String(parameter.example));
    }
    const bodySchema = resolve((operation as Json).requestBody?.content?.['application/json']?.schema ?? {});
    return {
      operationId: (operation as Json).operationId as string,
      method: method.toUpperCase(),
      path,
      isPublic: Array.isArray((operation as Json).security) && (operation as Json).security.length === 0,
      scopes: (operation as Json)['x-required-scopes'] as string[],
      rateClass: (operation as Json)['x-ratelimit-class'] as string,
      body: bodySchema.example as Json | undefined,
    };
  }),
);

let t: TestApp;
let client: ContractClient;
let ownerId: string;
beforeAll(async () => {
  t = await startTestApp();
  client = new ContractClient(t.app.url, 'work-platform', 'Problem');
  ownerId = await t.sql.value<string>("SELECT id FROM users WHERE workspace_id = ? AND role = 'owner'", t.fixture.workPlatform.workspaceId);
});
afterAll(async () => {
  await t?.close();
});

describe.each(operations.filter((operation) => !operation.isPublic))('$operationId', (operation) => {
  it(`passes with exactly the scopes of x-required-scopes and is counted in its x-ratelimit-class`, async () => {
    const { token } = await issuePersonalAccessToken(createPersonalAccessTokenStore(t.store), {
      workspaceId: t.fixture.workPlatform.workspaceId,
      userId: ownerId,
      scopes: operation.scopes,
    });
    const response = await client.request(operation.method, operation.path, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: operation.body === undefined ? undefined : JSON.stringify(operation.body),
    });
    expect([401, 403], `${operation.operationId} answered ${response.status}: ${response.text}`).not.toContain(response.status);
    expect(response.headers['x-ratelimit-class']).toBe(operation.rateClass);
  });
});

it('covers every operation of the contract', () => {
  expect(operations.length).toBeGreaterThanOrEqual(15);
  expect(operations.filter((operation) => !operation.isPublic).every((operation) => Array.isArray(operation.scopes))).toBe(true);
});
