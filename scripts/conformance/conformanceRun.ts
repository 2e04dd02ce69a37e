// Walks every operation of a live server's contract and checks every answer against it, in the
// manner of Schemathesis' and Prism's checks: no server error; a declared status, content type,
// headers and body (the server's own response contract check); and the refusals the contract
// promises: no or a bad credential → 401, a token without the scopes → 403, a method the path does
// not declare → 405 with Allow, a malformed parameter or body → 400/422, a deleted resource → 404.
// It calls a real server and changes its data (creates, moves, deletes): run it on a test deployment.

import { randomUUID } from 'node:crypto';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { REQUEST_ID_PATTERN } from '../../src/http/httpAdapter.js';
import { operationsOf, type ContractOperation } from './contractOperations.js';

export type ApiName = 'work-platform' | 'portfolio';

export const API_PREFIX: Record<ApiName, string> = { 'work-platform': '/v1', portfolio: '/api/v1' };

export interface ConformanceOptions {
  baseUrl: string;
  token: string;
  api: ApiName;
  /** A token of the same workspace without the scopes the operations need: each scoped operation must answer 403. */
  limitedToken?: string;
  /** How to wait out a 429's Retry-After (tests inject a clock). */
  sleep?: (ms: number) => Promise<void>;
  /** Called with each result as it is known, for a progress line. */
  onResult?: (result: CheckResult) => void;
  /** Called before a 429's Retry-After is waited out. */
  onWait?: (seconds: number, request: string) => void;
}

export type CheckName = 'example-call' | 'no-credential' | 'bad-credential' | 'insufficient-scope' | 'method-not-allowed' | 'malformed-parameter' | 'malformed-body' | 'deleted-resource';

export interface CheckResult {
  check: CheckName;
  /** The operation, or for method-not-allowed the path. */
  target: string;
  request: string;
  outcome: 'passed' | 'violation' | 'skipped';
  /** What was observed, and for a violation what the contract says instead. */
  detail: string;
}

export interface ConformanceReport {
  baseUrl: string;
  api: ApiName;
  version: string;
  operations: number;
  results: CheckResult[];
  passed: number;
  violations: number;
  skipped: number;
}

interface Observed {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

type Json = Record<string, any>;

const HTTP_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;
/** A 429 is waited out when Retry-After asks for at most this long. */
const MAX_RETRY_AFTER_SECONDS = 65;

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const documentResponse = await fetch(`${base}${API_PREFIX[options.api]}/openapi.json`);
  if (!documentResponse.ok) throw new Error(`${base}${API_PREFIX[options.api]}/openapi.json answered ${documentResponse.status}: is this the ${options.api} API?`);
  const document = (await documentResponse.json()) as Json;
  const contract = new ResponseContract(document);
  const errorSchema = document.components?.schemas?.Problem ? 'Problem' : 'ErrorEnvelope';
  const ajv = createAjv2020({ validateSchema: false });
  ajv.addSchema(document, 'conformance');
  const isError = ajv.compile({ $ref: `conformance#/components/schemas/${errorSchema}` });
  const operations = operationsOf(document).filter((operation) => operation.method !== 'HEAD');
  const results: CheckResult[] = [];
  const record = (result: CheckResult) => {
    results.push(result);
    options.onResult?.(result);
  };

