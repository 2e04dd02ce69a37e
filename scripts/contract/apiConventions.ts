// Conventions written once: `x-conventions` in an API's root openapi.yaml says which headers and error answers follow
// from an operation's own declarations (its security, its rate-limit class, a request body, query parameters, an
// Idempotency-Key). The build adds them to every operation they apply to and strips the block, so the served
// documents declare everything explicitly while the files under paths/ hold only what is each operation's own.
// A hand-written copy of something the build adds is refused: a differing one because the served document could only
// say one of the two, an identical one because it is a second place to change.
//
//   x-conventions:
//     successHeaders:                    # on every 2xx answer, before the operation's own headers
//       - of: every                      # which operations (see OPERATION_KINDS)
//         headers: [X-Request-Id]        # names under components/headers
//     responses:                         # the first entry of a status whose `of` matches is added
//       - status: '401'
//         of: protected
//         response: Unauthorized         # a name under components/responses
//         byRateLimitClass: {ai: AiTooManyRequests}   # optional: another response for operations of a class

import { sourceFileOf, type BundledSpec } from './bundle.js';
import {
  describeOperation,
  escapePointerSegment,
  isJsonObject,
  listOperations,
  operationParameters,
  takesIdempotencyKey,
  resolvePointer,
  type JsonObject,
  type JsonValue,
  type OperationEntry,
} from './document.js';
import type { ContractProblem } from './problems.js';

export const CONVENTIONS_KEY = 'x-conventions';

/** What an entry's `of` may name: which operations a convention applies to. A list means any of them. */
export const OPERATION_KINDS = {
  every: 'every operation',
  protected: 'operations that need a credential',
  public: 'operations with `security: []`',
  requestBody: 'operations that take a request body',
  queryParameters: 'operations that declare a query parameter',
  idempotencyKey: 'operations that take the Idempotency-Key header',
  requiredRoles: 'operations that declare x-required-roles',
} as const;
type OperationKind = keyof typeof OPERATION_KINDS;

interface HeaderConvention {
  of: OperationKind[];
  headers: string[];
}

interface ResponseConvention {
  status: string;
  of: OperationKind[];
  response: string;
  byRateLimitClass: Record<string, string>;
}

export interface ApiConventions {
  successHeaders: HeaderConvention[];
  responses: ResponseConvention[];
}

const NO_CONVENTIONS: ApiConventions = { successHeaders: [], responses: [] };

/** Reads and checks `x-conventions` of the bundled root document; an API without one gets nothing added. */
export function readConventions(bundled: BundledSpec): { conventions: ApiConventions; problems: ContractProblem[] } {
  const raw = bundled.document[CONVENTIONS_KEY];
  if (raw === undefined) return { conventions: NO_CONVENTIONS, problems: [] };
  const problems: ContractProblem[] = [];
  const report = (where: string, message: string) => problems.push({ file: bundled.rootLabel, where: `${CONVENTIONS_KEY}.${where}`, message });
  if (!isJsonObject(raw)) {
    report('', 'must be a mapping with successHeaders and responses');
    return { conventions: NO_CONVENTIONS, problems };
  }
  const components = isJsonObject(bundled.document.components) ? bundled.document.components : {};
  const named = (kind: 'headers' | 'responses', name: unknown, where: string): name is string => {
    const table = components[kind];
    if (typeof name === 'string' && isJsonObject(table) && Object.hasOwn(table, name)) return true;
    report(where, `${JSON.stringify(name)} is not under components.${kind}; name one of ${isJsonObject(table) ? Object.keys(table).join(', ') : '(none)'}`);
    return false;
  };
  const kindsOf = (value: JsonValue | undefined, where: string): OperationKind[] => {
    const list = Array.isArray(value) ? value : [value];
    const kinds = list.filter((kind): kind is OperationKind => typeof kind === 'string' && Object.hasOwn(OPERATION_KINDS, kind));
    if (kinds.length === 0 || kinds.length !== list.length) report(`${where}.of`, `write one of ${Object.keys(OPERATION_KINDS).join(', ')} (or a list of them)`);
    return kinds;
  };

  const conventions: ApiConventions = { successHeaders: [], responses: [] };
  const headerEntries = Array.isArray(raw.successHeaders) ? raw.successHeaders : [];
  if (raw.successHeaders !== undefined && !Array.isArray(raw.successHeaders)) report('successHeaders', 'must be a list of {of, headers}');
  headerEntries.forEach((entry, index) => {
    const where = `successHeaders[${index}]`;
    if (!isJsonObject(entry) || !Array.isArray(entry.headers)) {
      report(where, 'write {of: <operations>, headers: [<name under components/headers>, ...]}');
      return;
    }
    const headers = entry.headers.filter((name, position): name is string => named('headers', name, `${where}.headers[${position}]`));
    conventions.successHeaders.push({ of: kindsOf(entry.of, where), headers });
  });
  const responseEntries = Array.isArray(raw.responses) ? raw.responses : [];
  if (raw.responses !== undefined && !Array.isArray(raw.responses)) report('responses', 'must be a list of {status, of, response}');
  responseEntries.forEach((entry, index) => {
    const where = `responses[${index}]`;
    if (!isJsonObject(entry) || typeof entry.status !== 'string' || !/^[1-5][0-9][0-9]$/.test(entry.status)) {
      report(where, "write {status: '<3-digit status, quoted>', of: <operations>, response: <name under components/responses>}");
      return;
    }
    const byClass: Record<string, string> = {};
    if (entry.byRateLimitClass !== undefined) {
      if (!isJsonObject(entry.byRateLimitClass)) report(`${where}.byRateLimitClass`, 'must map a rate-limit class to a name under components/responses');
      else {
        for (const [rateLimitClass, name] of Object.entries(entry.byRateLimitClass)) {
          if (named('responses', name, `${where}.byRateLimitClass.${rateLimitClass}`)) byClass[rateLimitClass] = name;
        }
      }
    }
    const of = kindsOf(entry.of, where);
    if (named('responses', entry.response, `${where}.response`)) conventions.responses.push({ status: entry.status, of, response: entry.response, byRateLimitClass: byClass });
  });
  for (const key of Object.keys(raw)) {
    if (!['description', 'successHeaders', 'responses'].includes(key)) report(key, 'unknown member; x-conventions has description, successHeaders and responses');
  }
  return { conventions, problems };
}

