// The operations of a served contract as a caller sees them: method, path template and the path
// with its examples filled in, credentials and scopes, header parameters, the example body. The
// conformance runner calls a live server with them; the shared test suites use them too.

import { readSpecOperations } from '../../src/contract/specOperations.js';
import { exampleBody, resolvePointer, type JsonObject } from '../contract/document.js';

export interface ContractOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/api/v1/posts/{slug}`. */
  template: string;
  /** The template with every path parameter set to its example, and the required query parameters' examples. */
  examplePath: string;
  /** No credential is needed (readSpecOperations: the effective `security` is `[]`, or lists `{}`). */
  isPublic: boolean;
  isList: boolean;
  pathParameters: string[];
  /** Each path parameter's example, by name (the contract's ids or slugs). */
  pathParameterExamples: Record<string, string>;
  /** The statuses the operation declares (numeric keys of `responses`; `default` and `4XX` ranges are left out). */
  declaredStatuses: number[];
  /** `x-required-scopes` (empty when the contract has none). */
  requiredScopes: string[];
  /** `x-required-roles` (empty when any member may call). */
  requiredRoles: string[];
  /** `x-ratelimit-class`, when the contract has one. */
  rateLimitClass?: string;
  /** Header parameters, names in lower case, e.g. `if-match`. */
  headerParameters: { name: string; required: boolean }[];
  /** Whether the operation takes a JSON body, and the example its schema gives. */
  hasRequestBody: boolean;
  requestBodyExample?: unknown;
}

type Json = Record<string, any>;

/** Every operation of a contract (the served openapi.json), with what a caller needs to call it from its examples. */
export function operationsOf(document: Json): ContractOperation[] {
  const operations: ContractOperation[] = [];
  for (const { path: template, method, operation, operationId, isPublic, requiredScopes, requiredRoles, rateLimitClass } of readSpecOperations(document)) {
    if (operationId === undefined) continue;
    const parameters = ((operation as Json).parameters ?? []).map((parameter: Json) => resolve(document, parameter));
    const pathParameters = parameters.filter((parameter: Json) => parameter.in === 'path');
    let examplePath = template;
    for (const parameter of pathParameters) examplePath = examplePath.replace(`{${parameter.name}}`, String(parameter.example));
    // A required query parameter is part of any call that can succeed (the analytics range, say).
    const requiredQuery = parameters.filter((parameter: Json) => parameter.in === 'query' && parameter.required === true && parameter.example !== undefined);
    if (requiredQuery.length > 0) examplePath += `?${new URLSearchParams(requiredQuery.map((parameter: Json) => [parameter.name, String(parameter.example)])).toString()}`;
    const requestBodyMedia = resolve(document, (operation as Json).requestBody ?? {}).content?.['application/json'] as Json | undefined;
    operations.push({
      operationId,
      method: method.toUpperCase(),
      template,
      examplePath,
      isPublic,
      isList: parameters.some((parameter: Json) => parameter.in === 'query' && parameter.name === 'limit'),
      pathParameters: pathParameters.map((parameter: Json) => parameter.name),
      pathParameterExamples: Object.fromEntries(pathParameters.map((parameter: Json) => [parameter.name, String(parameter.example)])),
      declaredStatuses: Object.keys((operation as Json).responses ?? {})
        .filter((key) => /^[1-5][0-9][0-9]$/.test(key))
        .map(Number)
        .sort((a, b) => a - b),
      requiredScopes: [...(requiredScopes ?? [])],
      requiredRoles: [...requiredRoles],
      rateLimitClass,
      headerParameters: parameters
        .filter((parameter: Json) => parameter.in === 'header')
        .map((parameter: Json) => ({ name: String(parameter.name).toLowerCase(), required: parameter.required === true })),
      hasRequestBody: requestBodyMedia !== undefined,
      requestBodyExample: requestBodyMedia === undefined ? undefined : exampleBody(document, operation as JsonObject)?.value,
    });
  }
  return operations;
}

/** The node, or what its `$ref` names (one step, as the bundled documents hold them). */
function resolve(document: Json, node: Json): Json {
  return typeof node.$ref === 'string' ? (resolvePointer(document, node.$ref.slice(1)) as Json) : node;
}
