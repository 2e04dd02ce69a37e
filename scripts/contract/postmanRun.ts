// The order and the data of a Postman run that can be repeated against one server: every id a
// request needs comes from the response that created it, creates come before what uses them,
// and deletes remove only what the run made, after everything that still uses it.
//
// Derived from the document: a path parameter `{taskId}` of `/v1/tasks/{taskId}…` names the record
// that `POST /v1/tasks` (answering 201) creates, held in the collection variable `taskId` and its
// ETag in `taskETag`. A body member `taskId` (or `taskIds`) of an example names the run's record too.
// What the document says only in prose comes from postmanRunPlan.ts.

import {
  exampleBody,
  isJsonObject,
  listOperations,
  lowestSuccessStatus,
  operationParameters,
  type JsonObject,
  type JsonValue,
  type OperationEntry,
} from './document.js';
import { RUN_PLANS, type ApiRunPlan, type PlannedStep } from './postmanRunPlan.js';
import { resourcePathsOf } from './resourcePaths.js';

/** A record kind the API creates: `POST {collectionPath}` answers 201 and `{collectionPath}/{param}` names one. */
export interface RunResource {
  param: string;
  stem: string;
  collectionPath: string;
  create: OperationEntry;
}

export interface RunStep {
  entry: OperationEntry;
  operationId: string;
  /** Set on a request beyond the operation's own (a setup request of a lifecycle). */
  key?: string;
  name?: string;
  why?: string;
  folder: string;
  /** The record whose id the request sends in its path (the last bound path parameter's). */
  stem?: string;
  /** The record whose id the request's answer holds and the run keeps. */
  creates?: string;
  /** Path parameter → value (a `{{variable}}` or the example). */
  pathValues: Map<string, string>;
  /** The JSON body's example with the run's ids and dates in, or undefined. */
  body?: { mediaType: string; value: JsonValue };
  /** Records the request sends the id of (path or body), other than the one it creates. */
  uses: Set<string>;
}

export interface RunFolder {
  name: string;
  tag?: JsonObject;
  steps: RunStep[];
}

export interface RunOrder {
  folders: RunFolder[];
  prerequest: string[];
}

export const CLEAN_UP_FOLDER = 'Clean up';

export const idVariable = (stem: string): string => `${stem}Id`;
export const etagVariable = (stem: string): string => `${stem}ETag`;

function stemOf(param: string): string {
  return param.endsWith('Id') && param.length > 2 ? param.slice(0, -2) : param;
}

/** Record kinds the API creates (`POST {collectionPath}` answering 201), by path parameter name. */
export function runResources(document: JsonObject): Map<string, RunResource> {
  const resources = new Map<string, RunResource>();
  for (const kind of resourcePathsOf(listOperations(document), (entry) => ({ method: entry.method, template: entry.path })).values()) {
    if (resources.has(kind.parameter) || !kind.create || lowestSuccessStatus(kind.create.operation) !== 201) continue;
    resources.set(kind.parameter, { param: kind.parameter, stem: stemOf(kind.parameter), collectionPath: kind.collection, create: kind.create });
  }
  return resources;
}

