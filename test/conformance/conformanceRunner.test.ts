// The conformance runner (npm run conformance) against the real server, where every answer honours
// the contract and every operation but the two that need GitHub is exercised; and against the same
// server behind a proxy that breaks answers, where it must report each one, and must report the
// calls that a wrong id or state kept from succeeding as not exercised, never as passed.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance, type CheckName, type ConformanceReport } from '../../scripts/conformance/conformanceRun.js';
import { runSourceFile } from '../support/serverProcess.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';

let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true });

const noWait = async () => undefined;
/** What the test app cannot do without GitHub (GITHUB_API_BASE_URL points where nothing listens). */
const NEEDS_GITHUB = ['connectConnector', 'importIssues'];
const RUN_TIMEOUT = 120_000;

const coverageOf = (report: ConformanceReport, operationId: string) => report.coverage.find((entry) => entry.operationId === operationId)!;

describe('against the real server', () => {
  let report: ConformanceReport;
  beforeAll(async () => {
    report = await runConformance({ baseUrl: t.app.url, token: fx.tokens.all, limitedToken: fx.tokens.noScopes, api: 'work-platform', allowUnexercised: NEEDS_GITHUB, sleep: noWait });
  }, RUN_TIMEOUT);

  it('finds no violation and exercises every operation but the two that need GitHub, which it names with the answer that stopped them', () => {
    expect(report.results.filter((result) => result.outcome === 'violation')).toEqual([]);
    expect(report.operations).toBeGreaterThan(50);
    expect(report.exercised).toBe(report.operations - 2);
    expect(report.coverage.filter((entry) => !entry.exercised).map((entry) => entry.operationId).sort()).toEqual(NEEDS_GITHUB);
    expect(coverageOf(report, 'connectConnector')).toMatchObject({ allowed: true, reason: expect.stringMatching(/→ 502 provider-unreachable: GitHub could not be reached/) });
    expect(coverageOf(report, 'importIssues').reason).toMatch(/→ 409 connector-not-connected.*connectConnector, which could bring a record into the state it needs, did not succeed either/);
    expect(report.ok).toBe(true);
    expect(report.unexercised).toEqual([]);
  });

  it('counts a call as passed only when it succeeded, and every other answer to a call meant to succeed as not exercised', () => {
    const calls = report.results.filter((result) => result.check === 'example-call' || result.check === 'setup' || result.check === 'cleanup');
    for (const result of calls) expect(result.outcome, `${result.request} ${result.status}`).toBe(result.status >= 200 && result.status < 300 ? 'passed' : 'not-exercised');
    // One example call per operation, each on the runner's own records: none answered 404.
    const exampleCalls = report.results.filter((result) => result.check === 'example-call');
    expect(exampleCalls).toHaveLength(report.operations);
    expect(exampleCalls.filter((result) => result.status === 404)).toEqual([]);
    // signContract answered 409 on a draft, then succeeded after sendContract on a fresh contract.
    const signCalls = report.results.filter((result) => result.operationId === 'signContract' && (result.check === 'example-call' || result.check === 'setup'));
    expect(signCalls[0]).toMatchObject({ status: 409, outcome: 'not-exercised', detail: expect.stringMatching(/^409 /) });
    expect(signCalls.at(-1)).toMatchObject({ status: 200, outcome: 'passed' });
    const signedPath = signCalls.at(-1)!.request.replace(/^POST /, '').replace(/\/sign$/, '');
    const before = report.results.slice(0, report.results.indexOf(signCalls.at(-1)!));
    expect(before.findLast((result) => result.request.startsWith(`POST ${signedPath}/`))).toMatchObject({ operationId: 'sendContract', check: 'setup', status: 200 });
    expect(coverageOf(report, 'signContract')).toMatchObject({ exercised: true, seenStatuses: expect.arrayContaining([200, 409]) });
  });

  it('acts on records it created: ids from the create answers, its own ids in the bodies that name records, and deletes them again', () => {
    const created = report.results.filter((result) => result.operationId === 'createTask' && result.check === 'example-call')[0]!;
    expect(created.status).toBe(201);
    const updateTask = report.results.find((result) => result.operationId === 'updateTask' && result.check === 'example-call')!;
    expect(updateTask.outcome).toBe('passed');
    expect(updateTask.request).not.toContain('tsk_cb2s0qa6P7MCQ5zVPMi1'); // the contract's example id
    expect(fx.taskIds.some((id) => updateTask.request.includes(id))).toBe(false);
    expect(report.cleanup.created).toBeGreaterThan(20);
    expect(report.cleanup.deleted).toBeGreaterThan(report.cleanup.created - 5);
  });

  it('reports the declared statuses seen, per operation and in all, and runs every kind of check', () => {
    for (const entry of report.coverage) {
      expect(entry.seenStatuses.every((status) => entry.declaredStatuses.includes(status))).toBe(true);
      if (entry.exercised) expect(entry.seenStatuses.some((status) => status >= 200 && status < 300)).toBe(true);
    }
    expect(coverageOf(report, 'createTask').seenStatuses).toEqual(expect.arrayContaining([201, 400, 401, 403, 422]));
    expect(report.statuses.seen).toBe(report.coverage.reduce((sum, entry) => sum + entry.seenStatuses.length, 0));
    expect(report.statuses.seen).toBeGreaterThan(200);
    expect(report.statuses.declared).toBeGreaterThan(report.statuses.seen);
    const kinds = new Set(report.results.map((result) => result.check));
    const every: CheckName[] = ['example-call', 'setup', 'cleanup', 'no-credential', 'bad-credential', 'insufficient-scope', 'method-not-allowed', 'malformed-parameter', 'malformed-body', 'deleted-resource'];
    expect([...kinds].sort()).toEqual([...every].sort());
  });

  it('fails the run when an operation it could not exercise is not named by --allow-unexercised', async () => {
    const portfolio = await runConformance({ baseUrl: t.app.url, token: t.fixture.portfolio.apiKey, api: 'portfolio', sleep: noWait });
    expect(portfolio).toMatchObject({ ok: true, violations: 0, unexercised: [] });
    expect(portfolio.exercised).toBe(portfolio.operations);
    // The portfolio cannot create its items: its slugs come from its lists.
    const bySlug = portfolio.results.find((result) => result.operationId === 'getPostsBySlug' && result.check === 'example-call')!;
    expect(bySlug).toMatchObject({ status: 200, outcome: 'passed' });
    // The same /v1 coverage without the allowance fails.
    await expect(runConformance({ baseUrl: t.app.url, token: fx.tokens.all, api: 'work-platform', allowUnexercised: ['noSuchOperation'], sleep: noWait })).rejects.toThrow(/names operations the work-platform contract does not have: noSuchOperation/);
  }, RUN_TIMEOUT);
});

