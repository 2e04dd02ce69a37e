// npm run test:quick, for the edit loop: the api project (every API suite on SQLite) and the module tests that run in
// the test's own process on SQLite. Left out, by what a file does rather than by name: the files that start a child
// process (the server, the worker, the CLI, tsc, npm), PostgreSQL or Redis, or a browser. npm test runs them all.
import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import fullRun from './vitest.config.js';

const NEEDS_MORE_THAN_THIS_PROCESS = new RegExp(
  [
    'node:child_process',
    String.raw`\b(startServerProcess|runServerProcess|startWorkerProcess|runWorkerProcess|runAdminCli|runSourceFile|runScriptProcess)\b`,
    String.raw`\b(copyProject|buildIntoScratchFolder)\b`,
    String.raw`support/(postgresServer|redisServer|engines|referencePage)\.js`,
    'chromium',
  ].join('|'),
);

const leftOut = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/${file.split('\\').join('/')}`)
  .filter((file) => NEEDS_MORE_THAN_THIS_PROCESS.test(readFileSync(file, 'utf8')));

const quickProjects = (fullRun.test?.projects ?? [])
  .filter((project): project is TestProjectInlineConfiguration => typeof project === 'object' && ['api', 'modules'].includes(String(project.test?.name)))
  .map((project) => ({ ...project, test: { ...project.test, exclude: [...(project.test?.exclude ?? []), ...leftOut] } }));

export default defineConfig({ test: { ...fullRun.test, globalSetup: [], projects: quickProjects } });
