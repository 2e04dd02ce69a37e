// Walks every operation of a live server's contract and checks every answer against it, in the
// manner of Schemathesis' and Prism's checks: no server error; a declared status, content type,
// headers and body (the server's own response contract check); and the refusals the contract
// promises: no or a bad credential → 401, a token without the scopes → 403, a method the path does
// not declare → 405 with Allow, a malformed parameter or body → 400/422, a deleted resource → 404.
//
// It calls operations on records it creates itself, from the contract's create operations and
// their examples (ids and ETags taken from the create answers), so that it does not depend on the
// records the examples name. An operation counts as exercised only when a call of it succeeded
// (2xx): an answer like 404 on an id or 409 on a state is checked against the contract like any
// other, but the operation is reported as not exercised, with that answer as the reason.
// It calls a real server and changes its data (creates, moves, deletes): run it on a test deployment.

import { randomUUID } from 'node:crypto';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { REQUEST_ID_PATTERN } from '../../src/http/httpAdapter.js';
import { summarize, type CheckName, type CheckResult, type ConformanceReport } from './conformanceReport.js';
import { operationsOf, type ContractOperation } from './contractOperations.js';
import { firstListItem, idPrefixOf, idsIn, kindActedOn, replaceIds, resourceKindsOf, type ResourceKind } from './resourceKinds.js';
import { withRunDates } from '../contract/runDates.js';

export type { CheckName, CheckResult, ConformanceReport } from './conformanceReport.js';
export { formatReport } from './conformanceReport.js';

export type ApiName = 'work-platform' | 'portfolio';

export const API_PREFIX: Record<ApiName, string> = { 'work-platform': '/v1', portfolio: '/api/v1' };

export interface ConformanceOptions {
  baseUrl: string;
  token: string;
  api: ApiName;
  /** A token of the same workspace without the scopes the operations need: each scoped operation must answer 403. */
  limitedToken?: string;
  /**
   * Operations that may stay unexercised without failing the run (those that need a third party
   * the server cannot reach here, say); `*` allows any. Every other unexercised operation fails it.
   */
  allowUnexercised?: string[];
  /** How long to wait for each answer before reporting that none came (default 30 s). */
  requestTimeoutMs?: number;
  /** How to wait out a 429's Retry-After (tests inject a clock). */
  sleep?: (ms: number) => Promise<void>;
  /** The time the run's dates are computed from (contract expiries, replay ranges: see runDates.ts); Date.now by default. */
  now?: () => number;
  /** Called with each result as it is known, for a progress line. */
  onResult?: (result: CheckResult) => void;
  /** Called before a 429's Retry-After is waited out. */
  onWait?: (seconds: number, request: string) => void;
}

interface Observed {
  /** 0 when no answer came (see failure). */
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
  failure?: string;
}

/** A record the runner calls operations on: one it created, else one a list showed, else the example's. */
interface Instance {
  kind: ResourceKind;
  id: string;
  path: string;
  /** The If-Match value of its current version, from the last answer that carried one. */
  etag?: string;
  source: 'created' | 'listed' | 'example';
  /** For one the runner did not create: why not. */
  why?: string;
  deleted?: boolean;
}

/** Why there is no instance to call an operation on. */
interface Unavailable {
  reason: string;
}

type Json = Record<string, any>;

const HTTP_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;
/** A 429 is waited out when Retry-After asks for at most this long. */
const MAX_RETRY_AFTER_SECONDS = 65;
/** How many other operations are tried, one at a time, to bring a fresh record into the state an operation answered 409 for. */
const MAX_PREPARATIONS = 6;

