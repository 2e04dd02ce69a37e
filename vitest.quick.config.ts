// npm run test:quick, for the edit loop: the api project (every API suite on SQLite) and the module tests that run in
// the test's own process on SQLite (`--project api --project modules`). Left out, by what a file does rather than by
// name: the files that start a child process (the server, the worker, the CLI, tsc, npm), PostgreSQL or Redis, or a
// browser; and, by name, the Postman runs and the spec compiler's own suites (npm run test:compiler runs those: the
// project `compiler`). npm test runs them all.
import { readdirSync } from 'node:fs';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import fullRun, { needsMoreThanThisProcess } from './vitest.config.js';

const leftOut = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/${file.split('\\').join('/')}`)
  .filter(needsMoreThanThisProcess);
// The one in-process suite of a minute's CPU: it runs every request of both Postman collections through newman, a
// check of the downloads rather than of an edit; npm test runs it.
const downloadRuns = ['test/shared/postman.test.ts'];
// The spec compiler's own suites: their subject is scripts/contract (the build, the release diff, the Postman
// generator) on specs of their own, not the server; an edit of the server cannot change what they find. npm test runs
// them, and `npm run test:compiler` alone (the project `compiler` below), for an edit of the compiler.
const compilerSuites = ['test/contract/build.test.ts', 'test/contract/specDiff.test.ts', 'test/contract/postmanSchemaAssertions.test.ts'];

const isInlineProject = (project: unknown): project is TestProjectInlineConfiguration => typeof project === 'object' && project !== null && 'test' in project;

const fullProjects = (fullRun.test?.projects ?? []).filter(isInlineProject);
const quickProjects = fullProjects
  .filter((project) => ['api', 'modules'].includes(String(project.test?.name)))
  .map((project) => ({ ...project, test: { ...project.test, exclude: [...(project.test?.exclude ?? []), ...leftOut, ...downloadRuns, ...compilerSuites] } }));
const modules = fullProjects.find((project) => project.test?.name === 'modules')!;
const compilerProject = { ...modules, test: { ...modules.test, name: 'compiler', include: compilerSuites, exclude: [] } };

// Two workers on two cores: these files keep their CPU busy (nothing waits on a child process), so a third worker
// only adds switching (measured: 88 s wall with two, 94–114 s with three).
export default defineConfig({ test: { ...fullRun.test, maxWorkers: 2, projects: [...quickProjects, compilerProject] } });