function isKind(document: JsonObject, entry: OperationEntry, kind: OperationKind): boolean {
  switch (kind) {
    case 'every':
      return true;
    case 'protected':
      return !entry.isPublic;
    case 'public':
      return entry.isPublic;
    case 'requestBody':
      return entry.operation.requestBody !== undefined;
    case 'queryParameters':
      return operationParameters(document, entry).some((parameter) => parameter.in === 'query');
    case 'idempotencyKey':
      return takesIdempotencyKey(document, entry);
    case 'requiredRoles':
      return entry.requiredRoles.length > 0;
  }
}

const appliesTo = (document: JsonObject, entry: OperationEntry, of: readonly OperationKind[]) => of.some((kind) => isKind(document, entry, kind));

const describeKinds = (of: readonly OperationKind[]) => of.map((kind) => OPERATION_KINDS[kind]).join(' or ');

interface InjectedHeader {
  name: string;
  value: JsonObject;
  /** Why it is added, for messages. */
  reason: string;
}

interface InjectedResponse {
  status: string;
  value: JsonObject;
  reason: string;
}

/** What the conventions add to one operation: headers on each 2xx answer, and error answers by status. */
export function conventionsFor(document: JsonObject, entry: OperationEntry, conventions: ApiConventions): { headers: InjectedHeader[]; responses: InjectedResponse[] } {
  const headers: InjectedHeader[] = [];
  for (const convention of conventions.successHeaders) {
    if (!appliesTo(document, entry, convention.of)) continue;
    for (const name of convention.headers) {
      if (headers.some((header) => header.name.toLowerCase() === name.toLowerCase())) continue;
      headers.push({ name, value: { $ref: `#/components/headers/${escapePointerSegment(name)}` }, reason: `on every 2xx answer of ${describeKinds(convention.of)}` });
    }
  }
  const responses: InjectedResponse[] = [];
  const { rateLimitClass } = entry;
  for (const convention of conventions.responses) {
    if (responses.some((response) => response.status === convention.status) || !appliesTo(document, entry, convention.of)) continue;
    const byClass = typeof rateLimitClass === 'string' ? convention.byRateLimitClass[rateLimitClass] : undefined;
    const name = byClass ?? convention.response;
    responses.push({
      status: convention.status,
      value: { $ref: `#/components/responses/${escapePointerSegment(name)}` },
      reason: `for ${describeKinds(convention.of)}${byClass ? ` of rate-limit class ${String(rateLimitClass)}` : ''}`,
    });
  }
  return { headers, responses };
}

/** Orders response keys as people read them: by status, ranges (`4XX`) after their statuses, `default` last. */
function statusOrder(key: string): number {
  if (/^[1-5][0-9][0-9]$/.test(key)) return Number(key);
  if (/^[1-5]XX$/i.test(key)) return Number(key[0]) * 100 + 99.5;
  return 1000;
}

function isSuccess(status: string): boolean {
  return /^2([0-9][0-9]|XX)$/i.test(status);
}

/**
 * The document with every convention added to every operation it applies to and `x-conventions` removed. Added
 * headers come before the operation's own; responses are ordered by status. Nothing is added where the operation
 * already declares it (`checkConventionCopies` refuses that).
 */
