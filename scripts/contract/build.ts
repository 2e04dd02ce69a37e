// specs/<api>/openapi.yaml ─► generated/<api>/{openapi.json, openapi.yaml, postman.json, types.ts}, for every API.

import fs from 'node:fs';
import path from 'node:path';
import { bundleSpec, type BundledSpec } from './bundle.js';
import { checkConventionCopies, injectConventions, readConventions } from './apiConventions.js';
import { checkConventions } from './conventions.js';
import { checkHandlerFiles } from './handlerFiles.js';
import { isJsonObject, type JsonObject } from './document.js';
import { renderOpenapiJson, renderOpenapiYaml } from './openapiFiles.js';
import { renderPostmanCollection, renderPostmanEnvironment } from './postmanCollection.js';
import { ContractBuildError, type ContractProblem } from './problems.js';
import { renderTypes } from './typescriptTypes.js';
import { renderContractRules } from './contractRules.js';
import { readChangelog, renderChangelogJson, type ChangelogEntry } from './changelog.js';
import { checkProblemTypes, withOperationProblemTypes, withProblemTypeTable } from './problemTypes.js';
import { checkRequestLimits } from './requestLimits.js';
import { checkRoles } from './roles.js';
import { hashSpecs, renderSpecsHashFile, SPECS_HASH_FILE } from '../../src/contract/specsHash.js';

export const SPECS_DIR = 'specs';
export const GENERATED_DIR = 'generated';
export const GENERATED_FILE_NAMES = ['openapi.json', 'openapi.yaml', 'postman.json', 'postman-environment.json', 'types.ts', 'rules.ts', 'changelog.json'] as const;

export interface ApiSpec {
  /** The folder name under specs/, e.g. `portfolio`. */
  api: string;
  /** Absolute path of specs/<api>/openapi.yaml. */
  rootFile: string;
}

export interface GeneratedFile {
  /** Relative to the repository root, with forward slashes, e.g. `generated/portfolio/openapi.json`. */
  path: string;
  contents: string;
}

/** Every `specs/<api>/openapi.yaml` under the repository root, sorted by API name. */
export function discoverApis(repoRoot: string): ApiSpec[] {
  const specsDir = path.join(repoRoot, SPECS_DIR);
  if (!fs.existsSync(specsDir)) return [];
  return fs
    .readdirSync(specsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(specsDir, entry.name, 'openapi.yaml')))
    .map((entry) => ({ api: entry.name, rootFile: path.join(specsDir, entry.name, 'openapi.yaml') }))
    .sort((a, b) => (a.api < b.api ? -1 : a.api > b.api ? 1 : 0));
}

/**
 * Bundles one API, adds what its `x-conventions` say (scripts/contract/apiConventions.ts) and checks its conventions.
 * Returns the served document and every problem found; it is only usable when there are no problems.
 */
export function compileSpec(spec: ApiSpec, repoRoot: string): { bundled?: BundledSpec; problems: ContractProblem[] } {
  let bundled: BundledSpec;
  try {
    bundled = bundleSpec(spec.rootFile, { displayBase: repoRoot });
  } catch (error) {
    if (error instanceof ContractBuildError) return { problems: [...error.problems] };
    throw error;
  }
  // What x-conventions adds is checked against the author's files first (no copies), then everything on the served shape.
  const { conventions, problems: conventionProblems } = readConventions(bundled);
  const copies = checkConventionCopies(bundled, conventions);
  const served: BundledSpec = { ...bundled, document: injectConventions(bundled.document, conventions) };
  return {
    bundled: served,
    problems: [
      ...conventionProblems,
      ...copies,
      ...legacyChangelog(served),
      ...checkConventions(served),
      ...checkProblemTypes(served.document, served.rootLabel),
      ...checkRoles(served),
      ...checkRequestLimits(served.document, served.rootLabel),
      ...unreferencedPathFiles(served, repoRoot),
      ...checkHandlerFiles(repoRoot, spec.api, served.document),
    ],
  };
}

/** The changelog lives in specs/<api>/changelog.yaml, not in the spec's `info`. */
function legacyChangelog(bundled: BundledSpec): ContractProblem[] {
  const info = bundled.document.info;
  if (!isJsonObject(info) || !('x-changelog' in info)) return [];
  const changelog = `${path.dirname(bundled.rootLabel)}/changelog.yaml`;
  return [{ file: bundled.rootLabel, where: 'info.x-changelog', message: `move each entry to ${changelog} (date, version, summary, affectedOperations, old, new, breaking) and delete info.x-changelog` }];
}

/** A file in specs/<api>/paths/ that the root document never references is an operation nobody serves. */
function unreferencedPathFiles(bundled: BundledSpec, repoRoot: string): ContractProblem[] {
  const folder = path.join(path.dirname(bundled.rootFile), 'paths');
  if (!fs.existsSync(folder)) return [];
  const used = new Set(bundled.sources.values());
  const problems: ContractProblem[] = [];
  for (const name of fs.readdirSync(folder).filter((file) => file.endsWith('.yaml')).sort()) {
    const label = path.relative(repoRoot, path.join(folder, name)).split(path.sep).join('/');
    if (!used.has(label)) {
      problems.push({
        file: bundled.rootLabel,
        message: `${label} is not referenced; add \`/<route>: { $ref: ./paths/${name} }\` under \`paths:\` (or delete the file)`,
      });
    }
  }
  return problems;
}

