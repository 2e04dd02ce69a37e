// The agent tools of the Work-Platform API, one per operation of the served document that
// readSpecOperations names a tool (the protected ones): the name is the operationId, the description the operation's summary and description, the input
// schema its parameters and request body. Nothing here is written per operation.

import { unescapePointerToken } from '../contract/jsonPointer.js';
import { readSpecOperations, type SpecOperation } from '../contract/specOperations.js';

type Json = Record<string, unknown>;

export interface ToolParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
}

export interface OperationTool {
  name: string;
  title: string;
  description: string;
  /** A JSON Schema (2020-12) object without `$ref`s: parameters by their names, the request body as `body`. */
  inputSchema: Json & { type: 'object' };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  method: string;
  /** The path template of the operation, e.g. `/v1/tasks/{taskId}`. */
  path: string;
  parameters: ToolParameter[];
  /** Whether the operation takes a JSON body, and must have one. */
  body: 'none' | 'optional' | 'required';
  /** `x-required-scopes`: the token must carry every one of them for the tool to be listed. */
  requiredScopes: string[];
}

/** The input member that carries the request body. No parameter of the API is called that. */
export const BODY_MEMBER = 'body';

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function resolve(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, not ${ref}`);
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    node = isObject(node) ? node[unescapePointerToken(raw)] : undefined;
  }
  if (node === undefined) throw new Error(`$ref ${ref} does not resolve`);
  return node;
}

/** A copy of the node with every `$ref` replaced by what it names (siblings of a `$ref` are kept). */
function inline(document: Json, node: unknown, trail: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inline(document, item, trail));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    if (trail.includes(node.$ref)) throw new Error(`$ref ${node.$ref} refers to itself; a tool's input schema must be finite`);
    const { $ref, ...siblings } = node;
    const target = inline(document, resolve(document, $ref), [...trail, $ref]);
    return Object.keys(siblings).length === 0 ? target : { ...(target as Json), ...(inline(document, siblings, trail) as Json) };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(document, value, trail)]));
}

/** Members a request never sends (`readOnly`), removed so that the agent is not invited to. */
function withoutReadOnly(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutReadOnly);
  if (!isObject(schema)) return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isObject(value)) {
      copy.properties = Object.fromEntries(Object.entries(value).filter(([, member]) => !(isObject(member) && member.readOnly === true)).map(([name, member]) => [name, withoutReadOnly(member)]));
    } else copy[key] = withoutReadOnly(value);
  }
  return copy;
}

/** The problem types of the API by slug (`x-problem-types` of its Problem schema). */
function problemStatuses(document: Json): Map<string, number> {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const declared = isObject(schemas.Problem) && isObject(schemas.Problem['x-problem-types']) ? schemas.Problem['x-problem-types'] : {};
  return new Map(Object.entries(declared).map(([slug, type]) => [slug, isObject(type) ? Number(type.status) : NaN]));
}

/**
 * The summary, the description, and the problem types the operation lists (`x-problem-types`): what a call the
 * input schema admits may still be refused with (a cursor the server did not issue, a lifecycle move, a rule on
 * the stored record). The input schema itself carries the limits (maxLength, pattern, enum, dependentRequired).
 */
function describe(operation: Json, statuses: Map<string, number>): { title: string; description: string } {
  const summary = typeof operation.summary === 'string' ? operation.summary : String(operation.operationId);
  const text = typeof operation.description === 'string' ? operation.description.trim() : '';
  const listed = Array.isArray(operation['x-problem-types']) ? operation['x-problem-types'].filter((slug): slug is string => typeof slug === 'string') : [];
  const problems =
    listed.length === 0
      ? ''
      : `\n\nMay be refused with these problem types (the last segment of the problem's \`type\`): ${listed.map((slug) => `${slug} (${statuses.get(slug) ?? '?'})`).join(', ')}.`;
  return { title: summary, description: `${text === '' ? summary : `${summary}\n\n${text}`}${problems}` };
}

function toolOf(document: Json, specOperation: SpecOperation, toolName: string, requiredScopes: readonly string[], statuses: Map<string, number>): OperationTool {
  const { method, path } = specOperation;
  const pathItem = specOperation.pathItem as Json;
  const operation = specOperation.operation as Json;
  const byKey = new Map<string, Json>();
  for (const raw of [...((pathItem.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]) {
    const parameter = inline(document, raw) as Json;
    byKey.set(`${String(parameter.in)}:${String(parameter.name)}`, parameter);
  }
  const properties: Json = {};
  const required: string[] = [];
  const parameters: ToolParameter[] = [];
  for (const parameter of byKey.values()) {
    if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') continue;
    const name = String(parameter.name);
    const isRequired = parameter.required === true;
    parameters.push({ name, in: parameter.in, required: isRequired });
    const schema = isObject(parameter.schema) ? parameter.schema : {};
    properties[name] = typeof parameter.description === 'string' ? { ...schema, description: parameter.description } : schema;
    if (isRequired) required.push(name);
  }
  let body: OperationTool['body'] = 'none';
  const requestBody = operation.requestBody === undefined ? undefined : (inline(document, operation.requestBody) as Json);
  const jsonBody = isObject(requestBody?.content) ? (requestBody.content as Json)['application/json'] : undefined;
  if (isObject(jsonBody)) {
    body = requestBody?.required === true ? 'required' : 'optional';
    const schema = withoutReadOnly(jsonBody.schema ?? {}) as Json;
    properties[BODY_MEMBER] = typeof requestBody?.description === 'string' ? { ...schema, description: requestBody.description } : schema;
    if (body === 'required') required.push(BODY_MEMBER);
  }
  const { title, description } = describe(operation, statuses);
  const readOnly = method === 'get';
  // A change to something that exists (a PUT, PATCH or DELETE, or a POST to one resource such as a lifecycle move) may undo what was there; a create only adds.
  const destructive = !readOnly && (method !== 'post' || /\{[^}]+\}/.test(path));
  return {
    name: toolName,
    title,
    description,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    // `x-open-world: true` marks the operations that reach a service outside this API (a language model, GitHub).
    annotations: { title, readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: readOnly || method === 'put' || method === 'delete', openWorldHint: operation['x-open-world'] === true },
    method: method.toUpperCase(),
    path,
    parameters,
    body,
    requiredScopes: [...requiredScopes],
  };
}

/** Every operation of the document that is an MCP tool (readSpecOperations says which), in the document's order. */
export function toolsFromDocument(document: object): OperationTool[] {
  const root = document as Json;
  const statuses = problemStatuses(root);
  return readSpecOperations(root).flatMap((operation) =>
    operation.toolName === undefined || operation.requiredScopes === undefined ? [] : [toolOf(root, operation, operation.toolName, operation.requiredScopes, statuses)],
  );
}

/** Whether a caller with these scopes may call the tool: it is listed only then. */
export function mayCall(tool: OperationTool, scopes: readonly string[]): boolean {
  return tool.requiredScopes.every((scope) => scopes.includes(scope));
}
