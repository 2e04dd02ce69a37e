import { describe, expect, it } from 'vitest';
import { connectorCalls, databaseBytes, useConnectorTestApp, type ConnectorTestApp } from '../support/connectors.js';
import { makeIssues, type FakeIssue } from '../support/githubApiServer.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: ConnectorTestApp;
useConnectorTestApp((started) => (app = started));
const calls = connectorCalls(() => app);

let tokenCounter = 0;
const newToken = () => `ghp_test${String(++tokenCounter).padStart(4, '0')}${'x'.repeat(30)}`;
let repositoryCounter = 0;
/** A repository of the local GitHub with these items, under a name no other test uses. */
function repository(items: FakeIssue[]): string {
  const name = `acme/repo-${++repositoryCounter}`;
  app.github.setRepository(name, items);
  return name;
}
const tasksOf = (projectId: string) => app.t.sql.rows<{ id: string; title: string; status: string }>('SELECT id, title, status FROM tasks WHERE project_id = ? ORDER BY title', projectId);
async function newProject(): Promise<string> {
  return expectSuccess(await calls.send('POST', '/v1/projects', { name: `Import ${++repositoryCounter}` }), 201).id;
}
const connectorRow = async (id: string) => (await app.t.sql.row<{ status: string; sealed: string | null }>('SELECT status, sealed_credential AS sealed FROM connectors WHERE id = ?', id))!;