export function injectConventions(document: JsonObject, conventions: ApiConventions): JsonObject {
  const { [CONVENTIONS_KEY]: _stripped, ...rest } = document;
  const result: JsonObject = structuredClone(rest);
  if (!isJsonObject(result.paths)) return result;
  for (const entry of listOperations(result)) {
    // listOperations dereferences the path item; a path item held elsewhere (a $ref) is changed where it lives.
    const { headers, responses: added } = conventionsFor(result, entry, conventions);
    const operation = entry.operation;
    const own = isJsonObject(operation.responses) ? operation.responses : {};
    const responses: JsonObject = { ...own };
    for (const { status, value } of added) if (!Object.hasOwn(responses, status)) responses[status] = value;
    for (const [status, raw] of Object.entries(responses)) {
      if (!isSuccess(status) || headers.length === 0) continue;
      // A success answer that is a component is copied here, so that the component stays as written.
      const response = resolveInternal(result, raw);
      if (!isJsonObject(response)) continue;
      const ownHeaders = isJsonObject(response.headers) ? response.headers : {};
      const lowerOwn = new Set(Object.keys(ownHeaders).map((name) => name.toLowerCase()));
      const merged: JsonObject = {};
      for (const { name, value } of headers) if (!lowerOwn.has(name.toLowerCase())) merged[name] = value;
      Object.assign(merged, ownHeaders);
      responses[status] = withMemberFirst(response, 'headers', merged);
    }
    operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => statusOrder(a) - statusOrder(b)));
  }
  return result;
}

/** The object an internal `$ref` chain ends at, or the node itself. */
function resolveInternal(document: JsonObject, node: JsonValue): JsonValue | undefined {
  let current: JsonValue | undefined = node;
  const seen = new Set<string>();
  while (isJsonObject(current) && typeof current.$ref === 'string' && current.$ref.startsWith('#') && !seen.has(current.$ref)) {
    seen.add(current.$ref);
    current = resolvePointer(document, current.$ref.slice(1));
  }
  return current;
}

/** `object` with `key` set to `value`, keeping the position the key had, or putting it after `description`. */
function withMemberFirst(object: JsonObject, key: string, value: JsonValue): JsonObject {
  if (Object.hasOwn(object, key)) return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, k === key ? value : v]));
  const entries = Object.entries(object);
  const at = entries.findIndex(([k]) => k === 'description') + 1;
  return Object.fromEntries([...entries.slice(0, at), [key, value], ...entries.slice(at)]);
}

function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const written = (value: JsonValue | undefined) => (isJsonObject(value) && typeof value.$ref === 'string' ? `$ref ${value.$ref}` : 'an inline object');

/**
 * Refuses, in the author's (bundled, not yet injected) document, a copy of something the conventions add: an error
 * answer of an injected status, or an injected header on a 2xx answer. A differing copy is named with what the
 * build adds instead; an identical one as redundant. Either way the fix is to delete it from the operation.
 */
export function checkConventionCopies(bundled: BundledSpec, conventions: ApiConventions): ContractProblem[] {
  const { document } = bundled;
  const problems: ContractProblem[] = [];
  const conventionsAt = `${bundled.rootLabel} ${CONVENTIONS_KEY}`;
  for (const entry of listOperations(document)) {
    const { headers, responses: added } = conventionsFor(document, entry, conventions);
    const own = isJsonObject(entry.operation.responses) ? entry.operation.responses : {};
    const report = (at: string, message: string) => problems.push({ file: sourceFileOf(bundled, at), where: describeOperation(entry), message });
    for (const { status, value, reason } of added) {
      if (!Object.hasOwn(own, status)) continue;
      const at = `${entry.pointer}/responses/${status}`;
      if (sameJson(own[status], value)) {
        report(at, `'${status}' is redundant: the build adds it (${written(value)}) ${reason} (${conventionsAt}); delete it here`);
      } else {
        report(
          at,
          `'${status}' differs from the convention: the build adds ${written(value)} ${reason} (${conventionsAt}), and this operation writes ${written(own[status])}; delete it here (change the shared response component, or the convention, if every such operation should answer otherwise)`,
        );
      }
    }
    if (headers.length === 0) continue;
    for (const [status, raw] of Object.entries(own)) {
      if (!isSuccess(status)) continue;
      const response = resolveInternal(document, raw);
      if (!isJsonObject(response) || !isJsonObject(response.headers)) continue;
      for (const [name, value] of Object.entries(response.headers)) {
        const convention = headers.find((header) => header.name.toLowerCase() === name.toLowerCase());
        if (!convention) continue;
        const at = `${entry.pointer}/responses/${status}/headers/${escapePointerSegment(name)}`;
        if (sameJson(value, convention.value) && name === convention.name) {
          report(at, `header ${name} of the ${status} answer is redundant: the build adds it ${convention.reason} (${conventionsAt}); delete it here`);
        } else {
          report(
            at,
            `header ${name} of the ${status} answer differs from the convention: the build adds ${convention.name} as ${written(convention.value)} ${convention.reason} (${conventionsAt}), and this answer writes ${written(value)}; delete it here (change components/headers/${convention.name} if every answer should say otherwise)`,
          );
        }
      }
    }
  }
  return problems;
}

/** The bundled spec as it is served: conventions added, `x-conventions` removed. Problems of the block itself are ignored here. */
export function withConventions(bundled: BundledSpec): BundledSpec {
  return { ...bundled, document: injectConventions(bundled.document, readConventions(bundled).conventions) };
}