  async function send(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Observed> {
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetch(`${base}${path}`, { method, headers: init.headers, body: init.body, redirect: 'manual' });
      const text = await response.text();
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => (headers[name] = value));
      const retryAfter = Number(headers['retry-after']);
      if (response.status === 429 && attempt < 2 && Number.isFinite(retryAfter) && retryAfter <= MAX_RETRY_AFTER_SECONDS) {
        options.onWait?.(Math.max(1, retryAfter), `${method} ${path}`);
        await sleep(Math.max(1, retryAfter) * 1000);
        continue;
      }
      let body: unknown = text === '' ? undefined : text;
      if (text !== '' && (headers['content-type'] ?? '').includes('json')) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      return { status: response.status, headers, body, text };
    }
  }

  /** What is wrong with the answer, by the contract: an empty list when nothing is. */
  function violationsOf(operation: ContractOperation | undefined, method: string, observed: Observed): string[] {
    const found: string[] = [];
    if (observed.status >= 500 && observed.status !== 503 && (observed.status === 500 || !operation)) found.push(`server error ${observed.status}`);
    if (!REQUEST_ID_PATTERN.test(observed.headers['x-request-id'] ?? '')) found.push('no well-formed x-request-id header');
    if (operation) {
      found.push(...contract.check(operation.operationId, { status: observed.status, headers: observed.headers, body: method === 'HEAD' ? undefined : observed.body }));
    } else if (observed.status >= 400 && !isError(observed.body)) {
      found.push(`the body is not a ${errorSchema}: ${observed.text.slice(0, 160)}`);
    }
    return found;
  }

  const headersFor = (operation: ContractOperation, token: string | undefined, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...extra };
    if (operation.hasRequestBody) headers['content-type'] ??= 'application/json';
    if (operation.headerParameters.some((parameter) => parameter.name === 'idempotency-key')) headers['idempotency-key'] ??= randomUUID();
    return headers;
  };
  const bodyFor = (operation: ContractOperation) => (operation.hasRequestBody ? JSON.stringify(operation.requestBodyExample ?? {}) : undefined);

  /** The current version of the resource at `path` as an If-Match value, read by its GET when the contract has one. */
  async function currentVersion(path: string): Promise<string> {
    const read = await send('GET', path, { headers: { authorization: `Bearer ${options.token}` } });
    return read.status === 200 && read.headers.etag ? read.headers.etag : '"1"';
  }

  async function exampleCall(operation: ContractOperation, path = operation.examplePath, check: CheckName = 'example-call'): Promise<Observed> {
    const extra: Record<string, string> = {};
    if (operation.headerParameters.some((parameter) => parameter.name === 'if-match' && parameter.required)) {
      extra['if-match'] = operations.some((other) => other.method === 'GET' && other.template === operation.template) ? await currentVersion(path) : '"1"';
    }
    const observed = await send(operation.method, path, { headers: headersFor(operation, operation.isPublic ? undefined : options.token, extra), body: bodyFor(operation) });
    const found = violationsOf(operation, operation.method, observed);
    record({
      check,
      target: operation.operationId,
      request: `${operation.method} ${path}`,
      outcome: found.length === 0 ? 'passed' : 'violation',
      detail: found.length === 0 ? `${observed.status} as declared` : `${observed.status}: ${found.join('; ')}`,
    });
    return observed;
  }

  async function expectStatus(operation: ContractOperation | undefined, target: string, check: CheckName, method: string, path: string, init: { headers?: Record<string, string>; body?: string }, expected: readonly number[], extra?: (observed: Observed) => string | undefined) {
    const observed = await send(method, path, init);
    const found = violationsOf(operation, method, observed);
    if (!expected.includes(observed.status)) found.unshift(`expected ${expected.join(' or ')}, got ${observed.status}`);
    const more = found.length === 0 ? extra?.(observed) : undefined;
    if (more) found.push(more);
    record({ check, target, request: `${method} ${path}`, outcome: found.length === 0 ? 'passed' : 'violation', detail: found.length === 0 ? `${observed.status} as the contract promises` : found.join('; ') });
  }

  // 1. Every operation called as its examples describe, changes last so the reads find what they name.
  const deletes = operations.filter((operation) => operation.method === 'DELETE');
  for (const operation of operations.filter((candidate) => candidate.method !== 'DELETE')) await exampleCall(operation);

  // 2. Credentials and scopes.
  for (const operation of operations.filter((candidate) => !candidate.isPublic)) {
    await expectStatus(operation, operation.operationId, 'no-credential', operation.method, operation.examplePath, { headers: headersFor(operation, undefined), body: bodyFor(operation) }, [401]);
    await expectStatus(operation, operation.operationId, 'bad-credential', operation.method, operation.examplePath, { headers: headersFor(operation, `not-a-token-${randomUUID()}`), body: bodyFor(operation) }, [401]);
    if (operation.requiredScopes.length === 0) continue;
    if (options.limitedToken === undefined) {
      record({ check: 'insufficient-scope', target: operation.operationId, request: `${operation.method} ${operation.examplePath}`, outcome: 'skipped', detail: 'give --limited-token (a token without these scopes) to check the 403' });
      continue;
    }
    await expectStatus(operation, operation.operationId, 'insufficient-scope', operation.method, operation.examplePath, { headers: headersFor(operation, options.limitedToken), body: bodyFor(operation) }, [403]);
  }

  // 3. A method each path does not declare.
  const paths = new Map<string, { examplePath: string; declared: string[] }>();
  for (const operation of operations) {
    const entry = paths.get(operation.template) ?? { examplePath: operation.examplePath, declared: [] };
    entry.declared.push(operation.method);
    paths.set(operation.template, entry);
  }
  for (const [template, { examplePath, declared }] of paths) {
    const undeclared = HTTP_METHODS.find((method) => !declared.includes(method))!;
    await expectStatus(undefined, template, 'method-not-allowed', undeclared, examplePath, { headers: { authorization: `Bearer ${options.token}` } }, [405], (observed) => {
      const allowed = (observed.headers.allow ?? '').split(/,\s*/).filter(Boolean).sort();
      return allowed.join(',') === [...declared].sort().join(',') ? undefined : `Allow is "${observed.headers.allow ?? ''}", the path declares ${declared.join(', ')}`;
    });
  }

  // 4. Malformed input: a parameter out of range, a body that is not JSON, a body of the wrong type.
  for (const operation of operations.filter((candidate) => !candidate.isPublic)) {
    if (operation.isList) {
      const separator = operation.examplePath.includes('?') ? '&' : '?';
      await expectStatus(operation, operation.operationId, 'malformed-parameter', operation.method, `${operation.examplePath}${separator}limit=0`, { headers: headersFor(operation, options.token) }, [400, 422]);
    }
    if (operation.hasRequestBody) {
      const headers = () => headersFor(operation, options.token, { 'if-match': '"1"' });
      await expectStatus(operation, operation.operationId, 'malformed-body', operation.method, operation.examplePath, { headers: headers(), body: '{"unfinished": ' }, [400]);
      await expectStatus(operation, operation.operationId, 'malformed-body', operation.method, operation.examplePath, { headers: headers(), body: '[]' }, [400, 422]);
    }
  }

  // 5. A resource created, deleted, then read: 404. Its DELETE is that operation's example call.
  const covered = new Set<string>();
  for (const remove of deletes) {
    const collection = remove.template.replace(/\/\{[^}]+\}$/, '');
    const create = operations.find((operation) => operation.method === 'POST' && operation.template === collection);
    const read = operations.find((operation) => operation.method === 'GET' && operation.template === remove.template);
    if (!create || !read || collection === remove.template) continue;
    const created = await send('POST', create.examplePath, { headers: headersFor(create, options.token), body: bodyFor(create) });
    const id = (created.body as { id?: unknown } | undefined)?.id;
    if (created.status !== 201 || typeof id !== 'string') {
      record({ check: 'deleted-resource', target: remove.operationId, request: `POST ${create.examplePath}`, outcome: 'skipped', detail: `could not create one to delete (${created.status})` });
      continue;
    }
    const path = remove.template.replace(/\{[^}]+\}$/, encodeURIComponent(id));
    await exampleCall(remove, path);
    covered.add(remove.operationId);
    await expectStatus(read, read.operationId, 'deleted-resource', 'GET', path, { headers: { authorization: `Bearer ${options.token}` } }, [404]);
  }
  for (const operation of deletes.filter((candidate) => !covered.has(candidate.operationId))) await exampleCall(operation);

  const count = (outcome: CheckResult['outcome']) => results.filter((result) => result.outcome === outcome).length;
  return {
    baseUrl: base,
    api: options.api,
    version: String(document.info?.version ?? ''),
    operations: operations.length,
    results,
    passed: count('passed'),
    violations: count('violation'),
    skipped: count('skipped'),
  };
}

/** The report for a person: violations first, each with its request, then the counts. */
export function formatReport(report: ConformanceReport): string {
  const lines = [`Conformance of ${report.baseUrl} against the ${report.api} contract ${report.version} (${report.operations} operations)`];
  for (const result of report.results.filter((candidate) => candidate.outcome === 'violation')) {
    lines.push(`  ✗ ${result.check} ${result.target}: ${result.request}: ${result.detail}`);
  }
  const skippedChecks = [...new Set(report.results.filter((result) => result.outcome === 'skipped').map((result) => `${result.check} (${result.detail})`))];
  for (const skipped of skippedChecks) lines.push(`  - skipped: ${skipped}`);
  lines.push(`${report.passed} passed, ${report.violations} violations, ${report.skipped} skipped`);
  return lines.join('\n');
}
