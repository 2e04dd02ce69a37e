// specs/<api>/changelog.yaml: read, validated against specs/changelog.schema.json with messages that name the
// entry and member to fix, and rendered as generated/<api>/changelog.json (the download).

import fs from 'node:fs';
import path from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import YAML from 'yaml';
import { generatedNotice } from './openapiFiles.js';
import type { ContractProblem } from './problems.js';

export interface ChangelogEntry {
  date: string;
  version: string;
  summary: string;
  affectedOperations: string[];
  old: string;
  new: string;
  breaking: boolean;
}

export const CHANGELOG_SCHEMA_FILE = 'specs/changelog.schema.json';

export function changelogFile(api: string): string {
  return `specs/${api}/changelog.yaml`;
}

const validators = new Map<string, ReturnType<InstanceType<typeof Ajv2020Module.default>['compile']>>();

function validate(repoRoot: string, value: unknown) {
  let validator = validators.get(repoRoot);
  if (!validator) {
    const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, CHANGELOG_SCHEMA_FILE), 'utf8'));
    validator = new Ajv2020Module.default({ allErrors: true, strict: true }).compile(schema);
    validators.set(repoRoot, validator);
  }
  return validator(value) ? [] : (validator.errors ?? []);
}

/** `entry 3 (2026-11-25 "OAuth 2.0 access tokens…")` for an instance path `/entries/2/...`. */
function entryLabel(entries: unknown, instancePath: string): { where: string; member: string } {
  const match = /^\/entries\/(\d+)(\/.*)?$/.exec(instancePath);
  if (!match) return { where: instancePath === '' ? 'the file' : instancePath, member: '' };
  const index = Number(match[1]);
  const entry = Array.isArray(entries) ? (entries[index] as Record<string, unknown> | undefined) : undefined;
  const date = typeof entry?.date === 'string' ? entry.date : 'undated';
  const summary = typeof entry?.summary === 'string' ? ` "${entry.summary.length > 50 ? `${entry.summary.slice(0, 50)}…` : entry.summary}"` : '';
  return { where: `entry ${index + 1} (${date}${summary})`, member: (match[2] ?? '').slice(1).split('/')[0] ?? '' };
}

/** The API's changelog entries, or the problems that stop it being read. A missing file is a problem. */
export function readChangelog(repoRoot: string, api: string): { entries: ChangelogEntry[]; problems: ContractProblem[] } {
  const file = changelogFile(api);
  const full = path.join(repoRoot, file);
  if (!fs.existsSync(full)) return { entries: [], problems: [{ file, message: `missing; create it with \`entries:\` (see ${CHANGELOG_SCHEMA_FILE})` }] };
  let parsed: unknown;
  try {
    parsed = YAML.parse(fs.readFileSync(full, 'utf8'));
  } catch (error) {
    return { entries: [], problems: [{ file, message: `is not valid YAML: ${(error as Error).message}` }] };
  }
  const errors = validate(repoRoot, parsed);
  if (errors.length > 0) {
    const entries = (parsed as { entries?: unknown } | null)?.entries;
    const problems = errors.map((error): ContractProblem => {
      const { where, member } = entryLabel(entries, error.instancePath);
      const missing = error.keyword === 'required' ? String((error.params as { missingProperty?: string }).missingProperty) : undefined;
      const extra = error.keyword === 'additionalProperties' ? String((error.params as { additionalProperty?: string }).additionalProperty) : undefined;
      const message = missing
        ? `member \`${missing}\` is missing`
        : extra
          ? `member \`${extra}\` is not a changelog member (allowed: date, version, summary, affectedOperations, old, new, breaking)`
          : `member \`${member || error.instancePath}\` ${error.message ?? 'is invalid'}`;
      return { file, where, message };
    });
    return { entries: [], problems };
  }
  return { entries: (parsed as { entries: ChangelogEntry[] }).entries, problems: [] };
}

/** The download: the API's title and current version, then every entry, oldest first. */
export function renderChangelogJson(api: string, info: { title: string; version: string }, entries: readonly ChangelogEntry[]): string {
  return JSON.stringify({ 'x-generated': generatedNotice(api), api: info.title, version: info.version, entries }, null, 2) + '\n';
}