describe('POST /v1/connectors/{connectorId}/issue-imports', () => {
  it("imports every open issue across Link-header pages as tasks, skips pull requests, and calls GitHub's REST API as documented", async () => {
    const token = newToken();
    const connector = await calls.connected(token);
    const items = makeIssues(250).map((item, index) => (index % 5 === 4 ? { ...item, pull_request: { url: 'https://example.test/pr' } } : item));
    const repo = repository(items);
    const projectId = await newProject();
    const before = app.github.requests.length;

    const body = expectSuccess(await calls.importIssues(connector.id, { repository: repo, projectId }), 200);
    expect(body).toEqual({
      connectorId: connector.id, repository: repo, projectId, state: 'open',
      issuesRead: 200, created: 200, updated: 0, unchanged: 0, skipped: 0, pullRequestsSkipped: 50, truncated: false, maxIssues: 500,
    });
    const pages = app.github.requests.slice(before);
    expect(pages.map((request) => request.path)).toEqual(Array(3).fill(`/repos/${repo}/issues`));
    expect(pages.map((request) => request.query.get('page'))).toEqual([null, '2', '3']);
    for (const request of pages) {
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
      expect(request.headers.accept).toBe('application/vnd.github+json');
      expect(request.headers['x-github-api-version']).toBe('2022-11-28');
      expect(request.query.get('state')).toBe('open');
      expect(request.query.get('per_page')).toBe('100');
    }
    const tasks = await tasksOf(projectId);
    expect(tasks).toHaveLength(200);
    expect(tasks.every((task) => task.status === 'TODO')).toBe(true);
    expect(tasks.map((task) => task.title)).not.toContain('Issue 5');
    expect((await eventsAbout(app.t.store, tasks[0]!.id)).map((event) => event.type)).toEqual(['task.created']);
  });

  it('never duplicates on re-import: only issues changed on GitHub since change their task, deleted tasks are not made again', async () => {
    const connector = await calls.connected(newToken());
    const items = makeIssues(4);
    const repo = repository(items);
    const projectId = await newProject();
    expectSuccess(await calls.importIssues(connector.id, { repository: repo, projectId, state: 'all' }), 200);
    const [one, two, three, four] = await tasksOf(projectId);
    // Changed here: a title edited locally stays while its issue is unchanged on GitHub.
    expectSuccess(await calls.send('PATCH', `/v1/tasks/${one!.id}`, { title: 'Renamed here' }, undefined, { 'if-match': '1' }), 200);
    expectSuccess(await calls.send('DELETE', `/v1/tasks/${four!.id}`), 204);
    app.github.setRepository(repo, [{ ...items[0]! }, { ...items[1]!, title: 'Renamed on GitHub' }, { ...items[2]!, state: 'closed' }, { ...items[3]! }, ...makeIssues(1, { title: () => 'Brand new' })]);

    const body = expectSuccess(await calls.importIssues(connector.id, { repository: repo, projectId, state: 'all' }), 200);
    expect(body).toMatchObject({ issuesRead: 5, created: 1, updated: 2, unchanged: 1, skipped: 1 });
    const byId = new Map((await tasksOf(projectId)).map((task) => [task.id, task]));
    expect(byId.size).toBe(4);
    expect(byId.get(one!.id)?.title).toBe('Renamed here');
    expect(byId.get(two!.id)?.title).toBe('Renamed on GitHub');
    expect(byId.get(three!.id)?.status).toBe('DONE');
    expect(byId.has(four!.id)).toBe(false);
    expect((await eventsAbout(app.t.store, three!.id)).map((event) => event.type)).toEqual(['task.created', 'task.updated', 'task.completed']);

    // A third import with nothing changed changes nothing.
    expect(expectSuccess(await calls.importIssues(connector.id, { repository: repo, projectId, state: 'all' }), 200)).toMatchObject({ created: 0, updated: 0, unchanged: 4, skipped: 1 });
  });

  it('imports closed issues as DONE with state all, and reads at most 500 items, saying the list was truncated', async () => {
    const connector = await calls.connected(newToken());
    const repo = repository([...makeIssues(2, { state: 'closed' }), ...makeIssues(598)]);
    const projectId = await newProject();
    const before = app.github.requests.length;
    const body = expectSuccess(await calls.importIssues(connector.id, { repository: repo, projectId, state: 'all' }), 200);
    expect(body).toMatchObject({ issuesRead: 500, created: 500, truncated: true, maxIssues: 500 });
    expect(app.github.requests.length - before).toBe(5);
    expect((await tasksOf(projectId)).filter((task) => task.status === 'DONE')).toHaveLength(2);
  });

  it('answers 409 connector-not-connected, naming the connector, for a disconnected or never connected connector, and calls nothing', async () => {
    const before = app.github.requests.length;
    const body = { repository: 'acme/anything', projectId: app.fx.projectId };
    const disconnected = expectProblem(await calls.importIssues(app.fx.connectors.disconnected, body), 409, 'conflict', 'connector-not-connected');
    expect(disconnected.connectorId).toBe(app.fx.connectors.disconnected);
    const fresh = expectSuccess(await calls.create({ kind: 'github', name: 'Never connected' }), 201);
    expect(expectProblem(await calls.importIssues(fresh.id, body), 409, 'conflict', 'connector-not-connected').connectorId).toBe(fresh.id);
    expect(app.github.requests.length).toBe(before);
  });

  it('answers 409 connector-reconnect-required when the stored expiry has passed, marks the connector expired and records connector.expired', async () => {
    const demoExpired = expectProblem(await calls.importIssues(app.fx.connectors.expired, { repository: 'acme/anything', projectId: app.fx.projectId }), 409, 'conflict', 'connector-reconnect-required');
    expect(demoExpired.connectorId).toBe(app.fx.connectors.expired);

    const created = expectSuccess(await calls.create({ kind: 'github', name: 'Short-lived' }), 201);
    const expiresAt = new Date(app.clock.now + 60_000).toISOString();
    const connected = expectSuccess(await calls.connect(created.id, { token: newToken(), expiresAt }), 200);
    expect(connected).toMatchObject({ status: 'connected', credentialExpiresAt: expiresAt });
    const repo = repository(makeIssues(1));
    const projectId = await newProject();
    app.clock.now += 120_000;
    try {
      expect(expectSuccess(await calls.get(created.id), 200)).toMatchObject({ status: 'expired', expiredAt: expiresAt });
      const before = app.github.requests.length;
      const problem = expectProblem(await calls.importIssues(created.id, { repository: repo, projectId }), 409, 'conflict', 'connector-reconnect-required');
      expect(problem.connectorId).toBe(created.id);
      expect(app.github.requests.length).toBe(before);
      expect(await connectorRow(created.id)).toEqual({ status: 'expired', sealed: null });
      expect((await eventsAbout(app.t.store, created.id)).map((event) => event.type)).toEqual(['connector.created', 'connector.connected', 'connector.expired']);
      expect(await tasksOf(projectId)).toEqual([]);
    } finally {
      app.clock.now -= 120_000;
    }
  });

  it('answers 409 connector-reconnect-required when GitHub refuses the token (401), and the connector becomes expired', async () => {
    const token = newToken();
    const connector = await calls.connected(token);
    app.github.revokeToken(token);
    const repo = repository(makeIssues(3));
    const projectId = await newProject();
    const problem = expectProblem(await calls.importIssues(connector.id, { repository: repo, projectId }), 409, 'conflict', 'connector-reconnect-required');
    expect(problem.connectorId).toBe(connector.id);
    expect(expectSuccess(await calls.get(connector.id), 200)).toMatchObject({ status: 'expired' });
    expect((await connectorRow(connector.id)).sealed).toBeNull();
    expect(await tasksOf(projectId)).toEqual([]);
    // Once expired it answers at once, without asking GitHub.
    const before = app.github.requests.length;
    expectProblem(await calls.importIssues(connector.id, { repository: repo, projectId }), 409, 'conflict', 'connector-reconnect-required');
    expect(app.github.requests.length).toBe(before);
  });

  it('answers 502 or 504 to other GitHub failures without its words, its address or the token, and writes nothing', async () => {
    const token = newToken();
    const connector = await calls.connected(token);
    const repo = repository(makeIssues(150));
    const projectId = await newProject();
    const cases = [
      [{ kind: 'status', status: 500, body: '{"message":"upstream secret words"}' }, 502, 'connector-provider-error', 'provider-status'],
      [{ kind: 'status', status: 403, body: '{"message":"API rate limit exceeded"}' }, 502, 'connector-provider-error', 'provider-status'],
      [{ kind: 'raw', body: 'not json at all' }, 502, 'connector-provider-error', 'provider-malformed-answer'],
      [{ kind: 'next-link-elsewhere' }, 502, 'connector-provider-error', 'provider-malformed-answer'],
      [{ kind: 'hold' }, 504, 'connector-provider-timeout', 'provider-timeout'],
    ] as const;
    try {
      for (const [behaviour, status, slug, code] of cases) {
        app.github.respondWith(behaviour);
        const response = await calls.importIssues(connector.id, { repository: repo, projectId });
        const problem = expectProblem(response, status, slug, code);
        expect(problem.connectorId).toBe(connector.id);
        for (const secret of [token, app.github.baseUrl, '127.0.0.1', 'upstream secret words', 'rate limit exceeded', 'elsewhere.example']) expect(response.text).not.toContain(secret);
      }
    } finally {
      app.github.respondWith({ kind: 'normal' });
    }
    expect(await tasksOf(projectId)).toEqual([]);
    expect(expectSuccess(await calls.get(connector.id), 200).status).toBe('connected');
    expect(app.t.logLines.join('\n')).not.toContain(token);
  });

  it('answers 404 repository-not-found for a repository GitHub does not show, and 404 project-not-found for a project of another workspace', async () => {
    const connector = await calls.connected(newToken());
    expectProblem(await calls.importIssues(connector.id, { repository: 'acme/missing', projectId: app.fx.projectId }), 404, 'not-found', 'repository-not-found');
    expectProblem(await calls.importIssues(connector.id, { repository: 'acme/missing', projectId: app.fx.otherWorkspace.projectId }), 404, 'not-found', 'project-not-found');
    expectProblem(await calls.importIssues('con_ZZZZZZZZZZZZZZZZZZZZ', { repository: 'acme/missing', projectId: app.fx.projectId }), 404, 'not-found', 'connector-not-found');
  });

  it('answers 404 repository-not-found to `.` and `..` without sending the token anywhere (they would walk the URL out of /repos)', async () => {
    const connector = await calls.connected(newToken());
    const before = app.github.requests.length;
    for (const repository of ['../..', '../issues', 'acme/..', './x', 'acme/.']) {
      expectProblem(await calls.importIssues(connector.id, { repository, projectId: app.fx.projectId }), 404, 'not-found', 'repository-not-found');
    }
    expect(app.github.requests.length).toBe(before);
  });

  it('replays an import with the same Idempotency-Key without asking GitHub again', async () => {
    const connector = await calls.connected(newToken());
    const repo = repository(makeIssues(2));
    const projectId = await newProject();
    const first = await calls.importIssues(connector.id, { repository: repo, projectId }, undefined, { 'idempotency-key': `import-${repo}` });
    expectSuccess(first, 200);
    const before = app.github.requests.length;
    const again = await calls.importIssues(connector.id, { repository: repo, projectId }, undefined, { 'idempotency-key': `import-${repo}` });
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(app.github.requests.length).toBe(before);
  });

  it('never stores the raw token: the SQLite file and its WAL hold it only sealed', async () => {
    const token = `ghp_${'Q'.repeat(20)}rawTokenNeverStored`;
    const connector = await calls.connected(token);
    expectSuccess(await calls.importIssues(connector.id, { repository: repository(makeIssues(1)), projectId: await newProject() }), 200);
    const bytes = databaseBytes(app.t.dataDir);
    expect(bytes.includes(Buffer.from(token, 'utf8'))).toBe(false);
    expect(bytes.includes(Buffer.from('rawTokenNeverStored', 'utf8'))).toBe(false);
    expect(bytes.includes(Buffer.from(token, 'utf16le'))).toBe(false);
    expect((await connectorRow(connector.id)).sealed).toMatch(/^v2\.k0\./);
  });
});
