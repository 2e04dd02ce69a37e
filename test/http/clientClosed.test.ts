// A client that goes away mid-request (its body cut off, sent slowly and then abandoned) is not a
// server error: on every surface (the portfolio API, the Work-Platform API, MCP, OAuth) it is
// logged once, at info, as `client-closed` with nginx's 499, and never as a 500 or an error line.
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp();
  port = Number(new URL(t.app.url).port);
});
afterAll(async () => {
  await t?.close();
});

interface Surface {
  name: string;
  method: string;
  path: string;
  headers: () => Record<string, string>;
  contentType: string;
  partialBody: string;
}

const surfaces: Surface[] = [
  {
    name: 'the portfolio API (/api/v1)',
    method: 'GET',
    path: '/api/v1/profile',
    headers: () => ({ authorization: `Bearer ${t.fixture.portfolio.apiKey}` }),
    contentType: 'application/json',
    partialBody: '{"unread":',
  },
  {
    name: 'the Work-Platform API (/v1)',
    method: 'POST',
    path: '/v1/projects',
    headers: () => ({ authorization: `Bearer ${t.fixture.workPlatform.tokens.all}` }),
    contentType: 'application/json',
    partialBody: '{"name":"Cut o',
  },
  {
    name: 'a refused call of the Work-Platform API (no credential)',
    method: 'POST',
    path: '/v1/projects',
    headers: () => ({}),
    contentType: 'application/json',
    partialBody: '{"name":"Cut o',
  },
  {
    name: 'MCP (/v1/mcp)',
    method: 'POST',
    path: '/v1/mcp',
    headers: () => ({ authorization: `Bearer ${t.fixture.workPlatform.tokens.all}`, accept: 'application/json, text/event-stream' }),
    contentType: 'application/json',
    partialBody: '{"jsonrpc":"2.0","id":1,"method":"tools/li',
  },
  {
    name: 'OAuth (/oauth/token)',
    method: 'POST',
    path: '/oauth/token',
    headers: () => ({}),
    contentType: 'application/x-www-form-urlencoded',
    partialBody: 'grant_type=client_credentials&client_id=ocl_',
  },
];

let requestCounter = 0;

/**
 * Sends a request whose Content-Length promises more than is sent, over a raw socket, then closes
 * it: at once, or after sending slowly. Answers the request id and every log line written from
 * its start until things settled.
 */
async function cutOff(surface: Surface, pace: 'at-once' | 'slowly'): Promise<{ requestId: string; lines: Record<string, unknown>[]; answered: string }> {
  const requestId = `req_cut_${++requestCounter}_${pace}`;
  const before = t.logLines.length;
  const socket = connect(port, '127.0.0.1');
  let answered = '';
  socket.on('data', (chunk: Buffer) => {
    answered += chunk.toString('utf8');
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const headers = { host: `127.0.0.1:${port}`, 'x-request-id': requestId, 'content-type': surface.contentType, 'content-length': '4096', ...surface.headers() };
  const head = `${surface.method} ${surface.path} HTTP/1.1\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`;
  socket.write(head);
  if (pace === 'at-once') {
    socket.write(surface.partialBody);
  } else {
    for (const character of surface.partialBody.slice(0, 6)) {
      socket.write(character);
      await delay(40);
    }
  }
  await delay(pace === 'at-once' ? 20 : 100);
  socket.destroy();
  // The line is written when the server notices; then a moment more, so that a second line would show.
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline && !t.logLines.slice(before).some((line) => line.includes(requestId))) await delay(10);
  await delay(150);
  return { requestId, lines: t.logLines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>), answered };
}

describe('a client that goes away before its body ends', () => {
  for (const surface of surfaces) {
    for (const pace of ['at-once', 'slowly'] as const) {
      it(`on ${surface.name}, cut off ${pace === 'at-once' ? 'at once' : 'after a slow start'}: one info client-closed line with 499, no error, no 500`, async () => {
        const { requestId, lines, answered } = await cutOff(surface, pace);
        const own = lines.filter((line) => line.requestId === requestId);
        expect(own, JSON.stringify(lines, null, 1)).toHaveLength(1);
        expect(own[0]).toMatchObject({ level: 'info', msg: 'client-closed', status: 499, requestId, method: surface.method, path: surface.path });
        // Nothing else in the meantime: no error or warning without a request id, no 500 anywhere.
        expect(lines.filter((line) => line.level !== 'info'), JSON.stringify(lines, null, 1)).toEqual([]);
        expect(lines.filter((line) => line.status === 500)).toEqual([]);
        expect(lines).toHaveLength(1);
        expect(answered).not.toMatch(/^HTTP\/1\.1 5/);
      });
    }
  }

  it('complete requests, with and without a body, are still logged as requests, not as client-closed', async () => {
    const before = t.logLines.length;
    const read = await fetch(`${t.app.url}/api/v1/profile`, { headers: { authorization: `Bearer ${t.fixture.portfolio.apiKey}` } });
    expect(read.status).toBe(200);
    const write = await fetch(`${t.app.url}/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Sent whole' }),
    });
    expect(write.status).toBe(201);
    const token = await fetch(`${t.app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(token.status).toBe(400);
    await delay(20);
    const lines = t.logLines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', msg: 'request', status: 200 }),
      expect.objectContaining({ level: 'info', msg: 'request', status: 201 }),
      expect.objectContaining({ level: 'info', msg: 'request', status: 400 }),
    ]);
  });
});
