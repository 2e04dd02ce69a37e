import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * What a test file does beyond the test's own process, read from its text: it starts a child process (the server,
 * the worker, the CLI, tsc, npm), PostgreSQL, Redis or a browser. Such files take seconds to a minute or two each;
 * npm run test:quick (vitest.quick.config.ts) leaves them out, and a fresh run starts them first.
 */
export const NEEDS_MORE_THAN_THIS_PROCESS = new RegExp(
  [
    'node:child_process',
    String.raw`\b(startServerProcess|runServerProcess|startWorkerProcess|runWorkerProcess|runAdminCli|runSourceFile|runScriptProcess)\b`,
    String.raw`\b(copyProject|buildIntoScratchFolder)\b`,
    String.raw`support/(postgresServer|redisServer|engines|referencePage)\.js`,
    'chromium',
  ].join('|'),
);

export const needsMoreThanThisProcess = (file: string) => NEEDS_MORE_THAN_THIS_PROCESS.test(readFileSync(file, 'utf8'));

/**
 * vitest's order (project by project; the slowest first when it has timed the files before, else the largest), but
 * on a run with no timings (CI's fresh clone) a project's files that need more than the test's process first: a slow
 * file started last would run on alone after the rest (test/scaleOut.test.ts, two minutes, is one of the smaller files).
 */
class SlowKindsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const timed = (spec: TestSpecification) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path.relative(this.ctx.config.root, spec.moduleId)}`);
    if (sorted.every(timed)) return sorted;
    const projectOrder = [...new Set(sorted.map((spec) => spec.project.name))];
    const slowKind = new Map(sorted.map((spec) => [spec, needsMoreThanThisProcess(spec.moduleId)]));
    return sorted.sort(
      (a, b) => projectOrder.indexOf(a.project.name) - projectOrder.indexOf(b.project.name) || Number(slowKind.get(b)) - Number(slowKind.get(a)),
    );
  }
}

// The API suites (one file per operation, and the shared suites) each start the app; run without
// isolation they share one module graph per worker instead of importing the server again per file.
// They keep no state in modules: each file starts its own app over its own database.
const apiSuites = ['test/workPlatform/**/*.test.ts', 'test/portfolio/**/*.test.ts', 'test/shared/**/*.test.ts'];
// Module tests that sit beside the operations (see test/shared/operationTests.test.ts) keep their isolation.
const moduleTestsBesideOperations = ['test/portfolio/import.test.ts', 'test/portfolio/sanitizer.test.ts'];
// Tests of the SQLite limiter's own transaction (its counters are rows of the app's SQLite file); the
// limits counted in Redis and in PostgreSQL are proven by test/limits/limitCounterEngines.test.ts and
// test/scaleOut.test.ts, and every API suite below counts its calls in Redis. The *AcrossProcesses suites start
// server processes on one SQLite file whatever TEST_ENGINE says.
const sqliteOnlyApiSuites = ['test/shared/workPlatformCallLimits.test.ts', 'test/shared/*AcrossProcesses.test.ts'];
// The documents each API serves (its contract, Postman files, changelog, reference page): public,
// built from the committed contract in memory, uncounted; no store, limit or credential is read,
// so the engines cannot change their answers (the security suite proves every public operation is uncounted).
// operationTests.test.ts reads only the test folders.
const documentSuites = [
  'test/shared/operationTests.test.ts',
  'test/workPlatform/{getOpenapiJson,getOpenapiYaml,getPostmanCollection,getPostmanEnvironment,getChangelogJson,getReferencePage}.test.ts',
  'test/portfolio/{getOpenapiJson,getOpenapiYaml,getPostmanJson,getChangelogJson,getReferencePage}.test.ts',
];

export default defineConfig({
  test: {
    // Three files at a time on CI's two cores: many files mostly wait on child processes (servers, workers, the CLI,
    // tsc) or on PostgreSQL and Redis, so a third worker fills the time they leave the CPUs idle. vitest's default is
    // one worker less than the cores, a single worker on two. The timeouts leave room for a file slowed by the others.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Starts nothing: hands the test processes where to find the run's one PostgreSQL server, started by the first test that needs it.
    globalSetup: ['test/support/postgresGlobalSetup.ts'],
    sequence: { sequencer: SlowKindsFirst },
    projects: [
      { extends: true, test: { name: 'api', include: apiSuites, exclude: moduleTestsBesideOperations, isolate: false } },
      // The same API suites again with the app on PostgreSQL and its limits in Redis (test/support/testApp.ts, TEST_ENGINE).
      {
        extends: true,
        test: { name: 'api-postgres', include: apiSuites, exclude: [...moduleTestsBesideOperations, ...sqliteOnlyApiSuites, ...documentSuites], isolate: false, env: { TEST_ENGINE: 'postgres' } },
      },
      // Without isolation too: a worker imports the sources once for all the module files it runs, not once per file.
      // The files restore what they change of process.env and stop what they start.
      {
        extends: true,
        test: { name: 'modules', include: ['test/*.test.ts', 'test/!(workPlatform|portfolio|shared)/**/*.test.ts', ...moduleTestsBesideOperations], isolate: false },
      },
    ],
  },
});
