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

describe('the types the client is built on', () => {
  const types = readFileSync(new URL('../../generated/work-platform/types.ts', import.meta.url), 'utf8');

  it("carry the request limits and each operation's problem types in their doc comments", () => {
    const taskCreate = /TaskCreate: \{[\s\S]*?\n {8}\};/.exec(types)?.[0] ?? '';
    expect(taskCreate).toContain('at most 200 characters');
    const ifMatch = /@description The version being changed[\s\S]*?\*\//.exec(types)?.[0] ?? '';
    expect(ifMatch).toContain('Limits: matches `^(?:[0-9]{1,15}|"[0-9]{1,15}")$`');
    expect(types).toMatch(/`amountMinor` requires `currency`/);
    const listTasks = /\/\*\*[^/]*?List tasks[\s\S]*?\*\//.exec(types)?.[0] ?? '';
    expect(listTasks).toContain('Problem types it may answer:');
    expect(listTasks).toContain('`validation`');
  });

  it('type the request currency as the ISO 4217 codes', () => {
    expect(types).toMatch(/CurrencyCode: "AED" \| "AFN" \|[^;]*"EUR"[^;]*;/);
    expect(/CurrencyCode: [^;]*;/.exec(types)?.[0]).not.toContain('"BTC"');
  });
});
