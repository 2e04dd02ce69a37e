import { loadContractDocument } from './contractClient.js';

export interface ContractOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/api/v1/posts/{slug}`. */
  template: string;
  /** The template with every path parameter set to its example. */
  examplePath: string;
  isPublic: boolean;
  isList: boolean;
  pathParameters: string[];
}

type Json = Record<string, any>;

/** Every operation of a served contract, so shared suites cover a new operation without edits. */
export function contractOperations(api = 'portfolio'): ContractOperation[] {
  const document = loadContractDocument(api) as Json;
  const operations: ContractOperation[] = [];
  for (const [template, pathItem] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(pathItem as Json)) {
      const parameters = ((operation as Json).parameters ?? []).map((parameter: Json) => resolve(document, parameter));
      const pathParameters = parameters.filter((parameter: Json) => parameter.in === 'path');
      let examplePath = template;
      for (const parameter of pathParameters) examplePath = examplePath.replace(`{${parameter.name}}`, String(parameter.example));
      const security = (operation as Json).security ?? document.security ?? [];
      operations.push({
        operationId: (operation as Json).operationId,
        method: method.toUpperCase(),
        template,
        examplePath,
        isPublic: security.length === 0,
        isList: parameters.some((parameter: Json) => parameter.in === 'query' && parameter.name === 'limit'),
        pathParameters: pathParameters.map((parameter: Json) => parameter.name),
      });
    }
  }
  return operations;
}

function resolve(document: Json, node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((current: Json, token: string) => current[token.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}
