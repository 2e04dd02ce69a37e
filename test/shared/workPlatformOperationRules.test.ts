import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The scope and rate-limit class each operation enforces come from the contract's extensions:
 * for every authenticated operation, a token holding exactly the listed scopes passes the gate,
 * and the answer is counted in the listed class.
 */
const operations = contractOperations('work-platform');

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
      scopes: operation.requiredScopes,
    });
    const response = await client.request(operation.method, operation.examplePath, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: operation.requestBodyExample === undefined ? undefined : JSON.stringify(operation.requestBodyExample),
    });
    expect([401, 403], `${operation.operationId} answered ${response.status}: ${response.text}`).not.toContain(response.status);
    expect(response.headers['x-ratelimit-class']).toBe(operation.rateLimitClass);
  });
});

it('covers every operation of the contract', () => {
  expect(operations.length).toBeGreaterThanOrEqual(15);
  expect(operations.filter((operation) => !operation.isPublic).every((operation) => operation.rateLimitClass !== undefined)).toBe(true);
});
