import newman from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { makeIssues, startGithubApiServer, type GithubApiServer } from '../support/githubApiServer.js';

/** Each API's Postman collection, as served, runs in newman against the demo server: one request and one passing status assertion per operation of the contract. */
let t: TestApp;
let client: ContractClient;
let github: GithubApiServer;
beforeAll(async () => {
  // The collection's issue import reads the example repository from a local GitHub.
  github = await startGithubApiServer();
  github.setRepository('northwind/website', makeIssues(3));
  t = await startTestApp({ env: { GITHUB_API_BASE_URL: github.baseUrl } });
  client = new ContractClient(t.app.url, 'work-platform', 'Problem');
});
afterAll(async () => {
  await t?.close();
  await github?.close();
});

describe('the Work-Platform downloads', () => {
  it('run as is in newman against a fresh demo server, with the environment template filled in', async () => {
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
    const summary = await new Promise<newman.NewmanRunSummary>((resolve, reject) => {
      newman.run({ collection, environment, reporters: [] }, (error, result) => (error ? reject(error) : resolve(result)));
    });
    const failures = summary.run.failures.map((failure) => `${failure.source?.name}: ${failure.error.message}`);
    expect(failures).toEqual([]);
    const operationCount = Object.values((client.document as { paths: Record<string, object> }).paths).flatMap(Object.keys).length;
    expect(summary.run.stats.requests.total).toBe(operationCount);
    expect(summary.run.stats.assertions.failed).toBe(0);
    expect(summary.run.stats.assertions.total).toBe(operationCount);
  });
});

describe('the Portfolio downloads', () => {
  it('run as is in newman against the demo server: every request passes its status assertion', async () => {
    const collection = (await t.client.get('/api/v1/postman.json')).body;
    const summary = await new Promise<newman.NewmanRunSummary>((resolve, reject) => {
      newman.run(
        { collection, envVar: [{ key: 'bearerToken', value: t.fixture.portfolio.apiKey }], reporters: [] },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
    });
    const failures = summary.run.failures.map((failure) => `${failure.source?.name}: ${failure.error.message}`);
    expect(failures).toEqual([]);
    expect(summary.run.stats.requests.total).toBe(contractOperations('portfolio').length);
    expect(summary.run.stats.assertions.total).toBe(contractOperations('portfolio').length);
    expect(summary.run.stats.assertions.failed).toBe(0);
  });
});
