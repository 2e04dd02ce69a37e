import newman from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { makeIssues, startGithubApiServer, type GithubApiServer } from '../support/githubApiServer.js';

/**
 * Each API's Postman collection, as served, runs twice in a row in newman against one demo server:
 * every request passes its status, content-type and schema assertions both times, ids come from
 * what the run created, and what the run deletes is its own.
 */
let t: TestApp;
let client: ContractClient;
let github: GithubApiServer;
beforeAll(async () => {
  // The collection's issue import and connection reach GitHub: a local one answers.
  github = await startGithubApiServer();
  github.setRepository('northwind/website', makeIssues(3));
  t = await startTestApp({ env: { GITHUB_API_BASE_URL: github.baseUrl } });
  client = new ContractClient(t.app.url, 'work-platform', 'Problem');
  // Two runs make a few hundred calls with one token: lift the free plan's limits, as .ci/run does for the conformance runner.
  await createWorkspaceStore(t.store).setWorkspaceLimits(t.fixture.workPlatform.workspaceId, {
    readPerMinute: 100_000,
    writePerMinute: 100_000,
    aiPerMinute: 10_000,
    monthlyQuota: 100_000_000,
  });
});
afterAll(async () => {
  await t?.close();
  await github?.close();
});

interface RunReport {
  failures: string[];
  requests: number;
  /** Per request run: its name and the names of its assertions. */
  executions: { name: string; method: string; path: string; assertions: string[] }[];
}

async function runCollection(options: Omit<newman.NewmanRunOptions, 'reporters'>): Promise<RunReport> {
  const summary = await new Promise<newman.NewmanRunSummary>((resolve, reject) => {
    newman.run({ ...options, reporters: [] }, (error, result) => (error ? reject(error) : resolve(result)));
  });
  return {
    failures: summary.run.failures.map((failure) => `${failure.source?.name}: ${failure.error.message}`),
    requests: summary.run.stats.requests.total ?? 0,
    executions: summary.run.executions.map((execution) => ({
      name: execution.item.name,
      method: execution.request.method,
      path: '/' + (execution.request.url.path ?? []).join('/'),
      assertions: (execution.assertions ?? []).map((assertion) => assertion.assertion),
    })),
  };
}

/** Every request asserts its status, its content type and its body against a schema (or that a 204 has none). */
function expectFullAssertions(report: RunReport): void {
  for (const execution of report.executions) {
    const label = `${execution.name} (${execution.method} ${execution.path})`;
    expect(execution.assertions[0], label).toMatch(/^status is \d{3}$/);
    if (execution.assertions.some((name) => name.startsWith('no body, as the 204'))) continue;
    expect(execution.assertions, label).toContainEqual(expect.stringMatching(/^Content-Type is [a-z]+\/[a-z0-9.+-]+$/));
    expect(execution.assertions, label).toContainEqual(expect.stringMatching(/^body matches the .*schema$/));
  }
}

describe('the Work-Platform collection', () => {
  it('runs twice in a row against one server, every request green with status, content-type and schema assertions, deleting only what it created', { timeout: 120_000 }, async () => {
    const collection = (await client.get('/v1/postman.json')).body;
    const environment = (await client.get('/v1/postman-environment.json')).body;
    // The contract's OAuth 2.0 flow is the collection's credential, on this server; newman sends bearerToken through it.
    const oauth2 = Object.fromEntries(collection.auth.oauth2.map((entry: { key: string; value: unknown }) => [entry.key, entry.value]));
    const origin = new URL(t.app.publicBaseUrl).origin;
    expect(collection.auth.type).toBe('oauth2');
    expect(oauth2).toMatchObject({
      accessToken: '{{bearerToken}}',
      grant_type: 'authorization_code_with_pkce',
      challengeAlgorithm: 'S256',
      authUrl: `${origin}/oauth/authorize`,
      accessTokenUrl: `${origin}/oauth/token`,
      clientId: '{{oauthClientId}}',
    });
    expect(environment.values.map((value: { key: string }) => value.key)).toEqual(['baseUrl', 'bearerToken']);
    expect(environment.values[0].value).toBe(t.app.publicBaseUrl);
    environment.values[1].value = t.fixture.workPlatform.tokens.all;

    const demo = t.fixture.workPlatform;
    const demoRecords = async () => ({
      tasks: await t.sql.value<number>('SELECT count(*) FROM tasks WHERE id IN (' + demo.taskIds.map(() => '?').join(',') + ')', ...demo.taskIds),
      projects: await t.sql.value<number>('SELECT count(*) FROM projects WHERE workspace_id = ?', demo.workspaceId),
      companies: await t.sql.value<number>('SELECT count(*) FROM companies WHERE workspace_id = ?', demo.workspaceId),
      contacts: await t.sql.value<number>('SELECT count(*) FROM contacts WHERE workspace_id = ?', demo.workspaceId),
      deals: await t.sql.value<number>('SELECT count(*) FROM deals WHERE workspace_id = ?', demo.workspaceId),
      webhooks: await t.sql.value<number>('SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = ?', demo.workspaceId),
      connectors: await t.sql.value<number>('SELECT count(*) FROM connectors WHERE workspace_id = ?', demo.workspaceId),
    });
    const before = await demoRecords();

    const operationCount = contractOperations('work-platform').length;
    for (const run of [1, 2]) {
      const report = await runCollection({ collection, environment });
      expect(report.failures, `run ${run}`).toEqual([]);
      // One request per operation, and the few setup requests the contract lifecycle needs.
      expect(report.requests, `run ${run}`).toBeGreaterThanOrEqual(operationCount);
      expect(new Set(report.executions.map((execution) => `${execution.method} ${execution.path}`)).size).toBeGreaterThan(0);
      expectFullAssertions(report);
      // Everything the run created is gone again, but the contract it signed (signed contracts are kept).
      expect(await demoRecords(), `run ${run}`).toEqual(before);
    }
  });
});

describe('the Portfolio collection', () => {
  it('runs twice in a row: every request passes its status, content-type and schema assertions', { timeout: 60_000 }, async () => {
    const collection = (await t.client.get('/api/v1/postman.json')).body;
    for (const run of [1, 2]) {
      const report = await runCollection({ collection, envVar: [{ key: 'bearerToken', value: t.fixture.portfolio.apiKey }] });
      expect(report.failures, `run ${run}`).toEqual([]);
      expect(report.requests).toBe(contractOperations('portfolio').length);
      expectFullAssertions(report);
    }
  });
});
