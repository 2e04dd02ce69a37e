// CLI of the spec compiler; the work is done in scripts/contract/.
//   npm run build:contract   write generated/<api>/* for every specs/<api>/openapi.yaml
//   npm run check:contract   fail when generated/ differs from a fresh build, or when a change since the released
//                            snapshot (specs/<api>/released/openapi.json) has no changelog entry or needs a major version

import { fileURLToPath } from 'node:url';
import { buildContracts, compareWithDisk, discoverApis, writeGeneratedFiles, type FileDifference } from './contract/build.js';
import { ContractBuildError, formatProblem } from './contract/problems.js';
import { SPECS_HASH_FILE } from '../src/contract/specsHash.js';
import { checkReleases } from './contract/release.js';

const USAGE = `Usage: tsx scripts/build-contract.ts [--check] [--help]

Compiles every specs/<api>/openapi.yaml into generated/<api>/:
  openapi.json, openapi.yaml  the bundled document (internal $refs only)
  postman.json                a Postman v2.1 collection with a status test per request
  types.ts                    openapi-typescript types
and generated/specs.sha256, the content hash of specs/ that npm start compares before it serves.

Adds what each API's x-conventions (in its root openapi.yaml) say every operation answers: the
request-id, rate-limit and quota headers, and the standard error answers (scripts/contract/apiConventions.ts).

Fails, listing every problem, when a spec breaks a convention (operationId, tags, summary,
x-ratelimit-class, x-required-scopes, path parameter examples, 400/401/429/500/503 on protected
operations, resolvable response schemas and headers), or when a file under paths/ copies an answer or
header that x-conventions adds.

Options:
  --check   build in memory and compare with generated/ (specs.sha256 included); exit 1 when a file is stale or missing, or when
            a change since specs/<api>/released/openapi.json has no entry in specs/<api>/changelog.yaml
            or is breaking without a new major info.version (semver)
  --help    print this message`;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function describeDifference(difference: FileDifference): string {
  switch (difference.kind) {
    case 'missing':
      return `  missing:    ${difference.path}`;
    case 'stale':
      return `  stale:      ${difference.path}`;
    case 'unexpected':
      return `  unexpected: ${difference.path} (no spec produces it; delete it)`;
  }
}

async function main(args: string[]): Promise<number> {
  const unknown = args.filter((arg) => arg !== '--check' && arg !== '--help' && arg !== '-h');
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (unknown.length > 0) {
    console.error(`Unknown argument: ${unknown.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  const check = args.includes('--check');

  let files;
  try {
    files = await buildContracts(REPO_ROOT);
  } catch (error) {
    if (error instanceof ContractBuildError) {
      console.error(error.message);
      console.error('Fix the spec files named above, then run npm run build:contract again.');
      return 1;
    }
    throw error;
  }

  if (check) {
    const differences = compareWithDisk(REPO_ROOT, files);
    const outOfDate = differences.filter((difference) => difference.kind !== 'unexpected');
    if (differences.length > 0) {
      console.error('generated/ is not what the specs produce:');
      for (const difference of differences) console.error(describeDifference(difference));
      if (outOfDate.length > 0) console.error('run npm run build:contract and commit the result.');
    }
    const apis = discoverApis(REPO_ROOT).map((spec) => spec.api);
    const releaseProblems = checkReleases(REPO_ROOT, apis, new Date().toISOString().slice(0, 10));
    if (releaseProblems.length > 0) {
      console.error('The specs changed since their released snapshot without what the versioning rule asks for:');
      for (const problem of releaseProblems) console.error(`  - ${formatProblem(problem)}`);
    }
    if (differences.length > 0 || releaseProblems.length > 0) return 1;
    console.log(`check:contract OK: ${files.length} generated files match the specs; every change since the released snapshot is in the changelog.`);
    return 0;
  }

  const written = writeGeneratedFiles(REPO_ROOT, files);
  for (const file of written) console.log(`wrote ${file.path}`);
  console.log(`${written.length} of ${files.length} generated files changed; ${SPECS_HASH_FILE} records the specs/ they were built from.`);
  for (const difference of compareWithDisk(REPO_ROOT, files)) console.warn(describeDifference(difference));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