const isSuccess = (status: number) => status >= 200 && status < 300;

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const documentResponse = await fetch(`${base}${API_PREFIX[options.api]}/openapi.json`);
  if (!documentResponse.ok) throw new Error(`${base}${API_PREFIX[options.api]}/openapi.json answered ${documentResponse.status}: is this the ${options.api} API?`);
  const document = (await documentResponse.json()) as Json;
  const contract = new ResponseContract(document);
  const errorSchema = document.components?.schemas?.Problem ? 'Problem' : 'ErrorEnvelope';
  const ajv = createAjv2020({ validateSchema: false });
  ajv.addSchema(document, 'conformance');
  const isError = ajv.compile({ $ref: `conformance#/components/schemas/${errorSchema}` });
  const operations = operationsOf(document).filter((operation) => operation.method !== 'HEAD');
  const unknownAllowed = (options.allowUnexercised ?? []).filter((name) => name !== '*' && !operations.some((operation) => operation.operationId === name));
  if (unknownAllowed.length > 0) throw new Error(`--allow-unexercised names operations the ${options.api} contract does not have: ${unknownAllowed.join(', ')}`);
  const kinds = resourceKindsOf(operations);
  const kindByPrefix = new Map<string, ResourceKind>();
  for (const kind of kinds.values()) if (kind.idPrefix && !kindByPrefix.has(kind.idPrefix)) kindByPrefix.set(kind.idPrefix, kind);

  const results: CheckResult[] = [];
  const record = (result: CheckResult) => {
    results.push(result);
    options.onResult?.(result);
  };
  /** Notes on operations the runner could not exercise, beyond their calls' answers (what it tried). */
  const notes = new Map<string, string[]>();
  const note = (operationId: string, text: string) => notes.set(operationId, [...(notes.get(operationId) ?? []), text]);
  /** Ids the server has answered with, by prefix: for ids that examples name of kinds the contract cannot create (users, say). */
  const idsSeen = new Set<string>();
  const idSeenByPrefix = new Map<string, string>();
  const created: Instance[] = [];

  async function send(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Observed> {
    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      let text: string;
      try {
        response = await fetch(`${base}${path}`, { method, headers: init.headers, body: init.body, redirect: 'manual', signal: AbortSignal.timeout(requestTimeoutMs) });
        text = await response.text();
      } catch (error) {
        // A connection closed without an answer, or none in time: a violation of its own, and the run goes on.
        const cause = (error as Error & { cause?: Error }).cause?.message;
        return { status: 0, headers: {}, body: undefined, text: '', failure: `no answer: ${(error as Error).name === 'TimeoutError' ? `none within ${requestTimeoutMs} ms` : `${(error as Error).message}${cause ? ` (${cause})` : ''}`}` };
      }
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
      // Ids of this workspace's records: from its own data, not from documents (the served contract's examples name the demo's).
      if (isSuccess(response.status) && init.headers?.authorization === `Bearer ${options.token}`) {
        idsIn(body, (id) => {
          idsSeen.add(id);
          const prefix = idPrefixOf(id)!;
          if (!idSeenByPrefix.has(prefix)) idSeenByPrefix.set(prefix, id);
        });
      }
      return { status: response.status, headers, body, text };
    }
  }

  /** What is wrong with the answer, by the contract: an empty list when nothing is. */
  function violationsOf(operation: ContractOperation | undefined, method: string, observed: Observed): string[] {
    if (observed.failure) return [observed.failure];
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

  // ---- The records the calls act on -------------------------------------------------------------

  const primaries = new Map<string, Promise<Instance | Unavailable>>();
  /** The kinds whose create call is under way. */
  const creating = new Set<string>();

  /** The instance most calls of a kind use: created once (the create operation's example call), else listed, else the example's. */
  function primary(kind: ResourceKind): Promise<Instance | Unavailable> {
    let found = primaries.get(kind.template);
    if (!found) {
      found = (async () => {
        const tried: string[] = [];
        if (kind.create) {
          const made = await create(kind);
          if ('id' in made) return made;
          tried.push(`creating one failed: ${made.reason}`);
        }
        const listed = await fromList(kind);
        if (listed) return { ...listed, why: tried.join('; ') || undefined };
        if (kind.list) tried.push(`${kind.list.operationId} showed none`);
        const collection = await fillPath(kind.collection);
        if ('reason' in collection) return collection;
        return { kind, id: kind.example, path: `${collection.path}/${encodeURIComponent(kind.example)}`, source: 'example' as const, why: tried.join('; ') || undefined };
      })();
      primaries.set(kind.template, found);
    }
    return found;
  }

  /** A new instance, for a call that changes or deletes one: the runner changes only what it created. */
  async function fresh(kind: ResourceKind): Promise<Instance | Unavailable> {
    if (!kind.create) return { reason: `the contract has no operation that creates a record of ${kind.template}, and the runner changes only records it created` };
    return create(kind);
  }

  async function create(kind: ResourceKind): Promise<Instance | Unavailable> {
    const operation = kind.create!;
    creating.add(kind.template);
    try {
      const collection = await fillPath(kind.collection);
      if ('reason' in collection) return collection;
      const observed = await call(operation, collection.path, { body: await bodyFor(operation) });
      const id = (observed.body as { id?: unknown } | undefined)?.id;
      if (!isSuccess(observed.status) || typeof id !== 'string') {
        return { reason: `${operation.operationId} answered ${answerSummary(observed)}` };
      }
      const instance: Instance = { kind, id, path: `${collection.path}/${encodeURIComponent(id)}`, etag: etagOf(observed), source: 'created' };
      created.push(instance);
      return instance;
    } finally {
      creating.delete(kind.template);
    }
  }

  /** An instance from the kind's list (the first item), for kinds the contract cannot create (the portfolio's slugs). */
  async function fromList(kind: ResourceKind): Promise<Instance | undefined> {
    if (!kind.list) return undefined;
    const collection = await fillPath(kind.collection);
    if ('reason' in collection) return undefined;
    const observed = await call(kind.list, collection.path);
    const item = firstListItem(observed.body);
    const value = item?.[kind.parameter] ?? item?.id;
    if (!isSuccess(observed.status) || typeof value !== 'string') return undefined;
    return { kind, id: value, path: `${collection.path}/${encodeURIComponent(value)}`, source: 'listed' };
  }

  /** A path template with each parameter set to the primary instance of its kind (to `own` for its kind). */
  async function fillPath(template: string, own?: Instance): Promise<{ path: string; instance?: Instance } | Unavailable> {
    let path = template;
    let instance: Instance | undefined;
    for (const [, parameter] of template.matchAll(/\{([^}]+)\}/g)) {
      const kind = kinds.get(template.slice(0, template.indexOf(`{${parameter}}`) + parameter!.length + 2))!;
      const found = own?.kind === kind ? own : await primary(kind);
      if ('reason' in found) return found;
      path = path.replace(`{${parameter}}`, encodeURIComponent(found.id));
      instance = found;
    }
    return { path, instance };
  }

  /** The example body with the runner's own ids where the example names records (ids of kinds it cannot create: ones the server has shown). */
  async function bodyFor(operation: ContractOperation): Promise<unknown> {
    if (!operation.hasRequestBody) return undefined;
    const body = await replaceIds(operation.requestBodyExample ?? {}, async (id) => {
      const prefix = idPrefixOf(id)!;
      const kind = kindByPrefix.get(prefix);
      // A record that names one of a kind being created (itself, or through another): the example's id, not a wait on itself.
      if (kind && !creating.has(kind.template)) {
        const instance = await primary(kind);
        return 'id' in instance ? instance.id : id;
      }
      return idsSeen.has(id) ? id : (idSeenByPrefix.get(prefix) ?? id);
    });
    return withRunDates(operation.operationId, body, now());
  }

  function etagOf(observed: Observed): string | undefined {
    if (observed.headers.etag) return observed.headers.etag;
    const version = (observed.body as { version?: unknown } | undefined)?.version;
    return typeof version === 'number' ? `"${version}"` : undefined;
  }

  // ---- Calls ------------------------------------------------------------------------------------

  const called = new Set<string>();
  const succeeded = new Set<string>();

  /**
   * Calls an operation as a client that means it to succeed, and records the answer: a violation
   * when it breaks the contract, passed when it is a 2xx, else not exercised (the answer says why).
   * The first call of each operation is its example call; later ones are set-up or clean-up.
   */
  async function call(operation: ContractOperation, path: string, init: { body?: unknown; instance?: Instance; check?: CheckName } = {}): Promise<Observed> {
    const extra: Record<string, string> = {};
    if (operation.headerParameters.some((parameter) => parameter.name === 'if-match' && parameter.required)) {
      extra['if-match'] = init.instance ? await currentVersion(init.instance) : '"1"';
    }
    const check = init.check ?? (called.has(operation.operationId) ? 'setup' : 'example-call');
    called.add(operation.operationId);
    const observed = await send(operation.method, path, {
      headers: headersFor(operation, operation.isPublic ? undefined : options.token, extra),
      body: operation.hasRequestBody ? JSON.stringify(init.body ?? {}) : undefined,
    });
    const found = violationsOf(operation, operation.method, observed);
    if (isSuccess(observed.status)) {
      succeeded.add(operation.operationId);
      if (init.instance && (observed.body as { id?: unknown } | undefined)?.id === init.instance.id) init.instance.etag = etagOf(observed) ?? init.instance.etag;
    }
    record({
      check,
      target: operation.operationId,
      operationId: operation.operationId,
      request: `${operation.method} ${path}`,
      status: observed.status,
      outcome: found.length > 0 ? 'violation' : isSuccess(observed.status) ? 'passed' : 'not-exercised',
      detail: found.length > 0 ? `${observed.failure ? '' : `${observed.status}: `}${found.join('; ')}` : isSuccess(observed.status) ? `${observed.status} as declared` : answerSummary(observed),
    });
    return observed;
  }

  /** The instance's current version for If-Match: the last one an answer carried, else its GET's ETag. */
  async function currentVersion(instance: Instance): Promise<string> {
    if (instance.etag) return instance.etag;
    if (instance.kind.read) {
      const read = await send('GET', instance.path, { headers: { authorization: `Bearer ${options.token}` } });
      if (isSuccess(read.status) && read.headers.etag) return (instance.etag = read.headers.etag);
    }
    return '"1"';
  }

  /** Calls an operation on the records it needs: a fresh one of its own when it changes a record, else the primary ones. */
  async function callOnItsRecords(operation: ContractOperation, prepare?: ContractOperation): Promise<{ observed: Observed; instance?: Instance } | Unavailable> {
    const kind = kindActedOn(operation, kinds);
    let own: Instance | undefined;
    if (kind && operation.method !== 'GET') {
      const made = await fresh(kind);
      if ('reason' in made) return made;
      own = made;
    }
    const filled = await fillPath(operation.template, own);
    if ('reason' in filled) return filled;
    const query = operation.examplePath.includes('?') ? operation.examplePath.slice(operation.examplePath.indexOf('?')) : '';
    if (prepare && own) {
      const prepared = await callOnInstance(prepare, own, 'setup');
      if (!isSuccess(prepared.status)) return { reason: `${prepare.operationId} answered ${answerSummary(prepared)}` };
    }
    const observed = await call(operation, `${filled.path}${query}`, { body: await bodyFor(operation), instance: filled.instance, check: prepare ? 'setup' : undefined });
    if (!isSuccess(observed.status) && filled.instance?.why) note(operation.operationId, `it was called on ${filled.instance.id}, the ${filled.instance.source === 'listed' ? 'first listed' : "contract example's"} record: ${filled.instance.why}`);
    return { observed, instance: filled.instance };
  }

  async function callOnInstance(operation: ContractOperation, instance: Instance, check: CheckName): Promise<Observed> {
    const filled = await fillPath(operation.template, instance);
    const path = 'reason' in filled ? instance.path : filled.path;
    return call(operation, path, { body: await bodyFor(operation), instance, check });
  }

  async function expectStatus(operation: ContractOperation | undefined, target: string, check: CheckName, method: string, path: string, init: { headers?: Record<string, string>; body?: string }, expected: readonly number[], extra?: (observed: Observed) => string | undefined) {
    const observed = await send(method, path, init);
    const found = violationsOf(operation, method, observed);
    if (!expected.includes(observed.status)) found.unshift(`expected ${expected.join(' or ')}, got ${observed.status}`);
    const more = found.length === 0 ? extra?.(observed) : undefined;
    if (more) found.push(more);
    record({
      check,
      target,
      ...(operation ? { operationId: operation.operationId } : {}),
      request: `${method} ${path}`,
      status: observed.status,
      outcome: found.length === 0 ? 'passed' : 'violation',
      detail: found.length === 0 ? `${observed.status} as the contract promises` : found.join('; '),
    });
  }

  /** The path a refusal check calls: the operation's path on the primary records (the example's when there are none). */
  async function pathForChecks(operation: ContractOperation): Promise<string> {
    const filled = await fillPath(operation.template);
    if ('reason' in filled) return operation.examplePath;
    const query = operation.examplePath.includes('?') ? operation.examplePath.slice(operation.examplePath.indexOf('?')) : '';
    return `${filled.path}${query}`;
  }
  const bodyText = async (operation: ContractOperation) => (operation.hasRequestBody ? JSON.stringify(await bodyFor(operation)) : undefined);

  // 1. Every operation called as its examples describe, on the runner's own records: first the
  //    reads that need no record (they show ids of kinds the contract cannot create), then the rest
  //    in the contract's order; deletes last (step 6).
  const deletes = operations.filter((operation) => operation.method === 'DELETE');
  const firstReads = operations.filter((operation) => operation.method === 'GET' && operation.pathParameters.length === 0);
  for (const operation of [...firstReads, ...operations.filter((candidate) => candidate.method !== 'DELETE' && !firstReads.includes(candidate))]) {
    if (called.has(operation.operationId)) continue;
    const creates = [...kinds.values()].find((kind) => kind.create === operation);
    if (creates) {
      await primary(creates);
      if (called.has(operation.operationId)) continue;
    }
    const outcome = await callOnItsRecords(operation);
    if ('reason' in outcome) notExercisedWithoutCall(operation, outcome.reason);
  }

  // 2. An operation that answered 409 on a fresh record of its own (a contract that must be sent
  //    before it is signed, say) is tried again on another fresh one, after each other operation
  //    that changes such records and has succeeded: the first that brings it into the state wins.
  for (const operation of operations.filter((candidate) => candidate.method !== 'DELETE' && !succeeded.has(candidate.operationId))) {
    const kind = kindActedOn(operation, kinds);
    const last = [...results].reverse().find((result) => result.operationId === operation.operationId && result.check !== 'cleanup');
    if (!kind || last?.status !== 409) continue;
    const preparations = operations.filter(
      (other) => other !== operation && other.method !== 'GET' && other.method !== 'DELETE' && succeeded.has(other.operationId) && kindActedOn(other, kinds) === kind,
    );
    const tried: string[] = [];
    for (const preparation of preparations.slice(0, MAX_PREPARATIONS)) {
      const outcome = await callOnItsRecords(operation, preparation);
      if (!('reason' in outcome) && isSuccess(outcome.observed.status)) break;
      tried.push(preparation.operationId);
    }
    if (succeeded.has(operation.operationId)) continue;
    const notExercised = operations.filter((other) => other !== operation && other.method !== 'GET' && other.method !== 'DELETE' && !succeeded.has(other.operationId) && kindActedOn(other, kinds) === kind);
    note(
      operation.operationId,
      [
        ...(tried.length > 0 ? [`still 409 after ${tried.join(', ')} on a fresh record`] : []),
        ...(notExercised.length > 0 ? [`${notExercised.map((other) => other.operationId).join(', ')}, which could bring a record into the state it needs, did not succeed either`] : []),
        ...(tried.length === 0 && notExercised.length === 0 ? ['no other operation changes such a record'] : []),
      ].join('; '),
    );
  }

  // 3. Credentials and scopes.
  for (const operation of operations.filter((candidate) => !candidate.isPublic)) {
    const path = await pathForChecks(operation);
    const body = await bodyText(operation);
    await expectStatus(operation, operation.operationId, 'no-credential', operation.method, path, { headers: headersFor(operation, undefined), body }, [401]);
    await expectStatus(operation, operation.operationId, 'bad-credential', operation.method, path, { headers: headersFor(operation, `not-a-token-${randomUUID()}`), body }, [401]);
    if (operation.requiredScopes.length === 0) continue;
    if (options.limitedToken === undefined) {
      record({ check: 'insufficient-scope', target: operation.operationId, operationId: operation.operationId, request: `${operation.method} ${path}`, status: 0, outcome: 'skipped', detail: 'give --limited-token (a token without these scopes) to check the 403' });
      continue;
    }
    await expectStatus(operation, operation.operationId, 'insufficient-scope', operation.method, path, { headers: headersFor(operation, options.limitedToken), body }, [403]);
  }

  // 4. A method each path does not declare.
  const paths = new Map<string, { operation: ContractOperation; declared: string[] }>();
  for (const operation of operations) {
    const entry = paths.get(operation.template) ?? { operation, declared: [] };
    entry.declared.push(operation.method);
    paths.set(operation.template, entry);
  }
  for (const [template, { operation, declared }] of paths) {
    const undeclared = HTTP_METHODS.find((method) => !declared.includes(method))!;
    await expectStatus(undefined, template, 'method-not-allowed', undeclared, await pathForChecks(operation), { headers: { authorization: `Bearer ${options.token}` } }, [405], (observed) => {
      const allowed = (observed.headers.allow ?? '').split(/,\s*/).filter(Boolean).sort();
      return allowed.join(',') === [...declared].sort().join(',') ? undefined : `Allow is "${observed.headers.allow ?? ''}", the path declares ${declared.join(', ')}`;
    });
  }

  // 5. Malformed input: a parameter out of range, a body that is not JSON, a body of the wrong type.
  for (const operation of operations.filter((candidate) => !candidate.isPublic)) {
    const path = await pathForChecks(operation);
    if (operation.isList) {
      const separator = path.includes('?') ? '&' : '?';
      await expectStatus(operation, operation.operationId, 'malformed-parameter', operation.method, `${path}${separator}limit=0`, { headers: headersFor(operation, options.token) }, [400, 422]);
    }
    if (operation.hasRequestBody) {
      const headers = () => headersFor(operation, options.token, { 'if-match': '"1"' });
      await expectStatus(operation, operation.operationId, 'malformed-body', operation.method, path, { headers: headers(), body: '{"unfinished": ' }, [400]);
      await expectStatus(operation, operation.operationId, 'malformed-body', operation.method, path, { headers: headers(), body: '[]' }, [400, 422]);
    }
  }

  // 6. Deletes, each on a record created for it; a deleted record is then read: 404.
  for (const remove of deletes) {
    const outcome = await callOnItsRecords(remove);
    if ('reason' in outcome) {
      notExercisedWithoutCall(remove, outcome.reason);
      continue;
    }
    const { observed, instance } = outcome;
    const kind = kindActedOn(remove, kinds);
    if (!kind || !instance || kind.remove !== remove || !isSuccess(observed.status)) continue;
    instance.deleted = true;
    if (kind.read) await expectStatus(kind.read, kind.read.operationId, 'deleted-resource', 'GET', instance.path, { headers: { authorization: `Bearer ${options.token}` } }, [404]);
  }

  // 7. Clean-up: every record the runner created and still exists is deleted, newest first.
  const left: string[] = [];
  for (const instance of [...created].reverse()) {
    if (instance.deleted) continue;
    if (!instance.kind.remove) {
      left.push(`${instance.id} (no delete operation)`);
      continue;
    }
    const observed = await call(instance.kind.remove, instance.path, { instance, check: 'cleanup' });
    if (isSuccess(observed.status) || observed.status === 404) instance.deleted = true;
    else left.push(`${instance.id} (${answerSummary(observed)})`);
  }

  function notExercisedWithoutCall(operation: ContractOperation, reason: string) {
    const check = called.has(operation.operationId) ? 'setup' : 'example-call';
    called.add(operation.operationId);
    record({ check, target: operation.operationId, operationId: operation.operationId, request: `${operation.method} ${operation.template}`, status: 0, outcome: 'not-exercised', detail: `not called: ${reason}` });
  }

  return summarize({
    baseUrl: base,
    api: options.api,
    version: String(document.info?.version ?? ''),
    operations,
    results,
    notes,
    allowUnexercised: options.allowUnexercised ?? [],
    cleanup: { created: created.length, deleted: created.filter((instance) => instance.deleted).length, left },
  });
}

/** An answer in a few words: its status and, for a problem or error envelope, its code and detail. */
export function answerSummary(observed: { status: number; body: unknown; failure?: string }): string {
  if (observed.failure) return observed.failure;
  const body = (observed.body ?? {}) as Json;
  const problem = typeof body === 'object' ? (body.error && typeof body.error === 'object' ? body.error : body) : {};
  const code = typeof problem.code === 'string' ? ` ${problem.code}` : '';
  const text = [problem.detail, problem.message, problem.title].find((value) => typeof value === 'string') as string | undefined;
  return `${observed.status}${code}${text ? `: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}` : ''}`;
}
