// Plain-JSON view of an OpenAPI document and the few walks over it that the compiler needs.

import { readSpecOperations, type SpecOperation } from '../../src/contract/specOperations.js';

export { HTTP_METHODS, type HttpMethod } from '../../src/contract/specOperations.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function pointerOf(segments: readonly string[]): string {
  return segments.map((segment) => '/' + escapePointerSegment(segment)).join('');
}

/** Resolves a JSON pointer fragment (without the leading `#`, URI-encoded or not) inside `root`. */
export function resolvePointer(root: JsonValue, fragment: string): JsonValue | undefined {
  if (fragment === '' || fragment === '/') return fragment === '' ? root : undefined;
  if (!fragment.startsWith('/')) return undefined;
  let node: JsonValue | undefined = root;
  for (const rawSegment of fragment.slice(1).split('/')) {
    let segment = rawSegment;
    if (segment.includes('%')) {
      try {
        segment = decodeURIComponent(rawSegment);
      } catch {
        return undefined;
      }
    }
    if (segment.includes('~')) segment = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      node = node[Number(segment)];
    } else if (isJsonObject(node)) {
      node = Object.hasOwn(node, segment) ? node[segment] : undefined;
    } else {
      return undefined;
    }
    if (node === undefined) return undefined;
  }
  return node;
}

/**
 * The JSON pointer of the node that `node` (found at `at`) finally stands for: the target of its chain of
 * internal `$ref`s, or `at` itself. Used to name the file an author has to edit.
 */
export function pointerOfTarget(document: JsonObject, node: JsonValue | undefined, at: string): string {
  const seen = new Set<string>();
  let current = node;
  let pointer = at;
  while (isJsonObject(current) && typeof current.$ref === 'string' && current.$ref.startsWith('#') && !seen.has(current.$ref)) {
    seen.add(current.$ref);
    pointer = current.$ref.slice(1);
    current = resolvePointer(document, pointer);
  }
  return pointer;
}

/**
 * Follows internal `$ref`s (`#/...`) until a non-reference node is reached.
 * Returns undefined when a reference does not resolve or the chain loops.
 */
export function dereference(document: JsonObject, node: JsonValue | undefined): JsonValue | undefined {
  const seen = new Set<string>();
  let current = node;
  while (isJsonObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (!ref.startsWith('#') || seen.has(ref)) return undefined;
    seen.add(ref);
    current = resolvePointer(document, ref.slice(1));
  }
  return current;
}

/** An operation as readSpecOperations reads it (public, scopes, class, idempotent…), its nodes typed as plain JSON. */
export interface OperationEntry extends SpecOperation {
  pathItem: JsonObject;
  operation: JsonObject;
}

/** Every operation of the document in the order of `paths` and then of HTTP_METHODS. */
export function listOperations(document: JsonObject): OperationEntry[] {
  return readSpecOperations(document) as OperationEntry[];
}

export interface ParameterEntry {
  name: string;
  in: string;
  parameter: JsonObject;
  /** JSON pointer of the parameter's definition (a component when it is referenced). */
  pointer: string;
}

/** Path-item parameters overridden by operation parameters with the same name and location. */
export function operationParameters(document: JsonObject, entry: OperationEntry): ParameterEntry[] {
  const byKey = new Map<string, ParameterEntry>();
  const lists = [
    { list: entry.pathItem.parameters, at: pointerOf(['paths', entry.path, 'parameters']) },
    { list: entry.operation.parameters, at: `${entry.pointer}/parameters` },
  ];
  for (const { list, at } of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((raw, index) => {
      const parameter = dereference(document, raw);
      if (!isJsonObject(parameter)) return;
      if (typeof parameter.name !== 'string' || typeof parameter.in !== 'string') return;
      const pointer = pointerOfTarget(document, raw, `${at}/${index}`);
      byKey.set(`${parameter.in}:${parameter.name}`, { name: parameter.name, in: parameter.in, parameter, pointer });
    });
  }
  return [...byKey.values()];
}

/** Whether the operation declares the Idempotency-Key header parameter. */
export function takesIdempotencyKey(document: JsonObject, entry: OperationEntry): boolean {
  return operationParameters(document, entry).some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key');
}

/** The lowest 2xx status the operation declares (`2XX` counts as 200), or undefined. */
export function lowestSuccessStatus(operation: JsonObject): number | undefined {
  const responses = operation.responses;
  if (!isJsonObject(responses)) return undefined;
  let lowest: number | undefined;
  for (const key of Object.keys(responses)) {
    const status = /^2[0-9][0-9]$/.test(key) ? Number(key) : /^2XX$/i.test(key) ? 200 : undefined;
    if (status !== undefined && (lowest === undefined || status < lowest)) lowest = status;
  }
  return lowest;
}

export function describeOperation(entry: OperationEntry): string {
  const id = typeof entry.operation.operationId === 'string' ? ` (${entry.operation.operationId})` : '';
  return `${entry.method.toUpperCase()} ${entry.path}${id}`;
}

/** The JSON request body example the spec gives (example, first of examples, or the schema's example). */
export function exampleBody(document: JsonObject, operation: JsonObject): { mediaType: string; value: JsonValue } | undefined {
  const requestBody = dereference(document, operation.requestBody);
  if (!isJsonObject(requestBody) || !isJsonObject(requestBody.content)) return undefined;
  for (const [mediaType, media] of Object.entries(requestBody.content)) {
    if (!/json/i.test(mediaType) || !isJsonObject(media)) continue;
    const examples = isJsonObject(media.examples) ? Object.values(media.examples) : [];
    const firstExample = dereference(document, examples[0]);
    const schema = dereference(document, media.schema);
    const value =
      media.example ??
      (isJsonObject(firstExample) ? firstExample.value : undefined) ??
      (isJsonObject(schema) ? schema.example : undefined);
    if (value !== undefined) return { mediaType, value };
  }
  return undefined;
}
