import { describe, expect, it } from 'vitest';
import jsYaml from 'js-yaml';
import YAML from 'yaml';
import { type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

describe('GET /api/v1/openapi.yaml', () => {
  it('need no credential and serve the JSON and YAML of one document', async () => {
    const json = await t.client.get('/api/v1/openapi.json');
    const yaml = await t.client.get('/api/v1/openapi.yaml');
    expect(json.status).toBe(200);
    expect(yaml.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(YAML.parse(yaml.text)).toEqual(json.body);
    // js-yaml reads an unquoted date as a Date: the served YAML quotes every string a loader would retype.
    expect(jsYaml.load(yaml.text)).toEqual(json.body);
    expect(json.body.openapi).toBe('3.1.0');
    expect(json.body.info.version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