function exampleText(value: JsonValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function parameterValue(parameter: JsonObject): string {
  const schema = isJsonObject(parameter.schema) ? parameter.schema : {};
  return exampleText(parameter.example) ?? exampleText(schema.example) ?? exampleText(schema.default) ?? '';
}

function buildStep(
  document: JsonObject,
  resources: Map<string, RunResource>,
  plan: ApiRunPlan,
  entry: OperationEntry,
  planned: PlannedStep | undefined,
): RunStep {
  const operationId = String(entry.operation.operationId);
  const ownResource = [...resources.values()].find((resource) => resource.create.pointer === entry.pointer);
  const creates = ownResource ? (planned?.stem ?? ownResource.stem) : undefined;
  const uses = new Set<string>();
  const pathValues = new Map<string, string>();
  let stem: string | undefined;
  const pathParameters = new Map(operationParameters(document, entry).filter((p) => p.in === 'path').map((p) => [p.name, p.parameter]));
  for (const match of entry.path.matchAll(/\{([^}]+)\}/g)) {
    const name = match[1]!;
    const resource = resources.get(name);
    if (resource) {
      // The plan's stem names the record of the request's own (last) path parameter.
      const isLast = !entry.path.slice(match.index + match[0].length).includes('{');
      const recordStem = isLast && planned?.stem && !creates ? planned.stem : resource.stem;
      pathValues.set(name, `{{${idVariable(recordStem)}}}`);
      uses.add(recordStem);
      stem = recordStem;
    } else {
      pathValues.set(name, parameterValue(pathParameters.get(name) ?? {}));
    }
  }

  let body = exampleBody(document, entry.operation);
  if (body && planned?.body) body = { mediaType: body.mediaType, value: withPathExamples(document, planned.body) };
  else if (body && isJsonObject(body.value)) {
    const kept = new Set(plan.keepExample?.[operationId]?.members ?? []);
    const value: JsonObject = { ...body.value };
    for (const [member, current] of Object.entries(value)) {
      if (kept.has(member)) continue;
      const single = /^(.+)Id$/.exec(member);
      const list = /^(.+)Ids$/.exec(member);
      const stemName = single?.[1] ?? list?.[1];
      if (!stemName || stemName === creates || ![...resources.values()].some((resource) => resource.stem === stemName)) continue;
      // Only an id the example gives is replaced (a null that clears a reference stays null).
      if (list ? !Array.isArray(current) || current.length === 0 : typeof current !== 'string') continue;
      value[member] = list ? [`{{${idVariable(stemName)}}}`] : `{{${idVariable(stemName)}}}`;
      uses.add(stemName);
    }
    Object.assign(value, plan.bodyOverrides?.[operationId] ?? {});
    body = { mediaType: body.mediaType, value };
  }
  // A plan's body that names a record of the run uses it as well.
  for (const current of Object.values(planned?.body ?? {})) {
    const used = typeof current === 'string' ? /^\{\{(.+)Id\}\}$/.exec(current)?.[1] : undefined;
    if (used) uses.add(used);
  }

  const tags = Array.isArray(entry.operation.tags) ? entry.operation.tags : [];
  return {
    entry,
    operationId,
    ...(planned?.key ? { key: planned.key } : {}),
    ...(planned?.name ? { name: planned.name } : {}),
    ...(planned?.why ? { why: planned.why } : {}),
    folder: typeof tags[0] === 'string' ? tags[0] : '',
    ...(stem ? { stem } : {}),
    ...(creates ? { creates } : {}),
    pathValues,
    ...(body ? { body } : {}),
    uses,
  };
}

/** A plan's body with each `<example of name>` replaced by the example of the path parameter `name`. */
function withPathExamples(document: JsonObject, body: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(body).map(([member, value]) => {
      const name = typeof value === 'string' ? /^<example of (.+)>$/.exec(value)?.[1] : undefined;
      if (!name) return [member, value];
      const parameter = listOperations(document)
        .flatMap((entry) => operationParameters(document, entry))
        .find((candidate) => candidate.in === 'path' && candidate.name === name && parameterValue(candidate.parameter) !== '');
      if (!parameter) throw new Error(`Postman run plan: no path parameter ${name} with an example`);
      return [member, parameterValue(parameter.parameter)];
    }),
  );
}

/** Phases of a folder: creates, reads of lists, reads of one, changes, moves, deletes of a part, deletes. */
function phaseOf(step: RunStep, resources: Map<string, RunResource>): number {
  const { method, path } = step.entry;
  if (step.creates) return 0;
  if (method === 'get') return step.stem ? 2 : 1;
  if (method === 'put' || method === 'patch') return 3;
  if (method === 'delete') return isRecordDelete(step, resources) ? 6 : 5;
  return path.includes('{') ? 4 : 1;
}

function isRecordDelete(step: RunStep, resources: Map<string, RunResource>): boolean {
  if (step.entry.method !== 'delete') return false;
  const last = /\{([^}]+)\}$/.exec(step.entry.path);
  return last !== null && resources.has(last[1]!);
}

/** Sorts so that each item comes after those it depends on, keeping the given order otherwise. */
function stableTopologicalSort<T>(items: T[], dependsOn: (item: T, other: T) => boolean, label: (item: T) => string): T[] {
  const placed: T[] = [];
  const remaining = [...items];
  while (remaining.length > 0) {
    const index = remaining.findIndex((item) => remaining.every((other) => other === item || !dependsOn(item, other)));
    if (index < 0) throw new Error(`Postman run order: a cycle among ${remaining.map(label).join(', ')}`);
    placed.push(...remaining.splice(index, 1));
  }
  return placed;
}

