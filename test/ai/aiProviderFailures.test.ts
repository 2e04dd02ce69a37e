// How the AI routes answer when an OpenAI-compatible provider fails: a declared 502 or 504 problem
// that names neither the provider's address, nor its key, nor its own words (those go to the log,
// under the request id), and nothing charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../src/ai/openAiCompatibleProvider.js';
import type { ContractClient } from '../support/contractClient.js';
import { startOpenAiCompatibleServer, type ChatBehaviour, type OpenAiCompatibleServer } from '../support/openAiCompatibleServer.js';
import { type TestApp, startTestApp } from '../support/testApp.js';
import { bearer } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, liftCallLimits, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

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
  ({ t, client } = (await startTestApp({
    liftCallLimits: true,
    env: {
      AI_PROVIDER: 'openai-compatible',
      AI_BASE_URL: provider.baseUrl,
      AI_API_KEY: API_KEY,
      AI_MODEL: 'test-model-1',
      AI_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  })).workPlatform);
  workspace = await makeTestWorkspace(t.db, t.sessionSecret, { plan: 'pro' });
  await liftCallLimits(t.db, workspace.workspaceId);
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

type Charge = 'nothing' | 'reported usage' | 'bound';
/** Less than any call's bound, so that a charge at the reported usage is told apart from one at the bound. */
const SMALL_USAGE = { prompt_tokens: 40, completion_tokens: 10 };

/** What the ledger kept for a request: released (nothing), or settled at the provider's usage or at the reserved bound. */
function chargeOf(requestId: string): Charge {
  const entry = t.db
    .prepare('SELECT state, reserved_millicents AS reserved, actual_millicents AS actual, prompt_tokens AS promptTokens FROM ai_spend_entries WHERE request_id = ?')
    .get(requestId) as { state: string; reserved: number; actual: number | null; promptTokens: number | null };
  if (entry.state === 'released') return 'nothing';
  expect(entry.state).toBe('settled');
  if (entry.actual === entry.reserved) return 'bound';
  expect(entry.promptTokens).toBe(SMALL_USAGE.prompt_tokens);
  return 'reported usage';
}

/** The problem leaks nothing of the provider, its log lines name the request and the cause, and the call is charged what it may have cost. */
function expectContained(response: Awaited<ReturnType<typeof draft>>, logged: string | RegExp, charge: Charge): void {
  for (const secret of [API_KEY, provider.baseUrl, '127.0.0.1', PROVIDER_WORDS]) expect(response.text).not.toContain(secret);
  const lines = t.logLines.filter((line) => line.includes(response.body.requestId));
  expect(lines.some((line) => (typeof logged === 'string' ? line.includes(logged) : logged.test(line))), lines.join('\n')).toBe(true);
  expect(t.logLines.some((line) => line.includes(API_KEY))).toBe(false);
  expect(chargeOf(response.body.requestId)).toBe(charge);
}

describe('provider failures', () => {
  it('answers 504 ai-provider-timeout when the provider does not answer in time', async () => {
    provider.respondWith({ kind: 'hold' });
    const response = await draft();
    expectProblem(response, 504, 'ai-provider-timeout', 'provider-timeout');
    expectContained(response, `within ${TIMEOUT_MS} ms`, 'bound');
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
    expectContained(response, PROVIDER_WORDS, 'nothing');
  });

  it.each<[string, ChatBehaviour, string, Charge]>([
    ['a body that is not JSON', { kind: 'raw', body: `<html>${PROVIDER_WORDS}</html>` }, 'the answer is not JSON', 'bound'],
    ['a chat completion without usage', { kind: 'answer', usage: 'none' }, 'not a chat completion with usage', 'bound'],
    ['no choices', { kind: 'raw', body: '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}' }, 'not a chat completion with usage', 'bound'],
    ['a message that is not JSON', { kind: 'answer', content: `Sure! Here are your tasks: ${PROVIDER_WORDS}`, usage: SMALL_USAGE }, 'not JSON', 'reported usage'],
    ['JSON of another shape', { kind: 'answer', content: '{"drafts":"call the printer"}', usage: SMALL_USAGE }, 'does not match its schema', 'reported usage'],
    ['a priority outside the enum', { kind: 'answer', content: '{"drafts":[{"title":"x","priority":"URGENT","dueOn":null}]}', usage: SMALL_USAGE }, 'does not match its schema', 'reported usage'],
    ['a title over 200 characters', { kind: 'answer', content: JSON.stringify({ drafts: [{ title: 'x'.repeat(201), priority: 'LOW', dueOn: null }] }), usage: SMALL_USAGE }, 'does not match its schema', 'reported usage'],
    ['an answer over 64 KiB', { kind: 'oversized', bytes: MAX_ANSWER_BYTES }, `over ${MAX_ANSWER_BYTES} bytes`, 'bound'],
  ])('answers 502 ai-provider-error (provider-malformed-answer) for %s, charged at the %s', async (_case, behaviour, logged, charge) => {
    provider.respondWith(behaviour);
    const response = await draft();
    expectProblem(response, 502, 'ai-provider-error', 'provider-malformed-answer');
    expectContained(response, logged, charge);
  });

  it('answers 502 provider-malformed-answer for a summary of another shape too', async () => {
    provider.respondWith({ kind: 'answer', content: '{"summary":"","highlights":[]}', usage: SMALL_USAGE });
    const response = await summarize();
    expectProblem(response, 502, 'ai-provider-error', 'provider-malformed-answer');
    expectContained(response, 'does not match its schema', 'reported usage');
  });

  it('answers 502 ai-provider-error (provider-unreachable) when the connection is cut', async () => {
    provider.respondWith({ kind: 'reset' });
    const response = await draft();
    expectProblem(response, 502, 'ai-provider-error', 'provider-unreachable');
    expectContained(response, 'could not be reached', 'nothing');
  });

  it('charges a call whose provider reports more usage than it could use at the bound, and logs it', async () => {
    provider.respondWith({ kind: 'answer', usage: { prompt_tokens: 50_000_000, completion_tokens: 50_000_000 } });
    const response = await draft();
    const body = expectSuccess(response, 200);
    expect(chargeOf(response.headers['x-request-id']!)).toBe('bound');
    const entry = t.db.prepare('SELECT reserved_millicents AS reserved FROM ai_spend_entries WHERE request_id = ?').get(response.headers['x-request-id']) as { reserved: number };
    expect(body.usage.costCents).toBe(entry.reserved / 1000);
    expect(t.logLines.some((line) => line.includes(response.headers['x-request-id']!) && line.includes('more usage than the call could use'))).toBe(true);
    provider.respondWith({ kind: 'answer' });
  });

  it('accepts a JSON answer in a Markdown code fence, and works again once the provider does', async () => {
    provider.respondWith({ kind: 'answer', content: '```json\n{"drafts":[{"title":"Call the printer","priority":"MEDIUM","dueOn":null}]}\n```' });
    const usedBefore = expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200).aiDailySpendCapCents.usedTodayCents;
    const body = expectSuccess(await draft(), 200);
    expect(body.drafts).toEqual([{ title: 'Call the printer', priority: 'MEDIUM', dueOn: null }]);
    const limits = expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.pat)), 200);
    expect(limits.aiDailySpendCapCents.usedTodayCents - usedBefore).toBeCloseTo(body.usage.costCents, 3);
  });
});
