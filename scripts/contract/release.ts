// The released snapshot of each API (specs/<api>/released/openapi.json, written by npm run release:contract) and
// the check that the specs may ship: every change since the snapshot has a changelog entry naming the operations
// it affects, and a breaking change comes with a new major number of info.version (semver MAJOR.MINOR.PATCH).

import fs from 'node:fs';
import path from 'node:path';
import { withConventions } from './apiConventions.js';
import { bundleSpec } from './bundle.js';
import { changelogFile, readChangelog, type ChangelogEntry } from './changelog.js';
import { isJsonObject, type JsonObject } from './document.js';
import type { ContractProblem } from './problems.js';
import { describeChange, diffSpecs, type SpecChange } from './specDiff.js';

export interface ReleaseMark {
  /** The day of the release, YYYY-MM-DD. */
  date: string;
  /** info.version at the release. */
  version: string;
  /** How many changelog entries the release covered; later entries describe unreleased changes. */
  changelogEntries: number;
}

export function releasedFile(api: string): string {
  return `specs/${api}/released/openapi.json`;
}

const SEMVER = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

function semver(version: unknown): [number, number, number] | undefined {
  const match = typeof version === 'string' ? SEMVER.exec(version) : null;
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

const versionOf = (document: JsonObject): unknown => (isJsonObject(document.info) ? document.info.version : undefined);

const yamlList = (values: readonly string[]): string => `[${values.join(', ')}]`;

/** The entry an author could append for these changes, as indented YAML lines. */
function suggestedEntry(changes: readonly SpecChange[], operationIds: readonly string[], version: string, today: string): string {
  const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
  return [
    `- date: '${today}'`,
    `  version: '${version}'`,
    `  summary: <what changed and why, in a sentence>`,
    `  affectedOperations: [${operationIds.join(', ')}]`,
    `  old: ${text(changes.map((change) => change.old).join('; '))}`,
    `  new: ${text(changes.map((change) => change.new).join('; '))}`,
    `  breaking: ${changes.some((change) => change.breaking)}`,
  ]
    .map((line) => `      ${line}`)
    .join('\n');
}

/**
 * Pure: what stops `current` shipping, given the released snapshot and the changelog. `today` (YYYY-MM-DD) is only
 * used in the suggested entry.
 */
export function checkRelease(api: string, released: JsonObject, mark: ReleaseMark, current: JsonObject, entries: readonly ChangelogEntry[], today: string): ContractProblem[] {
  const problems: ContractProblem[] = [];
  const specFile = `specs/${api}/openapi.yaml`;
  const logFile = changelogFile(api);
  const currentVersion = versionOf(current);
  const current3 = semver(currentVersion);
  const released3 = semver(mark.version);
  if (!current3) {
    problems.push({ file: specFile, where: 'info.version', message: `${JSON.stringify(currentVersion)} is not a semantic version; write MAJOR.MINOR.PATCH, e.g. '1.0.0'` });
    return problems;
  }
  if (released3 && compareVersions(current3, released3) < 0) {
    problems.push({ file: specFile, where: 'info.version', message: `'${String(currentVersion)}' is lower than the released '${mark.version}'; a version never goes down` });
  }

  const unreleased = entries.slice(mark.changelogEntries);
  if (entries.length < mark.changelogEntries) {
    problems.push({ file: logFile, message: `has ${entries.length} entries but the release of ${mark.version} (${mark.date}) covered ${mark.changelogEntries}; released entries are never deleted` });
  }
  unreleased.forEach((entry, index) => {
    const where = `entry ${mark.changelogEntries + index + 1} (${entry.date} "${entry.summary.slice(0, 50)}")`;
    if (entry.version !== currentVersion) problems.push({ file: logFile, where, message: `member \`version\` is '${entry.version}' but the change ships in info.version '${String(currentVersion)}'; write version: '${String(currentVersion)}'` });
    if (entry.date < mark.date) problems.push({ file: logFile, where, message: `member \`date\` ${entry.date} is before the release of ${mark.version} (${mark.date}); write the day the change ships` });
  });

  const changes = diffSpecs(released, current);
  const named = new Set(unreleased.flatMap((entry) => entry.affectedOperations));
  const uncovered = changes.filter((change) => change.operationIds.some((operationId) => !named.has(operationId)));
  if (uncovered.length > 0) {
    const operationIds = [...new Set(uncovered.flatMap((change) => change.operationIds))].sort();
    problems.push({
      file: logFile,
      message:
        `has no entry since the release of ${mark.version} (${mark.date}) for ${uncovered.length === 1 ? 'this change' : `these ${uncovered.length} changes`}:\n` +
        uncovered.map((change) => `      ${describeChange(change)}`).join('\n') +
        `\n    append an entry naming ${yamlList(operationIds)} to ${logFile} under \`entries:\`, for example:\n` +
        suggestedEntry(uncovered, operationIds, uncovered.some((change) => change.breaking) && released3 && current3[0] <= released3[0] ? `${released3[0] + 1}.0.0` : String(currentVersion), today),
    });
  }

  const breaking = changes.filter((change) => change.breaking);
  if (breaking.length > 0 && released3 && current3[0] <= released3[0]) {
    problems.push({
      file: specFile,
      where: 'info.version',
      message:
        `breaking ${breaking.length === 1 ? 'change' : 'changes'} since the release of ${mark.version} without a new major version:\n` +
        breaking.map((change) => `      ${describeChange(change)}`).join('\n') +
        `\n    set info.version to '${released3[0] + 1}.0.0' in ${specFile} (and version: '${released3[0] + 1}.0.0' in the changelog entries), or undo the breaking change`,
    });
  }
  for (const change of breaking) {
    const unmarked = unreleased.filter((entry) => !entry.breaking && change.operationIds.some((operationId) => entry.affectedOperations.includes(operationId)));
    const marked = unreleased.some((entry) => entry.breaking && change.operationIds.some((operationId) => entry.affectedOperations.includes(operationId)));
    if (!marked && unmarked.length > 0) {
      problems.push({ file: logFile, where: `entry "${unmarked[0]!.summary.slice(0, 50)}"`, message: `describes a breaking change (${describeChange(change)}); write breaking: true` });
    }
  }
  return problems;
}

/** Reads the snapshot of one API; undefined when none was released yet. */
export function readReleased(repoRoot: string, api: string): { document: JsonObject; mark: ReleaseMark } | undefined {
  const file = path.join(repoRoot, releasedFile(api));
  if (!fs.existsSync(file)) return undefined;
  const document = JSON.parse(fs.readFileSync(file, 'utf8')) as JsonObject;
  const mark = document['x-released'] as unknown as ReleaseMark;
  return { document, mark };
}

/** The document as it is served (its conventions added), which is what clients compare releases by. */
export function bundledDocument(repoRoot: string, api: string): JsonObject {
  return withConventions(bundleSpec(path.join(repoRoot, 'specs', api, 'openapi.yaml'), { displayBase: repoRoot })).document;
}

/** Every API under specs/ with its problems against its released snapshot (a missing snapshot is a problem). */
export function checkReleases(repoRoot: string, apis: readonly string[], today: string): ContractProblem[] {
  const problems: ContractProblem[] = [];
  for (const api of apis) {
    const released = readReleased(repoRoot, api);
    if (!released) {
      problems.push({ file: releasedFile(api), message: 'missing: there is no released snapshot to compare with; run npm run release:contract and commit it' });
      continue;
    }
    if (!isJsonObject(released.mark) || typeof released.mark.date !== 'string' || typeof released.mark.version !== 'string' || typeof released.mark.changelogEntries !== 'number') {
      problems.push({ file: releasedFile(api), where: 'x-released', message: 'missing or incomplete (date, version, changelogEntries); the file is written by npm run release:contract, never by hand' });
      continue;
    }
    const changelog = readChangelog(repoRoot, api);
    if (changelog.problems.length > 0) {
      problems.push(...changelog.problems);
      continue;
    }
    problems.push(...checkRelease(api, released.document, released.mark, bundledDocument(repoRoot, api), changelog.entries, today));
  }
  return problems;
}

/** The snapshot as committed: the bundled document with its release mark first. */
export function renderReleased(document: JsonObject, mark: ReleaseMark): string {
  const { 'x-released': _previous, ...rest } = document;
  return JSON.stringify({ 'x-released': mark, ...rest }, null, 2) + '\n';
}

/** What a first release is compared with: nothing was released, so every operation needs an entry. */
const NOTHING_RELEASED: { document: JsonObject; mark: ReleaseMark } = {
  document: { openapi: '3.1.0', info: { title: '', version: '0.0.0' }, paths: {} },
  mark: { date: '0000-01-01', version: '0.0.0', changelogEntries: 0 },
};

export type ReleaseOutcome = { api: string; released: ReleaseMark } | { api: string; unchanged: true };

/**
 * Writes specs/<api>/released/openapi.json for every API whose spec changed since its snapshot, after checking
 * that the changelog describes every change (as check:contract does). Throws nothing; returns the problems instead.
 */
export function releaseContracts(repoRoot: string, apis: readonly string[], date: string): { outcomes: ReleaseOutcome[]; problems: ContractProblem[] } {
  const problems: ContractProblem[] = [];
  const pending: { api: string; document: JsonObject; mark: ReleaseMark }[] = [];
  const outcomes: ReleaseOutcome[] = [];
  for (const api of apis) {
    const changelog = readChangelog(repoRoot, api);
    if (changelog.problems.length > 0) {
      problems.push(...changelog.problems);
      continue;
    }
    const previous = readReleased(repoRoot, api) ?? NOTHING_RELEASED;
    const current = bundledDocument(repoRoot, api);
    const found = checkRelease(api, previous.document, previous.mark, current, changelog.entries, date);
    problems.push(...found);
    if (found.length > 0) continue;
    if (diffSpecs(previous.document, current).length === 0 && changelog.entries.length === previous.mark.changelogEntries && versionOf(current) === previous.mark.version) {
      outcomes.push({ api, unchanged: true });
      continue;
    }
    pending.push({ api, document: current, mark: { date, version: String(versionOf(current)), changelogEntries: changelog.entries.length } });
  }
  if (problems.length > 0) return { outcomes: [], problems };
  for (const { api, document, mark } of pending) {
    const file = path.join(repoRoot, releasedFile(api));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, renderReleased(document, mark));
    outcomes.push({ api, released: mark });
  }
  return { outcomes, problems: [] };
}
