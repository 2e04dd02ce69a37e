import newman from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { makeIssues, startGithubApiServer, type GithubApiServer } from '../support/githubApiServer.js';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../support/openAiCompatibleServer.js';

/**
 * Each API's Postman collection, as served, runs twice in a row in newman against one demo server:
 * every request passes its status, content-type and schema assertions both times, ids come from
 * what the run created, and what the run deletes is its own.
 */
let t: TestApp;
let client: ContractClient;
let github: GithubApiServer;
let aiProvider: OpenAiCompatibleServer;
beforeAll(async () => {
  // The requests that call out do so to local servers: the connector's connection and issue
  // import to a GitHub, the AI routes to a chat-completions provider.
  github = await startGithubApiServer();
  github.setRepository('northwind/website', makeIssues(3));
  aiProvider = await startOpenAiCompatibleServer();
  t = await startTestApp({
    env: { GITHUB_API_BASE_URL: github.baseUrl, AI_PROVIDER: 'openai-compatible', AI_BASE_URL: aiProvider.baseUrl, AI_MODEL: 'test-model-1' },
  });
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
  await aiProvider?.close();
});

interface RunReport {
  failures: string[];
  requests: number;
  /** Per request run: its name and the names of its assertions. */
  executions: { name: string; operationId: string; method: string; path: string; assertions: string[] }[];
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
      operationId: operationIdOf(execution.request.method, '/' + (execution.request.url.path ?? []).join('/')),
      method: execution.request.method,
      path: '/' + (execution.request.url.path ?? []).join('/'),
      assertions: (execution.assertions ?? []).map((assertion) => assertion.assertion),
    })),
  };
}

/** The operation a request ran, by its method and path (`/v1/tasks/tsk_…` matches `/v1/tasks/{taskId}`). */
function operationIdOf(method: string, path: string): string {
  const api = path.startsWith('/api/v1') ? 'portfolio' : 'work-platform';
  const match = contractOperations(api).find(
    (operation) => operation.method.toUpperCase() === method && new RegExp(`^${operation.template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
  return match?.operationId ?? `${method} ${path}`;
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
  it('runs twice in a row against one server, every request green with status, content-type and schema assertions, deleting only what it created', { timeout: 180_000 }, async () => {
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

    // Every record of the workspace with its version: what a run changes or deletes shows here.
    const tables = ['projects', 'tasks', 'companies', 'contacts', 'deals', 'contracts', 'connectors', 'webhook_subscriptions'];
    const records = async () => {
      const all = new Map<string, number>();
      for (const table of tables) {
        const rows = await t.sql.rows<{ id: string; version: number }>(`SELECT id, version FROM ${table} WHERE workspace_id = ?`, t.fixture.workPlatform.workspaceId);
        for (const row of rows) all.set(row.id, Number(row.version));
      }
      return all;
    };
    const before = await records();
    const collectionOperations = contractOperations('work-platform').map((operation) => operation.operationId);

    let previous = before;
    for (const run of [1, 2]) {
      const report = await runCollection({ collection, environment });
      expect(report.failures, `run ${run}`).toEqual([]);
      // Every operation runs, and beyond them only the contract lifecycle's three setup requests.
      expect(new Set(report.executions.map((execution) => execution.operationId))).toEqual(new Set(collectionOperations));
      expect(report.requests, `run ${run}`).toBe(collectionOperations.length + 3);
      expectFullAssertions(report);

      // No record that was there before the run was changed or deleted: the run changes and deletes only its own.
      const after = await records();
      for (const [id, version] of previous) expect(after.get(id), `${id} after run ${run}`).toBe(version);
      // What stays: the contract the run signed (signed contracts are kept) and, the first time, the
      // example repository's three issues imported into the example project (an import never duplicates).
      const added = [...after.keys()].filter((id) => !previous.has(id));
      expect(added.filter((id) => id.startsWith('ctr_')), `run ${run}`).toHaveLength(1);
      expect(added.filter((id) => id.startsWith('tsk_')), `run ${run}`).toHaveLength(run === 1 ? 3 : 0);
      expect(added.filter((id) => !id.startsWith('ctr_') && !id.startsWith('tsk_')), `run ${run}`).toEqual([]);
      previous = after;
      // The calls out reached the local servers: a token check and an issue listing, and one chat completion per AI request.
      expect(github.requests.filter((request) => request.path === '/user'), `run ${run}`).toHaveLength(run);
      expect(github.requests.filter((request) => request.path === '/repos/northwind/website/issues'), `run ${run}`).toHaveLength(run);
      expect(aiProvider.requests, `run ${run}`).toHaveLength(2 * run);
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
      expect(new Set(report.executions.map((execution) => execution.operationId))).toEqual(new Set(contractOperations('portfolio').map((operation) => operation.operationId)));
      expectFullAssertions(report);
    }
  });
});
