import newman from 'newman';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_BASE_URL: '' } });
});
afterAll(async () => {
  await t?.close();
});

describe('the downloads', () => {
  it('need no credential and serve the JSON and YAML of one document', async () => {
    const json = await t.client.get('/api/v1/openapi.json');
    const yaml = await t.client.get('/api/v1/openapi.yaml');
    expect(json.status).toBe(200);
    expect(yaml.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(YAML.parse(yaml.text)).toEqual(json.body);
    expect(json.body.openapi).toBe('3.1.0');
    expect(json.body.info.version).toBe('v1');
  });

  it('name this server as their base URL', async () => {
    const json = (await t.client.get('/api/v1/openapi.json')).body;
    const postman = (await t.client.get('/api/v1/postman.json')).body;
    expect(json.servers).toEqual([expect.objectContaining({ url: t.app.publicBaseUrl })]);
    expect(postman.variable).toContainEqual(expect.objectContaining({ key: 'baseUrl', value: t.app.publicBaseUrl }));
  });

  it('serve a Postman v2.1 collection with one request per operation', async () => {
    const postman = (await t.client.get('/api/v1/postman.json')).body;
    expect(postman.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
    expect(postman.auth).toEqual({ type: 'bearer', bearer: [expect.objectContaining({ key: 'token', value: '{{bearerToken}}' })] });
    const requests = postman.item.flatMap((folder: { item: unknown[] }) => folder.item);
    expect(requests).toHaveLength(contractOperations('portfolio').length);
  });

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
