// The conformance runner (npm run conformance) against the real server, where every check must
// pass, and against the same server behind a proxy that breaks two answers, where it must say so.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance, type CheckName } from '../../scripts/conformance/conformanceRun.js';
import { runSourceFile } from '../support/serverProcess.js';
import type { TestApp } from '../support/testApp.js';
import { useWorkPlatformTestApp, type WorkPlatformFixture } from '../support/workPlatformApp.js';

let t: TestApp;
let fx: WorkPlatformFixture;
useWorkPlatformTestApp((app) => ({ t, fx } = app));

const noWait = async () => undefined;

describe('against the real server', () => {
  it('finds no violation of the work-platform contract, and runs every kind of check', async () => {
    const report = await runConformance({ baseUrl: t.app.url, token: fx.tokens.all, limitedToken: fx.tokens.noScopes, api: 'work-platform', sleep: noWait });
    expect(report.results.filter((result) => result.outcome !== 'passed')).toEqual([]);
    const kinds = new Set(report.results.map((result) => result.check));
    const every: CheckName[] = ['example-call', 'no-credential', 'bad-credential', 'insufficient-scope', 'method-not-allowed', 'malformed-parameter', 'malformed-body', 'deleted-resource'];
    expect([...kinds].sort()).toEqual([...every].sort());
    expect(report.results.filter((result) => result.check === 'example-call')).toHaveLength(report.operations);
    expect(report.operations).toBeGreaterThan(50);
  });

  it('finds no violation of the portfolio contract, and reports the 403 checks as skipped without a limited token', async () => {
    const report = await runConformance({ baseUrl: t.app.url, token: t.fixture.portfolio.apiKey, api: 'portfolio', sleep: noWait });
    expect(report.violations).toBe(0);
    expect(report.passed).toBeGreaterThan(40);
    const workPlatform = await runConformance({ baseUrl: t.app.url, token: fx.tokens.all, api: 'work-platform', sleep: noWait });
    expect(workPlatform.skipped).toBeGreaterThan(0);
    expect(workPlatform.results.filter((result) => result.outcome === 'skipped').every((result) => result.check === 'insufficient-scope')).toBe(true);
  });
});

describe('against a server that breaks its contract', () => {
  let proxy: Server;
  let proxyUrl: string;
  beforeAll(async () => {
    const target = new URL(t.app.url);
    // Forwards everything, but drops `title` from a task it reads and answers a POST without a credential with a bare 500.
    proxy = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/v1/tasks' && !req.headers.authorization) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('oops');
        return;
      }
      const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          const headers = { ...answer.headers };
          if (req.method === 'GET' && /^\/v1\/tasks\/tsk_[A-Za-z0-9]+$/.test(req.url ?? '') && answer.statusCode === 200) {
            const task = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
            delete task.title;
            body = Buffer.from(JSON.stringify(task));
            headers['content-length'] = String(body.length);
          }
          res.writeHead(answer.statusCode ?? 502, headers).end(body);
        });
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it('reports each broken answer with its check, operation and what the contract says', async () => {
    const report = await runConformance({ baseUrl: proxyUrl, token: fx.tokens.all, limitedToken: fx.tokens.noScopes, api: 'work-platform', sleep: noWait });
    const violations = report.results.filter((result) => result.outcome === 'violation');
    expect(violations.map(({ check, target }) => `${check} ${target}`).sort()).toEqual(['example-call getTask', 'no-credential createTask']);
    expect(violations.find((result) => result.target === 'getTask')!.detail).toContain('title');
    expect(violations.find((result) => result.target === 'createTask')!.detail).toMatch(/expected 401, got 500/);
  });

  it('exits 1 from the command line, printing the violations; 0 and a summary on the real server; 2 on a usage error', async () => {
    const broken = await runSourceFile('scripts/conformance.ts', ['--base-url', proxyUrl, '--token', fx.tokens.all, '--limited-token', fx.tokens.noScopes]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/✗ example-call getTask: GET \/v1\/tasks\/tsk_/);
    expect(broken.stdout).toMatch(/, 2 violations, 0 skipped/);
    const clean = await runSourceFile('scripts/conformance.ts', ['--base-url', t.app.url, '--token', t.fixture.portfolio.apiKey, '--api', 'portfolio', '--json']);
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ api: 'portfolio', violations: 0 });
    const usage = await runSourceFile('scripts/conformance.ts', ['--token', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--base-url and --token are required');
  });
});
