import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseValidationMode } from '../../src/config.js';
import type { ContractApi, Reply } from '../../src/contract/reply.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { createHttpAdapter } from '../../src/http/httpAdapter.js';
import { toErrorReply } from '../../src/portfolio/errors.js';
import { loadContractDocument } from '../support/contractClient.js';
import { memoryLogger } from '../support/testApp.js';

/** An API stand-in that answers getProfile with whatever reply a test gives it. */
function fixedApi(reply: Reply): ContractApi {
  return {
    name: 'fixed',
    pathPrefix: '/api/v1',
    handle: async () => ({ reply, operationId: 'getProfile' }),
    screen: () => ({ headers: {} }),
    identify: async () => ({ caller: undefined }),
  };
}

const profile = { name: 'A', headline: 'B', bioSummary: 'C', location: null, avatar: null, updatedAt: '2026-01-01T00:00:00.000Z' };
const okHeaders = { 'cache-control': 'no-store', vary: 'Authorization', 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '1' };
const servers: Server[] = [];

async function serve(reply: Reply, mode: ResponseValidationMode, logLines: string[]): Promise<string> {
  const logger = memoryLogger(logLines);
  const listener = createHttpAdapter({
    apis: [{ api: fixedApi(reply), responseContract: new ResponseContract(loadContractDocument('portfolio')), errorReply: (error, id) => toErrorReply(error, id, logger) }],
    responseValidation: mode,
    logger,
    logRequests: false,
  });
  const server = createServer(listener).listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('RESPONSE_VALIDATION', () => {
  const broken: Reply = { status: 200, headers: okHeaders, body: { ...profile, name: 42 } };

  it('enforce: a reply that breaks the contract becomes a generic 500, and the violation is logged', async () => {
    const logLines: string[] = [];
    const response = await fetch(`${await serve(broken, 'enforce', logLines)}/api/v1/profile`);
    expect(response.status).toBe(500);
    expect((await response.json()).error.code).toBe('internal_error');
    expect(logLines.join('\n')).toContain('response violates the contract');
    expect(logLines.join('\n')).toContain('/name');
  });

  it('warn: the reply goes out as it is, and the violation is logged', async () => {
    const logLines: string[] = [];
    const response = await fetch(`${await serve(broken, 'warn', logLines)}/api/v1/profile`);
    expect(response.status).toBe(200);
    expect((await response.json()).name).toBe(42);
    expect(logLines.join('\n')).toContain('response violates the contract');
  });

  it('off: nothing is checked', async () => {
    const logLines: string[] = [];
    const response = await fetch(`${await serve(broken, 'off', logLines)}/api/v1/profile`);
    expect(response.status).toBe(200);
    expect(logLines).toEqual([]);
  });

  it('enforce: a reply that keeps the contract goes out untouched, with a request id', async () => {
    const logLines: string[] = [];
    const response = await fetch(`${await serve({ status: 200, headers: okHeaders, body: profile }, 'enforce', logLines)}/api/v1/profile`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(profile);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(logLines).toEqual([]);
  });
});

describe('pre-encoded bodies', () => {
  it('a Buffer body is sent byte for byte with its length, and checked against the contract like text', async () => {
    const bytes = Buffer.from(JSON.stringify({ ...profile, name: 'Zoë' }));
    const buffered: Reply = { status: 200, headers: { ...okHeaders, 'content-type': 'application/json; charset=utf-8' }, body: bytes };
    const logLines: string[] = [];
    const response = await fetch(`${await serve(buffered, 'enforce', logLines)}/api/v1/profile`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    expect(logLines.join('\n')).not.toContain('violates');

    const brokenBytes: Reply = { ...buffered, body: Buffer.from(JSON.stringify({ ...profile, name: 42 })) };
    const refused = await fetch(`${await serve(brokenBytes, 'enforce', [])}/api/v1/profile`);
    expect(refused.status).toBe(500);
  });
});

describe('request ids', () => {
  it('are req_ + 24 hex digits, distinct across more ids than one draw of random bytes covers', async () => {
    const { requestIdFor } = await import('../../src/http/httpAdapter.js');
    const ids = Array.from({ length: 2000 }, () => requestIdFor(undefined));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(requestIdFor('client-id_1.2:3')).toBe('client-id_1.2:3');
    expect(requestIdFor('bad id')).toMatch(/^req_/);
  });
});