export interface BuildOptions {
  /** Only these APIs (the others' generated files are left out, not compared); every API by default. */
  apis?: readonly string[];
  /** false: leave out types.ts, which only the compiler reads (npm run dev renders it after the restart). */
  types?: boolean;
}

/** The generated files of one API from its bundled (and checked) document. */
export async function renderApi(api: string, bundled: JsonObject, changelog: readonly ChangelogEntry[], options: BuildOptions = {}): Promise<GeneratedFile[]> {
  const dir = `${GENERATED_DIR}/${api}`;
  const document = withProblemTypeTable(withOperationProblemTypes(bundled));
  const info = isJsonObject(document.info) ? document.info : {};
  return [
    { path: `${dir}/openapi.json`, contents: renderOpenapiJson(api, document) },
    { path: `${dir}/openapi.yaml`, contents: renderOpenapiYaml(api, document) },
    { path: `${dir}/postman.json`, contents: renderPostmanCollection(api, document) },
    { path: `${dir}/postman-environment.json`, contents: renderPostmanEnvironment(api, document) },
    ...(options.types === false ? [] : [{ path: `${dir}/types.ts`, contents: await renderTypes(api, document) }]),
    { path: `${dir}/rules.ts`, contents: renderContractRules(api, document) },
    { path: `${dir}/changelog.json`, contents: renderChangelogJson(api, { title: String(info.title), version: String(info.version) }, changelog) },
  ];
}

/**
 * Builds every API in memory. Throws a ContractBuildError listing the problems of all APIs when any has one,
 * so that nothing is written from a spec that breaks the conventions.
 */
export async function buildContracts(repoRoot: string, options: BuildOptions = {}): Promise<GeneratedFile[]> {
  const specs = discoverApis(repoRoot).filter((spec) => !options.apis || options.apis.includes(spec.api));
  if (specs.length === 0) {
    throw new ContractBuildError([{ file: `${SPECS_DIR}/`, message: 'no specs/<api>/openapi.yaml found' }]);
  }
  // Hashed before anything is read: a save during the build leaves a hash that no longer matches, never the reverse.
  const specsHash = hashSpecs(repoRoot);
  const problems: ContractProblem[] = [];
  const compiled: { api: string; document: JsonObject; changelog: ChangelogEntry[] }[] = [];
  for (const spec of specs) {
    const result = compileSpec(spec, repoRoot);
    const changelog = readChangelog(repoRoot, spec.api);
    problems.push(...result.problems, ...changelog.problems);
    if (result.bundled && result.problems.length === 0) compiled.push({ api: spec.api, document: result.bundled.document, changelog: changelog.entries });
  }
  if (problems.length > 0) throw new ContractBuildError(problems);
  const files: GeneratedFile[] = [];
  for (const { api, document, changelog } of compiled) files.push(...(await renderApi(api, document, changelog, options)));
  files.push({ path: SPECS_HASH_FILE, contents: renderSpecsHashFile(specsHash) });
  return files;
}

/** Writes each file whose contents differ from what is on disk (an unchanged file keeps its time); returns those written. */
export function writeGeneratedFiles(repoRoot: string, files: readonly GeneratedFile[]): GeneratedFile[] {
  const written: GeneratedFile[] = [];
  for (const file of files) {
    const target = path.join(repoRoot, file.path);
    if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === file.contents) continue;
    written.push(file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, file.contents);
  }
  return written;
}

export interface FileDifference {
  path: string;
  /** missing: not on disk; stale: differs from a fresh build; unexpected: on disk but no longer produced. */
  kind: 'missing' | 'stale' | 'unexpected';
}

/** Compares a fresh in-memory build with generated/ on disk. */
export function compareWithDisk(repoRoot: string, files: readonly GeneratedFile[]): FileDifference[] {
  const differences: FileDifference[] = [];
  for (const file of files) {
    const target = path.join(repoRoot, file.path);
    if (!fs.existsSync(target)) differences.push({ path: file.path, kind: 'missing' });
    else if (fs.readFileSync(target, 'utf8') !== file.contents) differences.push({ path: file.path, kind: 'stale' });
  }
  const expected = new Set(files.map((file) => file.path));
  for (const onDisk of listFiles(path.join(repoRoot, GENERATED_DIR))) {
    const relative = path.relative(repoRoot, onDisk).split(path.sep).join('/');
    if (!expected.has(relative)) differences.push({ path: relative, kind: 'unexpected' });
  }
  return differences;
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listFiles(full));
    else if (entry.name !== '.gitkeep') found.push(full);
  }
  return found;
}
