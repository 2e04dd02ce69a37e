import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

// Running the collection in newman is the shared suite's (test/shared/postman.test.ts).
describe('GET /api/v1/postman.json', () => {
  it('names this server as its baseUrl', async () => {
    const postman = (await t.client.get('/api/v1/postman.json')).body;
    expect(postman.variable).toContainEqual(expect.objectContaining({ key: 'baseUrl', value: t.app.publicBaseUrl }));
  });

  it('serve a Postman v2.1 collection with one request per operation', async () => {
    const postman = (await t.client.get('/api/v1/postman.json')).body;
    expect(postman.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
    expect(postman.auth).toEqual({ type: 'bearer', bearer: [expect.objectContaining({ key: 'token', value: '{{bearerToken}}' })] });
    const requests = postman.item.flatMap((folder: { item: unknown[] }) => folder.item);
    expect(requests).toHaveLength(contractOperations('portfolio').length);
  });
});
