// The kinds of resource a contract's paths name, read from the contract alone: for each path
// parameter, the path that names one instance (`/v1/tasks/{taskId}`), the operations that create,
// list, read and delete instances, and the prefix of its ids (`tsk_`, from the parameter's
// example). The conformance runner creates the instances it calls operations on from these, and
// puts their ids where the contract's examples name other records.

import { instanceTemplate, resourcePathsOf, type ResourcePath } from '../contract/resourcePaths.js';
import type { ContractOperation } from './contractOperations.js';

export interface ResourceKind extends ResourcePath<ContractOperation> {
  /** The parameter's example in the contract. */
  example: string;
  /** The prefix of its ids (`tsk_`), when the example has one. */
  idPrefix?: string;
}

const ID_PREFIX = /^([a-z][a-z0-9]*_)[A-Za-z0-9]/;

/** The prefix of an id like `tsk_cb2s0qa6`, if it has one. */
export function idPrefixOf(value: string): string | undefined {
  return ID_PREFIX.exec(value)?.[1];
}

/** The kinds of resource that the operations' path parameters name, by instance template, with their ids' examples. */
export function resourceKindsOf(operations: readonly ContractOperation[]): Map<string, ResourceKind> {
  const kinds = new Map<string, ResourceKind>();
  for (const [template, kind] of resourcePathsOf(operations, (operation) => operation)) {
    // The example of the operation that first names the parameter; the read operation's, when there is one.
    const first = operations.find((operation) => operation.pathParameters.includes(kind.parameter) && instanceTemplate(operation.template, kind.parameter) === template);
    const example = first?.pathParameterExamples[kind.parameter] ?? '';
    kinds.set(template, { ...kind, example: kind.read?.pathParameterExamples[kind.parameter] ?? example, idPrefix: idPrefixOf(example) });
  }
  return kinds;
}

/** The kind of the instance an operation acts on: the one its last path parameter names. */
export function kindActedOn(operation: ContractOperation, kinds: Map<string, ResourceKind>): ResourceKind | undefined {
  const last = operation.pathParameters.at(-1);
  if (last === undefined) return undefined;
  return kinds.get(instanceTemplate(operation.template, last));
}

/** Whether a member of a body holds ids: `id`, `projectId`, `contactIds`. */
export function isIdMember(name: string): boolean {
  return name === 'id' || /[a-z]Ids?$/.test(name);
}

/** Every id in a body (members that hold ids, at any depth), for example `{ ownerId: 'usr_x' }` → `usr_x`. */
export function idsIn(body: unknown, into: (id: string) => void, member = ''): void {
  if (typeof body === 'string') {
    if (isIdMember(member) && idPrefixOf(body)) into(body);
  } else if (Array.isArray(body)) {
    for (const item of body) idsIn(item, into, member);
  } else if (body !== null && typeof body === 'object') {
    for (const [name, value] of Object.entries(body)) idsIn(value, into, name);
  }
}

/** A copy of `body` with each id replaced by what `replace` answers for it (async: the replacement may have to be created). */
export async function replaceIds(body: unknown, replace: (id: string) => Promise<string>, member = ''): Promise<unknown> {
  if (typeof body === 'string') return isIdMember(member) && idPrefixOf(body) ? replace(body) : body;
  if (Array.isArray(body)) {
    const items: unknown[] = [];
    for (const item of body) items.push(await replaceIds(item, replace, member));
    return items;
  }
  if (body !== null && typeof body === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) copy[name] = await replaceIds(value, replace, name);
    return copy;
  }
  return body;
}

/** The first item of the first array member of a list's body (`{ items: [...] }`). */
export function firstListItem(body: unknown): Record<string, unknown> | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const items = Array.isArray(body) ? body : Object.values(body).find((value) => Array.isArray(value));
  const first = (items as unknown[] | undefined)?.[0];
  return first !== null && typeof first === 'object' ? (first as Record<string, unknown>) : undefined;
}
