// Bodies and headers that two readers could read two ways are refused with 400, never guessed at.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../src/contract/jsonDuplicateKeys.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { loadContractDocument } from '../support/contractClient.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const tasksTitled = (title: string) => t.db.prepare('SELECT count(*) FROM tasks WHERE title = ?').pluck().get(title) as number;

function postTask(body: Buffer | string) {
  return t.workPlatformClient.request('POST', '/v1/tasks', {
    headers: { ...bearer(t.fixture.workPlatform.tokens.all), 'content-type': 'application/json' },
    body: body as string,
  });
}

/** A request with raw header lines, so that a header may be given twice. */
function rawGet(path: string, rawHeaders: string[]): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, t.app.url);
    const headers = ['Host', url.host, ...rawHeaders];
    const request = http.request(url, { method: 'GET', headers: headers as unknown as http.OutgoingHttpHeaders }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers as Record<string, string>, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('request bodies', () => {
  it('refuses a body that is not valid UTF-8 (400 invalid-utf8) and stores nothing', async () => {
    const title = 'Broken \xff bytes';
    const body = Buffer.concat([Buffer.from(`{"projectId":"${t.fixture.workPlatform.projectId}","title":"Broken `), Buffer.from([0xff, 0xfe]), Buffer.from(' bytes"}')]);
    expectProblem(await postTask(body), 400, 'bad-request', 'invalid-utf8');
    expect(tasksTitled(title)).toBe(0);
    expect(t.db.prepare("SELECT count(*) FROM tasks WHERE title LIKE '%\uFFFD%'").pluck().get()).toBe(0);
  });

  it('refuses a member given twice, at the top or deeper (400 duplicate-json-key), naming it', async () => {
    const projectId = t.fixture.workPlatform.projectId;
    const twice = await postTask(`{"projectId":"${projectId}","title":"First","title":"Second"}`);
    expect(expectProblem(twice, 400, 'bad-request', 'duplicate-json-key').detail).toContain('/title');
    expect(tasksTitled('First') + tasksTitled('Second')).toBe(0);
    expect((await postTask(`{"projectId":"${projectId}","title":"Unique title ok"}`)).status).toBe(201);
  });
});

describe('Authorization given twice', () => {
  it('answers 400 duplicate-authorization on /v1 and malformed_request on /api/v1, whichever token comes first', async () => {
    const good = `Bearer ${t.fixture.workPlatform.tokens.all}`;
    const workPlatform = await rawGet('/v1/tasks?limit=1', ['Authorization', good, 'Authorization', 'Bearer svc_pat_other']);
    expect(workPlatform.status).toBe(400);
    expect(workPlatform.body).toMatchObject({ status: 400, code: 'duplicate-authorization' });
    const portfolio = await rawGet('/api/v1/profile', ['authorization', `Bearer ${t.fixture.portfolio.apiKey}`, 'Authorization', `Bearer ${t.fixture.portfolio.apiKey}`]);
    expect(portfolio.status).toBe(400);
    expect(portfolio.body.error).toMatchObject({ code: 'malformed_request', status: 400 });
  });

  // The build adds 400 to every operation (x-conventions) because this is refused on every path, the public downloads too.
  it.each([
    ['work-platform', '/v1/openapi.json', 'getOpenapiJson'],
    ['work-platform', '/v1/tasks', 'listTasks'],
    ['portfolio', '/api/v1/openapi.json', 'getOpenapiJson'],
    ['portfolio', '/api/v1/profile', 'getProfile'],
  ])('answers it on %s %s with the 400 the contract declares for the operation', async (api, path, operationId) => {
    const answer = await rawGet(path, ['Authorization', 'Bearer one', 'Authorization', 'Bearer two']);
    expect(answer.status).toBe(400);
    expect(new ResponseContract(loadContractDocument(api)).check(operationId, answer)).toEqual([]);
  });
});

describe('firstDuplicateKey', () => {
  it.each([
    ['{"a":1,"b":2}', undefined],
    ['{"a":1,"a":2}', '/a'],
    ['{"a":{"b":1},"c":{"b":2}}', undefined],
    ['{"a":{"b":1,"b":2}}', '/a/b'],
    ['[{"x":1},{"x":2},{"y":1,"y":2}]', '/2/y'],
    ['{"list":[1,{"k":"v","k":"w"}]}', '/list/1/k'],
    ['{"a\\"b":1,"a\\"b":2}', '/a"b'],
    ['{"s":"{\\"a\\":1,\\"a\\":2}"}', undefined],
    ['{"a/b":1,"a/b":2}', '/a~1b'],
    ['{ "a" : 1 , "a" : 2 }', '/a'],
  ])('%s → %s', (text, expected) => {
    expect(firstDuplicateKey(text)).toBe(expected);
  });
});
