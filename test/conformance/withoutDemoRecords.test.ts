// The issue's measurement: after the demo records were deleted, the runner still reported "330
// passed", 21 of its calls having answered 404 on example ids. Here the records of the demo
// workspace are deleted before it runs, and GitHub is a local fake: it must create what it needs
// and exercise every operation, with no allowance. The server's clock (and the runner's) is a
// year ahead, past the dates the examples give (a contract's expiresOn of 2026-12-31 could no
// longer be sent): the runner computes such dates when it runs (scripts/contract/runDates.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance, type ConformanceReport } from '../../scripts/conformance/conformanceRun.js';
import { makeIssues, startGithubApiServer, type GithubApiServer } from '../support/githubApiServer.js';
import { startTestApp, type WorkPlatformTestApp } from '../support/testApp.js';

/** The demo workspace's records, children first (the foreign keys' order). */
const RECORD_TABLES = ['imported_issues', 'webhook_subscriptions', 'deal_contacts', 'contracts', 'deals', 'contacts', 'companies', 'tasks', 'projects', 'connectors'];

let github: GithubApiServer;
let app: WorkPlatformTestApp;
let report: ConformanceReport;
let recordsBeforeTheRun: number;
const A_YEAR_AHEAD = 366 * 24 * 3_600_000;
const clock = () => Date.now() + A_YEAR_AHEAD;

beforeAll(async () => {
  github = await startGithubApiServer();
  // The repository the importIssues example names.
  github.setRepository('northwind/website', makeIssues(3));
  app = (await startTestApp({ liftCallLimits: true, env: { GITHUB_API_BASE_URL: github.baseUrl }, now: clock })).workPlatform;
  for (const table of RECORD_TABLES) await app.t.sql.run(`DELETE FROM ${table} WHERE workspace_id = ?`, app.fx.workspaceId);
  recordsBeforeTheRun = 0;
  for (const table of RECORD_TABLES) recordsBeforeTheRun += await app.t.sql.value<number>(`SELECT count(*) FROM ${table} WHERE workspace_id = ?`, app.fx.workspaceId);
  report = await runConformance({ baseUrl: app.t.app.url, token: app.fx.tokens.all, limitedToken: app.fx.tokens.noScopes, api: 'work-platform', sleep: async () => undefined, now: clock });
}, 120_000);

afterAll(async () => {
  await app?.t.close();
  await github?.close();
});

describe('after the demo records were deleted', () => {
  it('the workspace had no records when the runner started', () => {
    expect(recordsBeforeTheRun).toBe(0);
  });

  it('creates what it needs and exercises every operation, with GitHub reachable: no call answered 404 and the run passes without any allowance', () => {
    expect(report.coverage.filter((entry) => !entry.exercised)).toEqual([]);
    expect(report.exercised).toBe(report.operations);
    expect(report).toMatchObject({ ok: true, violations: 0, unexercised: [], allowedUnexercised: [] });
    const callsMeantToSucceed = report.results.filter((result) => result.check === 'example-call' || result.check === 'setup');
    expect(callsMeantToSucceed.filter((result) => result.status === 404)).toEqual([]);
    // importIssues answered 409 on a connector that was not connected, then succeeded after connectConnector on a fresh one.
    const imports = report.results.filter((result) => result.operationId === 'importIssues' && (result.check === 'example-call' || result.check === 'setup'));
    expect(imports[0]).toMatchObject({ status: 409, outcome: 'not-exercised' });
    expect(imports.at(-1)).toMatchObject({ status: 200, outcome: 'passed' });
    expect(github.requests.some((request) => request.path === '/repos/northwind/website/issues')).toBe(true);
  });

  it('deletes again what it created, and names what it could not delete', async () => {
    expect(report.cleanup.created).toBeGreaterThan(20);
    expect(report.cleanup.left).toHaveLength(report.cleanup.created - report.cleanup.deleted);
    expect(report.cleanup.deleted).toBeGreaterThan(report.cleanup.created - 6);
    const companies = await app.t.sql.value<number>('SELECT count(*) FROM companies WHERE workspace_id = ?', app.fx.workspaceId);
    expect(companies).toBe(0);
  });
});
