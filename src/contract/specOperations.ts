// The one reader of a contract's operations: which there are, and what each declares (who may call
// it, its scopes and roles, its rate-limit class and cost, whether it is idempotent, whether it is an
// MCP tool). The runtime, the contract build, MCP, the conformance runner and the tests all ask it,
// so that each question has one answer. It reads a parsed OpenAPI 3.1 document (bundled or
// dereferenced) and never throws: what is malformed reads as undefined, and each user decides
// whether that stops it (the start-up does; the build names what to write).

import { unescapePointerToken } from './jsonPointer.js';

/**
 * The methods of a path item in the order their operations are listed: reads, then creates and
 * changes, and deletes last (the Postman collection runs them in this order against demo data).
 */
export const HTTP_METHODS = ['get', 'head', 'options', 'post', 'put', 'patch', 'delete', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One way to be let in: each security scheme the call must satisfy, with the scopes it must carry. `{}` admits anyone. */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/**
 * What a caller must present, from the operation's effective `security` (its own, or else the root's):
 * - `required`: a credential meeting one of the requirements;
 * - `none`: nothing (`security: []`, or no `security` anywhere): the operation is public;
 * - `optional`: a requirement is `{}` (OpenAPI: anonymous calls are admitted) beside requirements with a
 *   credential. The call needs no credential, so the operation counts as public; the server does not
 *   serve such an operation (it either knows a caller or has none) and the build refuses it.
 */
export type CredentialNeed = 'required' | 'none' | 'optional';

export interface SpecOperation {
  /** Undefined when the operation has no operationId (or an empty one). */
  operationId: string | undefined;
  method: HttpMethod;
  /** The path template, e.g. `/v1/tasks/{taskId}`. */
  path: string;
  /** JSON pointer of the operation in the document, e.g. `/paths/~1v1~1tasks/get`. */
  pointer: string;
  /** The path item (its `$ref` followed) and the operation as the document holds them. */
  pathItem: Readonly<Record<string, unknown>>;
  operation: Readonly<Record<string, unknown>>;
  /** The effective security requirements: the operation's own `security` when it has one, else the root's; `[]` when neither. */
  security: readonly SecurityRequirement[];
  credential: CredentialNeed;
  /** No credential is needed to call it (`credential` is `none` or `optional`). */
  isPublic: boolean;
  /** `x-required-scopes`: a caller's token must carry every one. Undefined when missing or not a list of strings. */
  requiredScopes: readonly string[] | undefined;
  /** `x-required-roles`: only these roles may call; empty when every role may (or when it is not a list of strings). */
  requiredRoles: readonly string[];
  /** `x-ratelimit-class`: the bucket a call is counted in. Undefined when missing or empty. */
  rateLimitClass: string | undefined;
  /** `x-ratelimit-cost`: the units a call counts (1 when not declared). Undefined when declared but not a whole number of 1 or more. */
  rateLimitCost: number | undefined;
  /**
   * `x-idempotent`, true by default on POST and false elsewhere: the call may carry an Idempotency-Key
   * and a repeat replays the first answer. Undefined when declared but not true or false.
   */
  idempotent: boolean | undefined;
  /**
   * The name of the operation as an MCP tool (its operationId), or undefined when it is not one: public
   * operations (documents to fetch), operations without x-required-scopes, and HEAD, OPTIONS and TRACE are not.
   */
  toolName: string | undefined;
}

type Json = Record<string, unknown>;

/** The methods whose operations are actions an agent may take. */
const TOOL_METHODS: ReadonlySet<HttpMethod> = new Set(['get', 'post', 'put', 'patch', 'delete']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Follows a local `$ref` chain (`#/...`); undefined when it leaves the document, loops or resolves to nothing. */
function followed(document: Json, node: unknown): unknown {
  const seen = new Set<string>();
  let current = node;
  while (isObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (!ref.startsWith('#') || seen.has(ref)) return undefined;
    seen.add(ref);
    current = ref
      .slice(1)
      .split('/')
      .slice(1)
      .reduce<unknown>((parent, raw) => {
        const token = unescapePointerToken(decodeURIComponent(raw));
        return isObject(parent) && Object.hasOwn(parent, token) ? parent[token] : Array.isArray(parent) ? parent[Number(token)] : undefined;
      }, document);
  }
  return current;
}

const pointerToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** The security requirements in force for an operation: its own `security` overrides the root's. */
export function effectiveSecurity(document: object, operation: Readonly<Record<string, unknown>>): SecurityRequirement[] {
  const declared = operation.security ?? (document as Json).security;
  if (!Array.isArray(declared)) return [];
  return declared.filter(isObject).map((requirement) => Object.fromEntries(Object.entries(requirement).map(([scheme, scopes]) => [scheme, isStringList(scopes) ? scopes : []])));
}

export function credentialNeedOf(security: readonly SecurityRequirement[]): CredentialNeed {
  if (security.length === 0) return 'none';
  return security.some((requirement) => Object.keys(requirement).length === 0) ? 'optional' : 'required';
}

/** The one default: an operation is idempotent when it says so, and a POST when it says nothing. */
export function isIdempotent(method: string, declared: unknown): boolean | undefined {
  if (declared === undefined) return method.toLowerCase() === 'post';
  return typeof declared === 'boolean' ? declared : undefined;
}

function readOperation(document: Json, path: string, pathItem: Json, method: HttpMethod, operation: Json): SpecOperation {
  const operationId = typeof operation.operationId === 'string' && operation.operationId.trim() !== '' ? operation.operationId : undefined;
  const security = effectiveSecurity(document, operation);
  const declared = operation.security ?? document.security;
  // A `security` that is not a list of requirements admits no one rather than everyone.
  const wellFormed = declared === undefined || (Array.isArray(declared) && declared.every(isObject));
  const credential = wellFormed ? credentialNeedOf(security) : 'required';
  const isPublic = credential !== 'required';
  const requiredScopes = isStringList(operation['x-required-scopes']) ? operation['x-required-scopes'] : undefined;
  const rateLimitClass = typeof operation['x-ratelimit-class'] === 'string' && operation['x-ratelimit-class'] !== '' ? operation['x-ratelimit-class'] : undefined;
  const cost = operation['x-ratelimit-cost'] ?? 1;
  return {
    operationId,
    method,
    path,
    pointer: `/paths/${pointerToken(path)}/${method}`,
    pathItem,
    operation,
    security,
    credential,
    isPublic,
    requiredScopes,
    requiredRoles: isStringList(operation['x-required-roles']) ? operation['x-required-roles'] : [],
    rateLimitClass,
    rateLimitCost: typeof cost === 'number' && Number.isInteger(cost) && cost >= 1 ? cost : undefined,
    idempotent: isIdempotent(method, operation['x-idempotent']),
    toolName: !isPublic && requiredScopes !== undefined && TOOL_METHODS.has(method) ? operationId : undefined,
  };
}

/** Every operation of the document, once, in the order of `paths` and then of HTTP_METHODS. */
export function readSpecOperations(document: object): SpecOperation[] {
  const root = document as Json;
  const operations: SpecOperation[] = [];
  if (!isObject(root.paths)) return operations;
  for (const [path, rawPathItem] of Object.entries(root.paths)) {
    const pathItem = followed(root, rawPathItem);
    if (!isObject(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (isObject(operation)) operations.push(readOperation(root, path, pathItem, method, operation));
    }
  }
  return operations;
}
