// The client package ships with the contract it was made from.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadContractDocument } from '../support/contractClient.js';

const readJson = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

describe('src/client/package.json', () => {
  it("carries the Work-Platform API's info.version and the openapi-fetch the repository is tested with", () => {
    const client = readJson('src/client/package.json');
    const root = readJson('package.json');
    expect(client.version, 'set src/client/package.json "version" to the work-platform info.version').toBe((loadContractDocument('work-platform') as { info: { version: string } }).info.version);
    expect(client.dependencies['openapi-fetch']).toBe(root.devDependencies['openapi-fetch']);
    expect(client.exports['.'].import).toBe('./dist/src/client/index.js');
  });
});
