// Every YAML the server serves reads, value for value and type for type, as its JSON in js-yaml 4 (YAML 1.2 with
// js-yaml's timestamps) and in the yaml package (1.2 core); js-yaml 3 and PyYAML (1.1) retype the same strings as
// the 1.1 schema the build quotes with, which the tricky-values case pins down.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { discoverApis } from '../../scripts/contract/build.js';
import { renderOpenapiYaml } from '../../scripts/contract/openapiFiles.js';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const apis = discoverApis(REPO_ROOT).map((spec) => spec.api);

const readGenerated = (api: string, name: string) => fs.readFileSync(path.join(REPO_ROOT, 'generated', api, name), 'utf8');

/** Loaders as a client would call them: js-yaml's default schema, and the yaml package's. */
const loaders = {
  'js-yaml 4': (text: string) => jsYaml.load(text),
  'yaml (1.2)': (text: string) => YAML.parse(text),
  'yaml (1.1 schema)': (text: string) => YAML.parse(text, { version: '1.1' }),
};

/** The JSON pointers at which `actual` differs from `expected` in value or type (a Date where a string was is one). */
function differences(expected: unknown, actual: unknown, at = ''): string[] {
  if (expected === null || typeof expected !== 'object') {
    return Object.is(expected, actual) ? [] : [`${at || '/'}: ${JSON.stringify(expected)} read as ${actual instanceof Date ? `Date ${actual.toISOString()}` : JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected) !== Array.isArray(actual) || actual === null || typeof actual !== 'object' || actual instanceof Date) {
    return [`${at || '/'}: not the same kind of value`];
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  return [...keys].flatMap((key) => differences((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], `${at}/${key}`));
}

describe.each(apis)('the YAML of %s', (api) => {
  const json = JSON.parse(readGenerated(api, 'openapi.json')) as Record<string, unknown>;
  const served = loadServedArtifacts(api, 'https://api.example.test/base');

  it.each(Object.entries(loaders))('generated/openapi.yaml reads as openapi.json in %s', (_name, load) => {
    expect(differences(json, load(readGenerated(api, 'openapi.yaml')))).toEqual([]);
  });

  it.each(Object.entries(loaders))('the served openapi.yaml reads as the served openapi.json in %s', (_name, load) => {
    expect(differences(JSON.parse(served.openapiJson), load(served.openapiYaml))).toEqual([]);
  });

  it('quotes every date-like string, which js-yaml would otherwise read as a Date', () => {
    const text = readGenerated(api, 'openapi.yaml');
    expect(text).not.toMatch(/:\s+\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?\s*$/m);
  });
});

describe('the webhook envelope of work-platform', () => {
  it('keeps apiVersion.const a string in every loader, so that a validator built from the YAML accepts genuine envelopes', () => {
    const json = JSON.parse(readGenerated('work-platform', 'openapi.json'));
    const expected = json.components.schemas.WebhookEnvelope.properties.apiVersion.const;
    expect(typeof expected).toBe('string');
    for (const load of Object.values(loaders)) {
      const document = load(readGenerated('work-platform', 'openapi.yaml')) as typeof json;
      expect(document.components.schemas.WebhookEnvelope.properties.apiVersion.const).toBe(expected);
    }
  });
});

describe('renderOpenapiYaml', () => {
  // Strings that YAML 1.1 (PyYAML, js-yaml 3) or 1.2 (js-yaml 4, yaml) loaders would read as something else.
  const tricky = [
    '2026-11-23', '2026-11-23T10:00:00Z', '2026-11-23 10:00:00.5', '2002-12-14t21:59:43.10-05:00',
    'yes', 'no', 'on', 'off', 'y', 'n', 'Y', 'N', 'YES', 'On', 'Off', 'true', 'True', 'FALSE',
    '~', 'null', 'Null', 'NULL', '', ' ',
    '0755', '0o17', '0x1F', '0b101', '-0b1', '08', '1:30', '190:20:30', '-1:30', '1:2:3.5', '1_000', '+1', '-1', '0', '00',
    '1e3', '1.5e3', '1E3', '12e03', '3.', '.5', '+.5', '0.', '.inf', '-.Inf', '.nan', '.NaN', '=', '<<',
  ];
  const document = {
    openapi: '3.1.0',
    values: Object.fromEntries(tricky.map((value, index) => [`v${index}`, value])),
    keys: Object.fromEntries(tricky.filter((value) => value !== '').map((value) => [value, value])),
    list: [...tricky, 1, 1.5, -0.25, true, false, null],
    numbers: { integer: 7, negative: -3, fraction: 0.125, zero: 0 },
  };

  it.each(Object.entries(loaders))('writes strings that %s reads back as the same strings, and keeps numbers, booleans and null', (_name, load) => {
    const text = renderOpenapiYaml('tricky', document);
    const read = load(text) as Record<string, unknown>;
    expect(differences({ 'x-generated': read['x-generated'], ...document }, read)).toEqual([]);
  });

  it('writes no %YAML directive and no merge key', () => {
    const text = renderOpenapiYaml('tricky', document);
    expect(text).not.toMatch(/^%YAML/m);
    expect(text).not.toMatch(/^\s*<<:/m);
    expect(text).toContain('"2026-11-23"');
  });
});
