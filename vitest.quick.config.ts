// npm run test:quick, for the edit loop: the api project (every API suite on SQLite) and the module tests that run in
// the test's own process on SQLite. Left out, by what a file does rather than by name: the files that start a child
// process (the server, the worker, the CLI, tsc, npm), PostgreSQL or Redis, or a browser. npm test runs them all.
import { readdirSync } from 'node:fs';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import fullRun, { needsMoreThanThisProcess } from './vitest.config.js';

const leftOut = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/${file.split('\\').join('/')}`)
  .filter(needsMoreThanThisProcess);

const isInlineProject = (project: unknown): project is TestProjectInlineConfiguration => typeof project === 'object' && project !== null && 'test' in project;

const quickProjects = (fullRun.test?.projects ?? [])
  .filter(isInlineProject)
  .filter((project) => ['api', 'modules'].includes(String(project.test?.name)))
  .map((project) => ({ ...project, test: { ...project.test, exclude: [...(project.test?.exclude ?? []), ...leftOut] } }));

export default defineConfig({ test: { ...fullRun.test, globalSetup: [], projects: quickProjects } });
