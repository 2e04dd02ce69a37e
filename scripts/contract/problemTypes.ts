// The problem types of an API: `x-problem-types` of its `Problem` schema (slug → status, title,
// when), the one list the server's problems, the generated rules, the typed client and the
// reference page read. The API's description shows them where it says `<!-- problem-types -->`.

import { dereference, isJsonObject, listOperations, type JsonObject } from './document.js';
import type { ContractProblem } from './problems.js';

export const PROBLEM_TYPES_MARKER = '<!-- problem-types -->';

export interface ProblemType {
  status: number;
  title: string;
  when: string;
}

function declared(document: JsonObject): JsonObject | undefined {
  const schemas = isJsonObject(document.components) && isJsonObject(document.components.schemas) ? document.components.schemas : {};
  const problem = schemas.Problem;
  return isJsonObject(problem) && isJsonObject(problem['x-problem-types']) ? problem['x-problem-types'] : undefined;
}

/** The problem types by slug, in the order of the spec; empty when the API declares none. */
export function problemTypesOf(document: JsonObject): Record<string, ProblemType> {
  const found: Record<string, ProblemType> = {};
  for (const [slug, entry] of Object.entries(declared(document) ?? {})) {
    if (!isJsonObject(entry)) continue;
    found[slug] = { status: Number(entry.status), title: String(entry.title), when: String(entry.when) };
  }
  return found;
}

export function checkProblemTypes(document: JsonObject, rootLabel: string): ContractProblem[] {
  const types = declared(document);
  if (!types) return [];
  const where = `${rootLabel}#/components/schemas/Problem/x-problem-types`;
  const problems: ContractProblem[] = [];
  for (const [slug, entry] of Object.entries(types)) {
    if (!/^[a-z][a-z0-9-]*$/.test(slug)) problems.push({ file: where, where: slug, message: 'a slug is lower-case letters, digits and hyphens, starting with a letter' });
    if (!isJsonObject(entry) || !Number.isInteger(entry.status) || (entry.status as number) < 400 || (entry.status as number) > 599 || typeof entry.title !== 'string' || typeof entry.when !== 'string') {
      problems.push({ file: where, where: slug, message: 'write status (400–599), title (the same for every problem of the type) and when (one sentence)' });
    }
  }
  const description = isJsonObject(document.info) ? document.info.description : undefined;
  if (typeof description !== 'string' || !description.includes(PROBLEM_TYPES_MARKER)) {
    problems.push({ file: rootLabel, where: 'info.description', message: `write ${PROBLEM_TYPES_MARKER} on a line of its own where the table of problem types belongs (under "Errors")` });
  }
  problems.push(...operationProblemTypes(document, rootLabel).problems);
  return problems;
}

/** The default `type` base of the served documents' examples (a deployment sets its own). */
const EXAMPLE_TYPE_BASE = 'https://errors.work-platform.example/problems';

/**
 * The document with the problem types shown where clients look: a table in place of the marker in
 * `info.description`, and one example body per type in the Problem schema's `examples`.
 */
export function withProblemTypeTable(document: JsonObject): JsonObject {
  const types = problemTypesOf(document);
  const info = document.info;
  if (Object.keys(types).length === 0 || !isJsonObject(info) || typeof info.description !== 'string') return document;
  const examples = Object.entries(types).map(([slug, type], index) => ({
    type: `${EXAMPLE_TYPE_BASE}/${slug}`,
    title: type.title,
    status: type.status,
    detail: type.when,
    requestId: `req_${(0x1000000 + index).toString(16).padStart(24, '0')}`,
  }));
  const components = document.components as JsonObject;
  const schemas = components.schemas as JsonObject;
  const problem = schemas.Problem as JsonObject;
  document = { ...document, components: { ...components, schemas: { ...schemas, Problem: { ...problem, examples } } } };
  const table = [
    '| Problem type (slug) | Status | Title | When |',
    '|---|---|---|---|',
    ...Object.entries(types).map(([slug, type]) => `| \`${slug}\` | ${type.status} | ${type.title} | ${type.when} |`),
  ].join('\n');
  return { ...document, info: { ...info, description: info.description.replace(PROBLEM_TYPES_MARKER, table) } };
}

/** The extension that lists problem types: on a response (which of its status's types it carries) and, written by the build, on an operation. */
export const OPERATION_PROBLEM_TYPES = 'x-problem-types';

const isProblemResponse = (response: JsonObject): boolean =>
  isJsonObject(response.content) && Object.keys(response.content).some((mediaType) => mediaType === 'application/problem+json');

/**
 * The problem types each operation may answer, in the order of its statuses: for each declared error response that
 * is a problem, the types its `x-problem-types` names, or else every type of its status. Problems name what to fix.
 */
export function operationProblemTypes(document: JsonObject, rootLabel: string): { byOperation: Map<string, string[]>; problems: ContractProblem[] } {
  const types = problemTypesOf(document);
  const byOperation = new Map<string, string[]>();
  const problems: ContractProblem[] = [];
  if (Object.keys(types).length === 0) return { byOperation, problems };
  for (const entry of listOperations(document)) {
    const where = `${entry.method.toUpperCase()} ${entry.path}`;
    if (OPERATION_PROBLEM_TYPES in entry.operation) {
      problems.push({ file: rootLabel, where, message: `delete ${OPERATION_PROBLEM_TYPES}: the build writes it from the operation's responses (a response may narrow its status's types with ${OPERATION_PROBLEM_TYPES})` });
    }
    const responses = isJsonObject(entry.operation.responses) ? entry.operation.responses : {};
    const slugs: string[] = [];
    for (const status of Object.keys(responses).sort()) {
      const response = dereference(document, responses[status]);
      if (!/^[45][0-9][0-9]$/.test(status) || !isJsonObject(response) || !isProblemResponse(response)) continue;
      const ofStatus = Object.entries(types).filter(([, type]) => type.status === Number(status)).map(([slug]) => slug);
      const named = response[OPERATION_PROBLEM_TYPES];
      let carried = ofStatus;
      if (named !== undefined) {
        if (!Array.isArray(named) || named.some((slug) => typeof slug !== 'string' || !ofStatus.includes(slug))) {
          problems.push({ file: rootLabel, where: `${where} responses.${status}`, message: `${OPERATION_PROBLEM_TYPES} must list problem types of status ${status} (${ofStatus.join(', ') || 'none declared'})` });
          continue;
        }
        carried = named as string[];
      }
      if (carried.length === 0) {
        problems.push({ file: rootLabel, where: `${where} responses.${status}`, message: `no problem type in Problem's x-problem-types has status ${status}; add one or drop the response` });
      }
      for (const slug of carried) if (!slugs.includes(slug)) slugs.push(slug);
    }
    if (entry.operationId !== undefined) byOperation.set(entry.operationId, slugs);
  }
  return { byOperation, problems };
}

/** The document with each operation's `x-problem-types`: the problem types it may answer, where tools (agents, clients, fuzzers) read them. */
export function withOperationProblemTypes(document: JsonObject): JsonObject {
  const { byOperation } = operationProblemTypes(document, '');
  if (byOperation.size === 0) return document;
  const copy = structuredClone(document);
  for (const entry of listOperations(copy)) {
    const slugs = entry.operationId === undefined ? undefined : byOperation.get(entry.operationId);
    if (slugs) entry.operation[OPERATION_PROBLEM_TYPES] = slugs;
  }
  return copy;
}
