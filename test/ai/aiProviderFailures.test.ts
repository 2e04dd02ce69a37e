// How the AI routes answer when an OpenAI-compatible provider fails: a declared 502 or 504 problem
// that names neither the provider's address, nor its key, nor its own words (those go to the log,
// under the request id), and nothing charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../src/ai/openAiCompatibleProvider.js';
import type { ContractClient } from '../support/contractClient.js';
import { startOpenAiCompatibleServer, type ChatBehaviour, type OpenAiCompatibleServer } from '../support/openAiCompatibleServer.js';
import type { TestApp } from '../support/testApp.js';
import { bearer } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, liftCallLimits, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';
import { startWorkPlatformTestApp } from '../support/workPlatformApp.js';

const API_KEY = 'sk-test-never-shown-8d2e';
const PROVIDER_WORDS = 'upstream exploded: internal-trace-7731';
// Short, so that the timeout case takes a second of real time (the provider is real, and so is its silence).
const TIMEOUT_MS = 1000;

let provider: OpenAiCompatibleServer;
let t: TestApp;
let client: ContractClient;
let workspace: TestWorkspace;

beforeAll(async () => {
  provider = await startOpenAiCompatibleServer();
  ({ t, client } = await startWorkPlatformTestApp({
    env: {
      AI_PROVIDER: 'openai-compatible',
      AI_BASE_URL: provider.baseUrl,
      AI_API_KEY: API_KEY,
      AI_MODEL: 'test-model-1',
      AI_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  }));
  workspace = makeTestWorkspace(t.db, t.sessionSecret, { plan: 'pro' });
  liftCallLimits(t.db, workspace.workspaceId);
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

const draft = () =>
  client.request('POST', '/v1/ai/task-drafts', {
    headers: jsonHeaders(workspace.pat),
    body: JSON.stringify({ projectId: workspace.projectId, text: 'Call the printer' }),
  });
const summarize = () =>
  client.request('POST', '/v1/ai/project-summaries', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId }) });

const openOrSettled = () =>
  (t.db.prepare("SELECT count(*) AS count FROM ai_spend_entries WHERE workspace_id = ? AND state != 'released'").get(workspace.workspaceId) as { count: number }).count;

/** The problem leaks nothing of the provider, its log lines name the request and the cause, and nothing stays charged. */
function expectContained(response: Awaited<ReturnType<typeof draft>>, logged: string | RegExp): void {
  for (const secret of [API_KEY, provider.baseUrl, '127.0.0.1', PROVIDER_WORDS]) expect(response.text).not.toContain(secret);
  const lines = t.logLines.filter((line) => line.includes(response.body.requestId));
  expect(lines.some((line) => (typeof logged === 'string' ? line.includes(logged) : logged.test(line))), lines.join('\n')).toBe(true);
  expect(t.logLines.some((line) => line.includes(API_KEY))).toBe(false);
  expect(openOrSettled()).toBe(0);
}

describe('provider failures', () => {
  it('answers 504 ai-provider-timeout when the provider does not answer in time', async () => {
    provider.respondWith({ kind: 'hold' });
    const response = await draft();
    expectProblem(response, 504, 'ai-provider-timeout', 'provider-timeout');
    expectContained(response, `within ${TIMEOUT_MS} ms`);
    provider.respondWith({ kind: 'answer' });
    provider.releaseHeld();
  });

  it.each<[string, ChatBehaviour]>([
    ['500', { kind: 'status', status: 500, body: `{"error":{"message":"${PROVIDER_WORDS}"}}` }],
    ['429', { kind: 'status', status: 429, body: `{"error":{"message":"${PROVIDER_WORDS}"}}` }],
    ['401 (a wrong key)', { kind: 'status', status: 401, body: `{"error":{"message":"${PROVIDER_WORDS}"}}` }],
  ])('answers 502 ai-provider-error (provider-status) when the provider answers %s', async (_status, behaviour) => {
    provider.respondWith(behaviour);
    const response = await draft();
    expectProblem(response, 502, 'ai-provider-error', 'provider-status');
    expectContained(response, PROVIDER_WORDS);
  });

  it.each<[string, ChatBehaviour, string]>([
    ['a body that is not JSON', { kind: 'raw', body: `<html>${PROVIDER_WORDS}</html>` }, 'the answer is not JSON'],
    ['a chat completion without usage', { kind: 'answer', usage: 'none' }, 'not a chat completion with usage'],
    ['no choices', { kind: 'raw', body: '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}' }, 'not a chat completion with usage'],
    ['a message that is not JSON', { kind: 'answer', content: `Sure! Here are your tasks: ${PROVIDER_WORDS}` }, 'not JSON'],
    ['JSON of another shape', { kind: 'answer', content: '{"drafts":"call the printer"}' }, 'does not match its schema'],
    ['a priority outside the enum', { kind: 'answer', content: '{"drafts":[{"title":"x","priority":"URGENT","dueOn":null}]}' }, 'does not match its schema'],
    ['a title over 200 characters', { kind: 'answer', content: JSON.stringify({ drafts: [{ title: 'x'.repeat(201), priority: 'LOW', dueOn: null }] }) }, 'does not match its schema'],
    ['an answer over 64 KiB', { kind: 'oversized', bytes: MAX_ANSWER_BYTES }, `over ${MAX_ANSWER_BYTES} bytes`],
  ])('answers 502 ai-provider-error (provider-malformed-answer) for %s', async (_case, behaviour, logged) => {
    provider.respondWith(behaviour);
    const response = await draft();
    expectProblem(response, 502, 'ai-provider-error', 'provider-malformed-answer');
    expectContained(response, logged);
  });

  it('answers 502 provider-malformed-answer for a summary of another shape too', async () => {
    provider.respondWith({ kind: 'answer', content: '{"summary":"","highlights":[]}' });
    const response = await summarize();
    expectProblem(response, 502, 'ai-provider-error', 'provider-malformed-answer');
    expectContained(response, 'does not match its schema');
  });

  it('answers 502 ai-provider-error (provider-unreachable) when the connection is cut', async () => {
    provider.respondWith({ kind: 'reset' });
    const response = await draft();
    expectProblem(response, 502, 'ai-provider-error', 'provider-unreachable');
    expectContained(response, 'could not be reached');
  });

  it('accepts a JSON answer in a Markdown code fence, and works again once the provider does', async () => {
    provider.respondWith({ kind: 'answer', content: '```json\n{"drafts":[{"title":"Call the printer","priority":"MEDIUM","dueOn":null}]}\n```' });
    const body = expectSuccess(await draft(), 200);
    expect(body.drafts).toEqual([{ title: 'Call the printer', priority: 'MEDIUM', dueOn: null }]);
    const limits = expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200);
    // Only this call was charged: every failure before it cost nothing.
    expect(limits.aiDailySpendCapCents.usedTodayCents).toBe(body.usage.costCents);
  });
});
