import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';

/**
 * An operation's tests are found from its operationId: test/<api>/<operationId>.test.ts holds its
 * own cases, and test/shared/ the suites every operation gets from the served contract. This
 * fails when an operation of either contract has no such file, and when a file there names none.
 */
const apis = [
  ['workPlatform', 'work-platform'],
  ['portfolio', 'portfolio'],
] as const;

/**
 * Files in an operation folder that test a module rather than an operation: the portfolio import
 * (validate, render, write) and its HTML sanitizer, which serve the admin CLI, not a request.
 */
const moduleTests: Record<string, string[]> = { portfolio: ['import', 'sanitizer'] };

const SUFFIX = '.test.ts';
const testFileNames = (folder: string) =>
  readdirSync(fileURLToPath(new URL(`../${folder}/`, import.meta.url)))
    .filter((name) => name.endsWith(SUFFIX))
    .map((name) => name.slice(0, -SUFFIX.length));

describe.each(apis)('test/%s/', (folder, contract) => {
  const operationIds = contractOperations(contract).map((operation) => operation.operationId);
  const files = testFileNames(folder);

  it('covers at least the operations the contract had when this check was written', () => {
    expect(operationIds.length).toBeGreaterThanOrEqual(folder === 'workPlatform' ? 23 : 18);
  });

  it.each(operationIds)('has %s.test.ts', (operationId) => {
    const missing = files.includes(operationId) ? [] : [`test/${folder}/${operationId}${SUFFIX}`];
    expect(missing, `${operationId} has no test file: create ${missing[0]} with its happy, error and security cases`).toEqual([]);
  });

  it('holds no test file that names no operation of the contract', () => {
    const strays = files
      .filter((name) => !operationIds.includes(name) && !(moduleTests[folder] ?? []).includes(name))
      .map((name) => `test/${folder}/${name}${SUFFIX}`);
    expect(strays, 'name each file after the operationId it tests (as the contract spells it), or move a suite that serves every operation to test/shared/').toEqual([]);
  });

  it('lists as module tests only files that exist', () => {
    for (const name of moduleTests[folder] ?? []) expect(existsSync(fileURLToPath(new URL(`../${folder}/${name}${SUFFIX}`, import.meta.url))), name).toBe(true);
  });
});