describe('against a server that breaks its contract', () => {
  let proxy: Server;
  let proxyUrl: string;
  let report: ConformanceReport;
  beforeAll(async () => {
    const target = new URL(t.app.url);
    // Forwards everything to the real server, but breaks these answers:
    // - a POST /v1/tasks without a credential: a bare 500;
    // - a project read: status 418, which no operation declares;
    // - a task read: without `title`, a required member;
    // - a company read: `version` as a string, not an integer;
    // - a contact read: without its ETag header, which the contract requires;
    // and sends these calls so that they cannot succeed (the answers themselves are the server's, as declared):
    // - a webhook read: for an id that does not exist (404);
    // - a deal update: with If-Match "999", a version the deal does not have (409);
    // and closes the connection of a workspace limits read without answering.
    proxy = createServer((req, res) => {
      const url = req.url ?? '';
      if (req.method === 'GET' && url === '/v1/workspace/limits' && req.headers.authorization === `Bearer ${fx.tokens.all}`) {
        req.socket.destroy();
        return;
      }
      if (req.method === 'POST' && url === '/v1/tasks' && !req.headers.authorization) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('oops');
        return;
      }
      let path = url;
      const headers = { ...req.headers };
      if (req.method === 'GET' && /^\/v1\/webhooks\/whk_[A-Za-z0-9]+$/.test(url)) path = '/v1/webhooks/whk_doesNotExist0000000000';
      if (req.method === 'PATCH' && /^\/v1\/deals\/del_[A-Za-z0-9]+$/.test(url)) headers['if-match'] = '"999"';
      const upstream = httpRequest({ host: target.hostname, port: target.port, path, method: req.method, headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          let status = answer.statusCode ?? 502;
          const answerHeaders = { ...answer.headers };
          const read = req.method === 'GET' && status === 200;
          const change = (edit: (record: Record<string, unknown>) => void) => {
            const record = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
            edit(record);
            body = Buffer.from(JSON.stringify(record));
            answerHeaders['content-length'] = String(body.length);
          };
          if (read && /^\/v1\/projects\/prj_[A-Za-z0-9]+$/.test(url)) status = 418;
          if (read && /^\/v1\/tasks\/tsk_[A-Za-z0-9]+$/.test(url)) change((task) => delete task.title);
          if (read && /^\/v1\/companies\/cmp_[A-Za-z0-9]+$/.test(url)) change((company) => (company.version = String(company.version)));
          if (read && /^\/v1\/contacts\/ctc_[A-Za-z0-9]+$/.test(url)) delete answerHeaders.etag;
          res.writeHead(status, answerHeaders).end(body);
        });
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    report = await runConformance({ baseUrl: proxyUrl, token: fx.tokens.all, limitedToken: fx.tokens.noScopes, api: 'work-platform', allowUnexercised: NEEDS_GITHUB, sleep: noWait });
  }, RUN_TIMEOUT);
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  const violation = (check: CheckName, target: string) => report.results.find((result) => result.outcome === 'violation' && result.check === check && result.target === target);

  it('reports exactly the broken answers, and fails', () => {
    const violations = report.results.filter((result) => result.outcome === 'violation');
    expect(violations.map(({ check, target }) => `${check} ${target}`).sort()).toEqual([
      'example-call getCompany',
      'example-call getContact',
      'example-call getProject',
      'example-call getTask',
      'example-call getWorkspaceLimits',
      'no-credential createTask',
    ]);
    expect(report.ok).toBe(false);
  });

  it('reports an undeclared status', () => {
    expect(violation('example-call', 'getProject')!.detail).toMatch(/^418: getProject: status 418 is not declared/);
  });

  it('reports a body without a required member', () => {
    expect(violation('example-call', 'getTask')!.detail).toMatch(/^200: getTask 200: body\/title is required/);
  });

  it('reports a member of the wrong type', () => {
    expect(violation('example-call', 'getCompany')!.detail).toMatch(/^200: getCompany 200: body\/version must be an integer/);
  });

  it('reports a missing declared header', () => {
    expect(violation('example-call', 'getContact')!.detail).toMatch(/getContact 200: required header ETag is missing/);
  });

  it('reports a server error where the contract promises a refusal', () => {
    expect(violation('no-credential', 'createTask')!.detail).toMatch(/expected 401, got 500/);
  });

  it('reports a call that got no answer, and goes on', () => {
    expect(violation('example-call', 'getWorkspaceLimits')!).toMatchObject({ status: 0, detail: expect.stringMatching(/^no answer: fetch failed/) });
    expect(coverageOf(report, 'getWorkspaceLimits')).toMatchObject({ exercised: false, reason: expect.stringMatching(/→ no answer: fetch failed/) });
  });

  it('reports a 404 on an id and a 409 on a version as not exercised, never as passed, and fails the run for them', () => {
    const calls = (operationId: string) => report.results.filter((result) => result.operationId === operationId && ['example-call', 'setup'].includes(result.check));
    expect(calls('getWebhook').map(({ status, outcome }) => ({ status, outcome }))).toEqual([{ status: 404, outcome: 'not-exercised' }]);
    expect(calls('updateDeal').map(({ status, outcome }) => ({ status, outcome }))).toEqual([{ status: 409, outcome: 'not-exercised' }]);
    expect(coverageOf(report, 'getWebhook')).toMatchObject({ exercised: false, allowed: false, reason: expect.stringMatching(/→ 404 webhook-not-found/) });
    expect(coverageOf(report, 'updateDeal')).toMatchObject({ exercised: false, allowed: false, reason: expect.stringMatching(/→ 409 version-conflict/) });
    expect(report.unexercised.sort()).toEqual(['getProject', 'getWebhook', 'getWorkspaceLimits', 'updateDeal']);
    expect(report.exercised).toBe(report.operations - 6);
  });

  it('exits 1 from the command line, printing each violation and each operation not exercised; 0 on the real server; 2 on a usage error', async () => {
    const broken = await runSourceFile('scripts/conformance.ts', ['--base-url', proxyUrl, '--token', fx.tokens.all, '--limited-token', fx.tokens.noScopes, '--allow-unexercised', NEEDS_GITHUB.join(',')]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^Violations \(6\):$/m);
    expect(broken.stdout).toMatch(/✗ example-call getTask: GET \/v1\/tasks\/tsk_\w+: 200: getTask 200: body\/title is required/);
    expect(broken.stdout).toMatch(/✗ getWebhook: GET \/v1\/webhooks\/whk_\w+ → 404 webhook-not-found/);
    expect(broken.stdout).toMatch(/- connectConnector \(allowed by --allow-unexercised\): PUT/);
    expect(broken.stdout).toMatch(/^Operations exercised: \d+ of \d+ \(2 allowed not to be: /m);
    expect(broken.stdout).toMatch(/^Result: FAILED: 6 violations; 4 operations not exercised \(/m);
    const clean = await runSourceFile('scripts/conformance.ts', ['--base-url', t.app.url, '--token', t.fixture.portfolio.apiKey, '--api', 'portfolio', '--json']);
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ api: 'portfolio', violations: 0, ok: true });
    const usage = await runSourceFile('scripts/conformance.ts', ['--token', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--base-url and --token are required');
    const unknown = await runSourceFile('scripts/conformance.ts', ['--base-url', t.app.url, '--token', fx.tokens.all, '--allow-unexercised', 'connectConnector,noSuchOperation']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('names operations the work-platform contract does not have: noSuchOperation');
    const help = await runSourceFile('scripts/conformance.ts', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/An operation is exercised only when a call of it succeeded \(2xx\)/);
    expect(help.stdout).toContain('--allow-unexercised IDS');
  }, RUN_TIMEOUT);
});
