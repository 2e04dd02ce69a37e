// Malformed requests to the token, introspection and revocation endpoints: each answers the
// RFC's own JSON error body (RFC 6749 §5.2, RFC 7009, RFC 7662) with a 4xx, never a 500 and never
// an HTML page, whatever the client accepts; nothing reaches the server-error log.
import { beforeAll, describe, expect, it } from 'vitest';
import { registerTestClient, type RegisteredClient } from '../support/oauth.js';
import { useTestApp, type TestApp } from '../support/testApp.js';
import { makeTestWorkspace } from '../support/workPlatform.js';

let t: TestApp;
let publicClient: RegisteredClient;
let confidentialClient: RegisteredClient;

useTestApp((app) => {
  t = app;
});

beforeAll(async () => {
  const ws = await makeTestWorkspace(t.db, t.sessionSecret);
  publicClient = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read'] });
  confidentialClient = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read'], confidential: true });
});

const FORM = 'application/x-www-form-urlencoded';
const RFC_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'];

interface Case {
  name: string;
  path?: string;
  method?: string;
  headers?: () => Record<string, string>;
  body?: () => string | undefined;
  status: number;
  error: string;
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const publicForm = (fields: Record<string, string>) => form({ client_id: publicClient.id, ...fields });

const cases: Case[] = [
  { name: 'a JSON body', headers: () => ({ 'content-type': 'application/json' }), body: () => JSON.stringify({ grant_type: 'authorization_code', client_id: publicClient.id }), status: 400, error: 'invalid_request' },
  { name: 'no body and no content type', status: 400, error: 'invalid_request' },
  { name: 'no grant_type', body: () => publicForm({}), status: 400, error: 'invalid_request' },
  { name: 'an unsupported grant_type (password)', body: () => publicForm({ grant_type: 'password', username: 'a', password: 'b' }), status: 400, error: 'unsupported_grant_type' },
  { name: 'the client_credentials grant', body: () => publicForm({ grant_type: 'client_credentials' }), status: 400, error: 'unsupported_grant_type' },
  { name: 'grant_type given twice', body: () => `${publicForm({ grant_type: 'refresh_token', refresh_token: 'x' })}&grant_type=refresh_token`, status: 400, error: 'invalid_request' },
  { name: 'an unknown client', body: () => form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'ocl_doesNotExist00000000' }), status: 401, error: 'invalid_client' },
  { name: 'a Basic header that is not base64 of id:secret', headers: () => ({ authorization: 'Basic %%%' }), body: () => form({ grant_type: 'refresh_token', refresh_token: 'x' }), status: 400, error: 'invalid_request' },
  { name: 'a wrong client secret', headers: () => ({ authorization: basic(confidentialClient.id, `svc_ocs_${'A'.repeat(43)}`) }), body: () => form({ grant_type: 'refresh_token', refresh_token: 'x' }), status: 401, error: 'invalid_client' },
  { name: 'a confidential client without its secret', body: () => form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: confidentialClient.id }), status: 401, error: 'invalid_client' },
  { name: 'two client authentication methods at once', headers: () => ({ authorization: basic(confidentialClient.id, confidentialClient.secret!) }), body: () => form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: confidentialClient.id, client_secret: confidentialClient.secret! }), status: 400, error: 'invalid_request' },
  { name: 'a code that was never issued', body: () => publicForm({ grant_type: 'authorization_code', code: 'A'.repeat(43), redirect_uri: 'http://127.0.0.1:8976/callback', code_verifier: 'v'.repeat(43) }), status: 400, error: 'invalid_grant' },
  { name: 'a code exchange without code', body: () => publicForm({ grant_type: 'authorization_code', redirect_uri: 'http://127.0.0.1:8976/callback', code_verifier: 'v'.repeat(43) }), status: 400, error: 'invalid_request' },
  { name: 'a code exchange with a malformed code_verifier', body: () => publicForm({ grant_type: 'authorization_code', code: 'A'.repeat(43), redirect_uri: 'http://127.0.0.1:8976/callback', code_verifier: 'short' }), status: 400, error: 'invalid_grant' },
  { name: 'a refresh token that was never issued', body: () => publicForm({ grant_type: 'refresh_token', refresh_token: 'R'.repeat(43) }), status: 400, error: 'invalid_grant' },
  { name: 'an empty refresh token', body: () => publicForm({ grant_type: 'refresh_token', refresh_token: '' }), status: 400, error: 'invalid_request' },
  { name: 'broken percent-encoding', body: () => `client_id=${publicClient.id}&grant_type=refresh_token&refresh_token=%zz`, status: 400, error: 'invalid_grant' },
  { name: 'a 60 KiB body', body: () => publicForm({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(60 * 1024) }), status: 400, error: 'invalid_request' },
  { name: 'Accept: text/html (still JSON)', headers: () => ({ accept: 'text/html' }), body: () => publicForm({ grant_type: 'refresh_token', refresh_token: 'R'.repeat(43) }), status: 400, error: 'invalid_grant' },
  { name: 'GET instead of POST', method: 'GET', status: 404, error: 'invalid_request' },
  { name: 'a path the server does not have', path: '/oauth/nothing-here', status: 404, error: 'invalid_request' },
  { name: 'introspection without a token', path: '/oauth/introspect', headers: () => ({ authorization: basic(confidentialClient.id, confidentialClient.secret!) }), body: () => '', status: 400, error: 'invalid_request' },
  { name: 'introspection by an unknown client', path: '/oauth/introspect', body: () => form({ token: 'x', client_id: 'ocl_doesNotExist00000000' }), status: 401, error: 'invalid_client' },
  { name: 'revocation without a token', path: '/oauth/revoke', body: () => publicForm({}), status: 400, error: 'invalid_request' },
  { name: 'revocation with a JSON body', path: '/oauth/revoke', headers: () => ({ 'content-type': 'application/json' }), body: () => JSON.stringify({ token: 'x', client_id: publicClient.id }), status: 400, error: 'invalid_request' },
];