/** The requests of a repeatable run of the API's collection, in folders, in the order they run. */
export function planRun(api: string, document: JsonObject): RunOrder {
  const plan = RUN_PLANS[api] ?? {};
  const resources = runResources(document);
  const operations = listOperations(document);
  const byId = new Map(operations.map((entry) => [String(entry.operation.operationId), entry]));
  const tags = (Array.isArray(document.tags) ? document.tags : []).filter(isJsonObject);

  const lifecycleSteps = new Map<string, RunStep[]>();
  const plannedPrimaries = new Map<string, PlannedStep>();
  for (const [folder, planned] of Object.entries(plan.lifecycles ?? {})) {
    lifecycleSteps.set(
      folder,
      planned.map((step) => {
        const entry = byId.get(step.operationId);
        if (!entry) throw new Error(`Postman run plan of ${api}: no operation ${step.operationId}`);
        if (!step.key) plannedPrimaries.set(step.operationId, step);
        return buildStep(document, resources, plan, entry, step);
      }),
    );
  }
  const primaries = operations.map((entry) => buildStep(document, resources, plan, entry, plannedPrimaries.get(String(entry.operation.operationId))));
  const primaryById = new Map(primaries.map((step) => [step.operationId, step]));

  const folders: RunFolder[] = [];
  for (const tag of tags) {
    if (typeof tag.name !== 'string') continue;
    const members = primaries.filter((step) => step.folder === tag.name);
    if (members.length === 0) continue;
    const lifecycle = (lifecycleSteps.get(tag.name) ?? []).map((step) => (step.key ? step : primaryById.get(step.operationId)!));
    const inLifecycle = new Set(lifecycle);
    const creates = stableTopologicalSort(
      members.filter((step) => phaseOf(step, resources) === 0 && !inLifecycle.has(step)),
      (step, other) => other.creates !== undefined && step.uses.has(other.creates),
      (step) => step.operationId,
    );
    const rest = members.filter((step) => phaseOf(step, resources) > 0 && !inLifecycle.has(step));
    const phase = (n: number) => rest.filter((step) => phaseOf(step, resources) === n);
    folders.push({ name: tag.name, tag, steps: [...creates, ...phase(1), ...phase(2), ...phase(3), ...phase(4), ...lifecycle, ...phase(5), ...phase(6)] });
  }

  // Folders run after those whose records they use, in the order of the tags otherwise.
  const createdIn = new Map<string, RunFolder>();
  for (const folder of folders) for (const step of folder.steps) if (step.creates) createdIn.set(step.creates, folder);
  const ordered = stableTopologicalSort(
    folders,
    (folder, other) => folder.steps.some((step) => [...step.uses].some((stem) => createdIn.get(stem) === other && other !== folder)),
    (folder) => folder.name,
  );

  // A delete stays at the end of its folder unless a later request still uses the record, or a
  // record created with a reference to it is deleted later: then it runs in the last folder.
  const creationOrder = ordered.flatMap((folder) => folder.steps.filter((step) => step.creates).map((step) => step.creates!));
  const deleteOf = new Map<string, { step: RunStep; folder: RunFolder }>();
  for (const folder of ordered) {
    for (const step of folder.steps) if (isRecordDelete(step, resources) && step.stem) deleteOf.set(step.stem, { step, folder });
  }
  const folderIndex = (folder: RunFolder) => ordered.indexOf(folder);
  const moved = new Set<string>();
  for (const [stem, { folder }] of deleteOf) {
    const usedLater = ordered.some((other) => folderIndex(other) > folderIndex(folder) && other.steps.some((step) => step.uses.has(stem)));
    if (usedLater) moved.add(stem);
  }
  // Deleting T first is what lets S go when T was created naming S: S follows T to the last folder.
  let grew = true;
  while (grew) {
    grew = false;
    for (const step of ordered.flatMap((folder) => folder.steps)) {
      if (!step.creates || !moved.has(step.creates)) continue;
      for (const stem of step.uses) {
        if (deleteOf.has(stem) && !moved.has(stem)) {
          moved.add(stem);
          grew = true;
        }
      }
    }
  }
  const byCreationDescending = (a: RunStep, b: RunStep) => creationOrder.indexOf(b.stem!) - creationOrder.indexOf(a.stem!);
  for (const folder of ordered) {
    const deletes = folder.steps.filter((step) => isRecordDelete(step, resources) && step.stem && deleteOf.get(step.stem)?.step === step);
    folder.steps = [
      ...folder.steps.filter((step) => !deletes.includes(step)),
      ...deletes.filter((step) => !moved.has(step.stem!)).sort(byCreationDescending),
    ];
  }
  const cleanUp = [...moved].map((stem) => deleteOf.get(stem)!.step).sort(byCreationDescending);
  if (cleanUp.length > 0) ordered.push({ name: CLEAN_UP_FOLDER, steps: cleanUp });
  return { folders: ordered, prerequest: plan.prerequest ?? [] };
}
