import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

const lists = contractOperations('portfolio').filter((operation) => operation.isList);

const invalidLimits = ['0', '101', '-1', '1.5', 'abc', '', '1e1', '0x10', ' 5', 'null'];
const invalidOffsets = ['-1', '1.5', 'abc', '', '1e1', 'true', '1000001', '9'.repeat(400)];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe.each(lists)('$operationId query parameters', (operation) => {
  const get = (query: string) => t.client.get(`${operation.examplePath}?${query}`, bearer(t.fixture.portfolio.apiKey));

  async function expectInvalid(query: string, name: string) {
    const response = await get(query);
    expect(response.status, query).toBe(400);
    expect(response.body.error.code).toBe('invalid_parameter');
    expect(response.body.error.message).toContain(`"${name}"`);
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ in: 'query', name }));
  }

  it.each(invalidLimits)('refuses limit=%j with 400 naming "limit"', (value) => expectInvalid(`limit=${encodeURIComponent(value)}`, 'limit'));
  it.each(invalidOffsets)('refuses offset=%j with 400 naming "offset"', (value) => expectInvalid(`offset=${encodeURIComponent(value)}`, 'offset'));

  it('refuses a repeated limit or offset, even with valid values', async () => {
    await expectInvalid('limit=5&limit=5', 'limit');
    await expectInvalid('limit=5&limit=', 'limit');
    await expectInvalid('offset=0&offset=1', 'offset');
  });

  it('names both parameters when both are wrong', async () => {
    const response = await get('limit=0&offset=-1');
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((detail: { name: string }) => detail.name).sort()).toEqual(['limit', 'offset']);
  });

  it('accepts valid values and ignores undeclared parameters', async () => {
    const response = await get('limit=2&offset=1&unknown=1&limt=7');
    expect(response.status).toBe(200);
    expect(response.body.paging).toMatchObject({ limit: 2, offset: 1 });
  });
});