describe('malformed requests to the token endpoints answer the RFC error bodies', () => {
  it.each(cases)('$name → $status $error', async (testCase) => {
    const body = testCase.body?.();
    const headers: Record<string, string> = { ...(body !== undefined && body !== '' ? { 'content-type': FORM } : {}), ...testCase.headers?.() };
    if (testCase.path === '/oauth/introspect' && body === '') headers['content-type'] = FORM;
    const response = await fetch(`${t.app.url}${testCase.path ?? '/oauth/token'}`, { method: testCase.method ?? 'POST', headers, body: testCase.method === 'GET' ? undefined : body });
    const text = await response.text();
    expect(response.status, text).toBe(testCase.status);
    expect(response.headers.get('content-type'), text).toMatch(/^application\/json/);
    const json = JSON.parse(text) as Record<string, unknown>;
    expect(json.error, text).toBe(testCase.error);
    expect(RFC_ERRORS).toContain(json.error);
    expect(Object.keys(json).every((member) => ['error', 'error_description'].includes(member)), text).toBe(true);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    // RFC 6749 §5.2: a client that tried HTTP Basic learns the scheme to use.
    if (response.status === 401 && headers.authorization?.startsWith('Basic ')) expect(response.headers.get('www-authenticate') ?? '').toMatch(/^Basic /);
  });

  it('logged no server error', () => {
    expect(t.logLines.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });

  it('revoking a token that does not exist answers 200 (RFC 7009 §2.2)', async () => {
    const response = await fetch(`${t.app.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': FORM }, body: publicForm({ token: 'nope' }) });
    expect(response.status).toBe(200);
  });

  it('introspecting a token that does not exist answers active: false', async () => {
    const response = await fetch(`${t.app.url}/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': FORM, authorization: basic(confidentialClient.id, confidentialClient.secret!) },
      body: form({ token: 'nope' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ active: false });
  });
});

describe('malformed authorization requests', () => {
  it('an unknown client or a missing client_id is shown as a page, never redirected', async () => {
    for (const query of ['client_id=ocl_doesNotExist00000000&response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2Fcb', 'response_type=code']) {
      const response = await fetch(`${t.app.url}/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(response.status, query).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });

  it('escapes what a request echoes into the error page', async () => {
    const response = await fetch(`${t.app.url}/oauth/authorize?client_id=${encodeURIComponent('<script>alert(1)</script>')}&response_type=code`, { headers: { accept: 'text/html' } });
    const html = await response.text();
    expect(response.status).toBe(400);
    expect(html).not.toContain('<script>');
  });

  it('an unsupported response type comes back to the client as unsupported_response_type (in the fragment the implicit type asks for)', async () => {
    const query = new URLSearchParams({ client_id: publicClient.id, response_type: 'token', redirect_uri: 'http://127.0.0.1:8976/callback', state: 's1', scope: 'tasks:read' });
    const response = await fetch(`${t.app.url}/oauth/authorize?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const answer = new URLSearchParams(new URL(response.headers.get('location')!).hash.slice(1));
    expect(answer.get('error')).toBe('unsupported_response_type');
    expect(answer.get('state')).toBe('s1');
    expect(answer.get('access_token')).toBeNull();
  });
});
