// npm run test:quick, for the edit loop: the api project (every API suite on SQLite) and the module tests that run in
// the test's own process on SQLite. Left out, by what a file does rather than by name: the files that start a child
// process (the server, the worker, the CLI, tsc, npm), PostgreSQL or Redis, or a browser; and the Postman runs.
// npm test runs them all.
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

const isInlineProject = (project: unknown): project is TestProjectInlineConfiguration => typeof project === 'object' && project !== null && 'test' in project;

const quickProjects = (fullRun.test?.projects ?? [])
  .filter(isInlineProject)
  .filter((project) => ['api', 'modules'].includes(String(project.test?.name)))
  .map((project) => ({ ...project, test: { ...project.test, exclude: [...(project.test?.exclude ?? []), ...leftOut, ...downloadRuns] } }));

// Two workers on two cores: these files keep their CPU busy (nothing waits on a child process), so a third worker
// only adds switching (measured: 88 s wall with two, 94–114 s with three).
export default defineConfig({ test: { ...fullRun.test, maxWorkers: 2, projects: quickProjects } });
