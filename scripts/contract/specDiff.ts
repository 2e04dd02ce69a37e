// What changed between two bundled OpenAPI documents, operation by operation: a pure function used by
// `npm run check:contract` to compare the specs with the last released snapshot.
//
// Breaking (a client written against `before` may fail against `after`):
//   an operation removed, renamed or moved; a parameter or request member removed; a new required request input
//   (required parameter, required member, required body); an enum value removed; a type removed from a union or
//   a narrowed constraint (smaller maxLength/maximum/maxItems, larger minLength/minimum/minItems, a new or changed
//   pattern or format) in a request; a response member removed or no longer required; a new type in a response;
//   a response status removed; a response header removed or no longer required; `additionalProperties: false` new
//   in a request; a `oneOf`/`anyOf` branch removed from a request; a security requirement
//   a caller met before that no longer suffices (a scope or scheme added, an alternative removed, a public
//   operation made protected).
// Not breaking: anything added that a client may ignore (an operation, an optional parameter or member, an enum
// value, a response status, a response member or header) and a request widened. A path parameter renamed in
// the same place of the template changes no URL, so the operation has not moved; it is still breaking, because
// generated clients and the agent tools name path parameters.
// The operations of `webhooks` (events this API sends) are compared the other way round: their request body
// and headers are what a subscriber reads, so they are judged like a response.
// Schemas reached through a `$ref` are reported at the component's pointer, once, with every operation that uses it.

import { dereference, escapePointerSegment, isJsonObject, listOperations, operationParameters, pointerOfTarget, type JsonObject, type JsonValue } from './document.js';

export type ChangeKind =
  | 'operation-added'
  | 'operation-removed'
  | 'operation-moved'
  | 'parameter-added'
  | 'parameter-removed'
  | 'parameter-now-required'
  | 'parameter-renamed'
  | 'request-body-added'
  | 'request-body-removed'
  | 'request-body-now-required'
  | 'response-added'
  | 'response-removed'
  | 'media-type-added'
  | 'media-type-removed'
  | 'response-header-added'
  | 'response-header-removed'
  | 'response-header-now-optional'
  | 'branch-added'
  | 'branch-removed'
  | 'security-narrowed'
  | 'security-widened'
  | 'member-added'
  | 'member-removed'
  | 'member-now-required'
  | 'member-now-optional'
  | 'enum-value-added'
  | 'enum-value-removed'
  | 'type-added'
  | 'type-removed'
  | 'constraint-narrowed'
  | 'constraint-widened';

export interface SpecChange {
  kind: ChangeKind;
  breaking: boolean;
  /** Every operation the change reaches (sorted). */
  operationIds: string[];
  /** Where the change is: in `after`, or in `before` for something removed. */
  pointer: string;
  /** The shape before and after, as short text (`none` when it did not or does not exist). */
  old: string;
  new: string;
}

type Direction = 'request' | 'response';

interface Collector {
  before: JsonObject;
  after: JsonObject;
  changes: Map<string, SpecChange>;
}

function add(collector: Collector, change: Omit<SpecChange, 'operationIds'>, operationId: string): void {
  const key = `${change.kind}\u0000${change.pointer}\u0000${change.breaking}\u0000${change.old}\u0000${change.new}`;
  const existing = collector.changes.get(key);
  if (existing) {
    if (!existing.operationIds.includes(operationId)) existing.operationIds = [...existing.operationIds, operationId].sort();
  } else collector.changes.set(key, { ...change, operationIds: [operationId] });
}

const show = (value: JsonValue | undefined): string => (value === undefined ? 'none' : JSON.stringify(value));


/** The JSON types a schema admits: its `type` plus those of plain `anyOf`/`oneOf` branches; undefined when it says none. */
function typesOf(document: JsonObject, schema: JsonObject): Set<string> | undefined {
  const types = new Set<string>();
  const own = schema.type;
  if (typeof own === 'string') types.add(own);
  if (Array.isArray(own)) for (const type of own) if (typeof type === 'string') types.add(type);
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = schema[union];
    if (!Array.isArray(branches)) continue;
    for (const raw of branches) {
      const branch = dereference(document, raw);
      if (!isJsonObject(branch)) continue;
      const branchTypes = typesOf(document, branch);
      if (branchTypes) for (const type of branchTypes) types.add(type);
    }
  }
  if (schema.const === null || (Array.isArray(schema.enum) && schema.enum.includes(null))) types.add('null');
  return types.size > 0 ? types : undefined;
}

interface DeclaredMember {
  node: JsonValue;
  at: string;
  /** Further declarations of the member in other `allOf` parts: every one applies (an intersection), in document order. */
  also: { node: JsonValue; at: string }[];
}

/** The members a schema declares, from `properties` and those of `allOf` parts. */
function propertiesOf(document: JsonObject, schema: JsonObject, at: string): Map<string, DeclaredMember> {
  const found = new Map<string, DeclaredMember>();
  const properties = schema.properties;
  if (isJsonObject(properties)) for (const [name, node] of Object.entries(properties)) found.set(name, { node, at: `${at}/properties/${escapePointerSegment(name)}`, also: [] });
  if (Array.isArray(schema.allOf)) {
    schema.allOf.forEach((raw, index) => {
      const part = dereference(document, raw);
      if (!isJsonObject(part)) return;
      const partAt = pointerOfTarget(document, raw, `${at}/allOf/${index}`);
      for (const [name, entry] of propertiesOf(document, part, partAt)) {
        const known = found.get(name);
        if (known) known.also.push({ node: entry.node, at: entry.at }, ...entry.also);
        else found.set(name, entry);
      }
    });
  }
  return found;
}

function requiredOf(document: JsonObject, schema: JsonObject): Set<string> {
  const required = new Set<string>(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
  if (Array.isArray(schema.allOf)) for (const raw of schema.allOf) {
    const part = dereference(document, raw);
    if (isJsonObject(part)) for (const name of requiredOf(document, part)) required.add(name);
  }
  return required;
}

/** Constraints where a smaller value admits less, and those where a larger value admits less. */
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;
const FORMS = ['pattern', 'format'] as const;

function compareSchema(c: Collector, rawBefore: JsonValue | undefined, rawAfter: JsonValue | undefined, atBefore: string, atAfter: string, direction: Direction, operationId: string, seen: Set<string>): void {
  const pointerBefore = pointerOfTarget(c.before, rawBefore, atBefore);
  const pointer = pointerOfTarget(c.after, rawAfter, atAfter);
  const visit = `${pointerBefore}\u0000${pointer}\u0000${direction}`;
  if (seen.has(visit)) return;
  seen.add(visit);
  const before = dereference(c.before, rawBefore);
  const after = dereference(c.after, rawAfter);
  if (!isJsonObject(before) || !isJsonObject(after)) return;
  const request = direction === 'request';

  const typesBefore = typesOf(c.before, before);
  const typesAfter = typesOf(c.after, after);
  if (typesBefore && typesAfter) {
    for (const type of typesBefore) if (!typesAfter.has(type)) add(c, { kind: 'type-removed', breaking: request, pointer, old: [...typesBefore].join(' | '), new: [...typesAfter].join(' | ') }, operationId);
    for (const type of typesAfter) if (!typesBefore.has(type)) add(c, { kind: 'type-added', breaking: !request, pointer, old: [...typesBefore].join(' | '), new: [...typesAfter].join(' | ') }, operationId);
  } else if (!typesBefore && typesAfter && request) {
    add(c, { kind: 'type-removed', breaking: true, pointer, old: 'any type', new: [...typesAfter].join(' | ') }, operationId);
  }

  const enumBefore = Array.isArray(before.enum) ? before.enum : undefined;
  const enumAfter = Array.isArray(after.enum) ? after.enum : undefined;
  if (enumBefore && enumAfter) {
    const keysAfter = new Set(enumAfter.map((value) => JSON.stringify(value)));
    const keysBefore = new Set(enumBefore.map((value) => JSON.stringify(value)));
    // A value a client may send no longer accepted is breaking; one it may receive no longer sent is not.
    for (const value of enumBefore) if (!keysAfter.has(JSON.stringify(value))) add(c, { kind: 'enum-value-removed', breaking: request, pointer, old: `enum ${show(enumBefore)}`, new: `enum ${show(enumAfter)}` }, operationId);
    for (const value of enumAfter) if (!keysBefore.has(JSON.stringify(value))) add(c, { kind: 'enum-value-added', breaking: false, pointer, old: `enum ${show(enumBefore)}`, new: `enum ${show(enumAfter)}` }, operationId);
  } else if (!enumBefore && enumAfter) {
    add(c, { kind: 'constraint-narrowed', breaking: request, pointer, old: 'no enum', new: `enum ${show(enumAfter)}` }, operationId);
  } else if (enumBefore && !enumAfter) {
    add(c, { kind: 'constraint-widened', breaking: !request, pointer, old: `enum ${show(enumBefore)}`, new: 'no enum' }, operationId);
  }

  const bound = (name: string, narrowed: boolean, old: JsonValue | undefined, now: JsonValue | undefined) =>
    add(c, { kind: narrowed ? 'constraint-narrowed' : 'constraint-widened', breaking: narrowed && request, pointer, old: `${name}: ${show(old)}`, new: `${name}: ${show(now)}` }, operationId);
  for (const name of UPPER_BOUNDS) {
    const old = before[name];
    const now = after[name];
    if (old === now) continue;
    if (typeof now === 'number' && (typeof old !== 'number' || now < old)) bound(name, true, old, now);
    else bound(name, false, old, now);
  }
  for (const name of LOWER_BOUNDS) {
    const old = before[name];
    const now = after[name];
    if (old === now) continue;
    if (typeof now === 'number' && (typeof old !== 'number' || now > old)) bound(name, true, old, now);
    else bound(name, false, old, now);
  }
  for (const name of FORMS) {
    const old = before[name];
    const now = after[name];
    if (old === now) continue;
    bound(name, now !== undefined, old, now);
  }

  const propertiesBefore = propertiesOf(c.before, before, pointerBefore);
  const propertiesAfter = propertiesOf(c.after, after, pointer);
  const requiredBefore = requiredOf(c.before, before);
  const requiredAfter = requiredOf(c.after, after);
  for (const [name, entry] of propertiesBefore) {
    if (!propertiesAfter.has(name)) add(c, { kind: 'member-removed', breaking: true, pointer: entry.at, old: `${name}${requiredBefore.has(name) ? ' (required)' : ''}`, new: 'none' }, operationId);
  }
  for (const [name, entry] of propertiesAfter) {
    const old = propertiesBefore.get(name);
    if (!old) {
      const required = requiredAfter.has(name);
      add(c, { kind: 'member-added', breaking: request && required, pointer: entry.at, old: 'none', new: `${name}${required ? ' (required)' : ''}` }, operationId);
      continue;
    }
    if (!requiredBefore.has(name) && requiredAfter.has(name)) add(c, { kind: 'member-now-required', breaking: request, pointer: entry.at, old: `${name} optional`, new: `${name} required` }, operationId);
    if (requiredBefore.has(name) && !requiredAfter.has(name)) add(c, { kind: 'member-now-optional', breaking: !request, pointer: entry.at, old: `${name} required`, new: `${name} optional` }, operationId);
    compareSchema(c, old.node, entry.node, old.at, entry.at, direction, operationId, seen);
    // A member declared again in a later allOf part (an event's `data`, narrowed by its own payload part) is compared there too.
    for (let index = 0; index < Math.min(old.also.length, entry.also.length); index += 1) {
      compareSchema(c, old.also[index]!.node, entry.also[index]!.node, old.also[index]!.at, entry.also[index]!.at, direction, operationId, seen);
    }
  }

  for (const member of ['items', 'additionalProperties', 'unevaluatedProperties'] as const) {
    if (isJsonObject(before[member]) && isJsonObject(after[member])) {
      compareSchema(c, before[member], after[member], `${pointerBefore}/${member}`, `${pointer}/${member}`, direction, operationId, seen);
    }
  }
  for (const member of ['additionalProperties', 'unevaluatedProperties'] as const) {
    // Absent, `true` or a schema admit other members; `false` admits none: only that step changes what a client may send.
    const closedBefore = before[member] === false;
    const closedAfter = after[member] === false;
    if (closedBefore === closedAfter) continue;
    add(c, { kind: closedAfter ? 'constraint-narrowed' : 'constraint-widened', breaking: closedAfter && request, pointer, old: `${member}: ${show(before[member])}`, new: `${member}: ${show(after[member])}` }, operationId);
  }
  for (const union of ['anyOf', 'oneOf'] as const) compareBranches(c, before[union], after[union], `${pointerBefore}/${union}`, `${pointer}/${union}`, direction, operationId, seen);
}

/**
 * The branches of a `oneOf`/`anyOf`, paired by the component they reference or else by position. A branch gone
 * from a request refuses what a client sent; a branch new anywhere is reported, not breaking, like a new enum value.
 */
function compareBranches(c: Collector, rawBefore: JsonValue | undefined, rawAfter: JsonValue | undefined, atBefore: string, atAfter: string, direction: Direction, operationId: string, seen: Set<string>): void {
  const branchesBefore = Array.isArray(rawBefore) ? rawBefore : [];
  const branchesAfter = Array.isArray(rawAfter) ? rawAfter : [];
  if (branchesBefore.length === 0 && branchesAfter.length === 0) return;
  // A referenced branch by its component; an inline one by its place among the inline ones, so adding a referenced branch moves none.
  const keyed = (branches: JsonValue[]) => {
    let inline = 0;
    return new Map(branches.map((branch, index) => [isJsonObject(branch) && typeof branch.$ref === 'string' ? `ref ${branch.$ref}` : `inline ${inline++}`, index]));
  };
  const keyedBefore = keyed(branchesBefore);
  const keyedAfter = keyed(branchesAfter);
  const label = (branch: JsonValue | undefined, index: number) => (isJsonObject(branch) && typeof branch.$ref === 'string' ? branch.$ref : `branch ${index}`);
  for (const [key, index] of keyedBefore) {
    if (keyedAfter.has(key)) continue;
    add(c, { kind: 'branch-removed', breaking: direction === 'request', pointer: `${atBefore}/${index}`, old: label(branchesBefore[index], index), new: 'none' }, operationId);
  }
  for (const [key, index] of keyedAfter) {
    const indexBefore = keyedBefore.get(key);
    if (indexBefore === undefined) {
      // Like an enum value added: a client tolerates a variant it does not know (the rule both specs state).
      add(c, { kind: 'branch-added', breaking: false, pointer: `${atAfter}/${index}`, old: 'none', new: label(branchesAfter[index], index) }, operationId);
      continue;
    }
    compareSchema(c, branchesBefore[indexBefore], branchesAfter[index], `${atBefore}/${indexBefore}`, `${atAfter}/${index}`, direction, operationId, seen);
  }
}

function compareContent(c: Collector, before: JsonValue | undefined, after: JsonValue | undefined, atBefore: string, atAfter: string, direction: Direction, operationId: string): void {
  const contentBefore = isJsonObject(before) ? before : {};
  const contentAfter = isJsonObject(after) ? after : {};
  for (const mediaType of Object.keys(contentBefore)) {
    if (!(mediaType in contentAfter)) add(c, { kind: 'media-type-removed', breaking: true, pointer: `${atBefore}/${escapePointerSegment(mediaType)}`, old: mediaType, new: 'none' }, operationId);
  }
  for (const [mediaType, rawAfter] of Object.entries(contentAfter)) {
    const at = `${atAfter}/${escapePointerSegment(mediaType)}`;
    if (!(mediaType in contentBefore)) {
      add(c, { kind: 'media-type-added', breaking: false, pointer: at, old: 'none', new: mediaType }, operationId);
      continue;
    }
    const mediaBefore = dereference(c.before, contentBefore[mediaType]);
    const mediaAfter = dereference(c.after, rawAfter);
    if (!isJsonObject(mediaBefore) || !isJsonObject(mediaAfter)) continue;
    compareSchema(c, mediaBefore.schema, mediaAfter.schema, `${atBefore}/${escapePointerSegment(mediaType)}/schema`, `${at}/schema`, direction, operationId, new Set());
  }
}

type OperationAt = ReturnType<typeof listOperations>[number] & { webhook: boolean };

/** The operations of `paths` and of `webhooks` (an event this API sends), by operationId. */
function operationsById(document: JsonObject): Map<string, OperationAt> {
  const byId = new Map<string, OperationAt>();
  for (const entry of listOperations(document)) if (entry.operationId !== undefined) byId.set(entry.operationId, { ...entry, webhook: false });
  if (isJsonObject(document.webhooks)) {
    for (const entry of listOperations({ ...document, paths: document.webhooks })) {
      if (entry.operationId === undefined) continue;
      byId.set(entry.operationId, { ...entry, pointer: entry.pointer.replace(/^\/paths\//, '/webhooks/'), path: `webhook ${entry.path}`, webhook: true });
    }
  }
  return byId;
}

const templateShape = (path: string) => path.replace(/\{[^}]*\}/g, '{}');

/** A path parameter is known by its place in the template (a rename keeps the URL); every other by location and name. */
function parameterKey(path: string, parameter: { in: string; name: string }): string {
  if (parameter.in !== 'path') return `${parameter.in}:${parameter.name}`;
  const place = [...path.matchAll(/\{([^}]*)\}/g)].findIndex((match) => match[1] === parameter.name);
  return place === -1 ? `path:${parameter.name}` : `path:#${place}`;
}

/** Response headers by lower-cased name: one a client reads may not disappear or stop being sent every time. */
function compareHeaders(c: Collector, rawBefore: JsonValue | undefined, rawAfter: JsonValue | undefined, atBefore: string, atAfter: string, direction: Direction, operationId: string): void {
  const byName = (headers: JsonValue | undefined, at: string) =>
    new Map(Object.entries(isJsonObject(headers) ? headers : {}).map(([name, raw]) => [name.toLowerCase(), { name, raw, at: `${at}/${escapePointerSegment(name)}` }]));
  const headersBefore = byName(rawBefore, atBefore);
  const headersAfter = byName(rawAfter, atAfter);
  const clientReads = direction === 'response';
  for (const [key, header] of headersBefore) {
    if (!headersAfter.has(key)) add(c, { kind: 'response-header-removed', breaking: clientReads, pointer: header.at, old: header.name, new: 'none' }, operationId);
  }
  for (const [key, header] of headersAfter) {
    const headerAfter = dereference(c.after, header.raw);
    const old = headersBefore.get(key);
    if (!old) {
      add(c, { kind: 'response-header-added', breaking: false, pointer: header.at, old: 'none', new: header.name }, operationId);
      continue;
    }
    const headerBefore = dereference(c.before, old.raw);
    if (!isJsonObject(headerBefore) || !isJsonObject(headerAfter)) continue;
    const atHeaderBefore = pointerOfTarget(c.before, old.raw, old.at);
    const atHeaderAfter = pointerOfTarget(c.after, header.raw, header.at);
    if (headerBefore.required === true && headerAfter.required !== true) {
      add(c, { kind: 'response-header-now-optional', breaking: clientReads, pointer: atHeaderAfter, old: `${header.name} always sent`, new: `${header.name} not always sent` }, operationId);
    }
    compareSchema(c, headerBefore.schema, headerAfter.schema, `${atHeaderBefore}/schema`, `${atHeaderAfter}/schema`, direction, operationId, new Set());
  }
}

/** One way to authorize a call: each scheme it needs with the scopes it must carry. */
type SecurityAlternative = Map<string, Set<string>>;

/** The operation's effective security (as listOperations reads it) as alternatives; undefined when it is public by `security: []`. */
function securityOf(entry: OperationAt): SecurityAlternative[] | undefined {
  if (entry.security.length === 0) return undefined;
  return entry.security.map((requirement) => new Map(Object.entries(requirement).map(([scheme, scopes]) => [scheme, new Set(scopes)])));
}

const describeSecurity = (alternatives: SecurityAlternative[] | undefined): string =>
  alternatives === undefined
    ? 'public'
    : alternatives
        .map((alternative) => [...alternative].map(([scheme, scopes]) => (scopes.size > 0 ? `${scheme} [${[...scopes].sort().join(', ')}]` : scheme)).sort().join(' + ') || 'anonymous')
        .sort()
        .join(' or ');

/** Whether a caller who met `before` also meets `after`: same or fewer schemes, each with the same or fewer scopes. */
const stillSatisfied = (before: SecurityAlternative, after: SecurityAlternative): boolean =>
  [...after].every(([scheme, scopes]) => before.has(scheme) && [...scopes].every((scope) => before.get(scheme)!.has(scope)));

/** Breaking when some caller who was let in before is refused now (a scope or scheme more, an alternative fewer, a public operation protected). */
function compareSecurity(c: Collector, entryBefore: OperationAt, entryAfter: OperationAt, operationId: string): void {
  const before = securityOf(entryBefore);
  const after = securityOf(entryAfter);
  const old = describeSecurity(before);
  const now = describeSecurity(after);
  if (old === now) return;
  const pointer = `${entryAfter.pointer}/security`;
  const narrowed = after !== undefined && (before === undefined || before.some((alternative) => !after.some((candidate) => stillSatisfied(alternative, candidate))));
  add(c, { kind: narrowed ? 'security-narrowed' : 'security-widened', breaking: narrowed, pointer, old, new: now }, operationId);
}

/** Every change from `before` to `after`, sorted by pointer and kind. */
export function diffSpecs(before: JsonObject, after: JsonObject): SpecChange[] {
  const c: Collector = { before, after, changes: new Map() };
  const operationsBefore = operationsById(before);
  const operationsAfter = operationsById(after);

  for (const [operationId, entry] of operationsBefore) {
    if (!operationsAfter.has(operationId)) add(c, { kind: 'operation-removed', breaking: true, pointer: entry.pointer, old: `${entry.method.toUpperCase()} ${entry.path} (${operationId})`, new: 'none' }, operationId);
  }
  for (const [operationId, entryAfter] of operationsAfter) {
    const entryBefore = operationsBefore.get(operationId);
    const route = `${entryAfter.method.toUpperCase()} ${entryAfter.path}`;
    if (!entryBefore) {
      add(c, { kind: 'operation-added', breaking: false, pointer: entryAfter.pointer, old: 'none', new: `${route} (${operationId})` }, operationId);
      continue;
    }
    const routeBefore = `${entryBefore.method.toUpperCase()} ${entryBefore.path}`;
    // `/items/{id}` and `/items/{itemId}` are the same URLs: only the template's shape says where a call goes.
    if (entryBefore.method !== entryAfter.method || templateShape(entryBefore.path) !== templateShape(entryAfter.path)) {
      add(c, { kind: 'operation-moved', breaking: true, pointer: entryAfter.pointer, old: routeBefore, new: route }, operationId);
    }
    if (!entryAfter.webhook) compareSecurity(c, entryBefore, entryAfter, operationId);

    // A webhook's request is what this API sends and the subscriber reads: it is judged like a response.
    const input: Direction = entryAfter.webhook ? 'response' : 'request';
    const output: Direction = entryAfter.webhook ? 'request' : 'response';
    const parametersBefore = new Map(operationParameters(before, entryBefore).map((parameter) => [parameterKey(entryBefore.path, parameter), parameter]));
    const parametersAfter = new Map(operationParameters(after, entryAfter).map((parameter) => [parameterKey(entryAfter.path, parameter), parameter]));
    for (const [key, parameter] of parametersBefore) {
      if (!parametersAfter.has(key)) add(c, { kind: 'parameter-removed', breaking: true, pointer: parameter.pointer, old: `${parameter.in} parameter ${parameter.name}`, new: 'none' }, operationId);
    }
    for (const [key, parameter] of parametersAfter) {
      const old = parametersBefore.get(key);
      const required = parameter.parameter.required === true;
      if (!old) {
        add(c, { kind: 'parameter-added', breaking: required && input === 'request', pointer: parameter.pointer, old: 'none', new: `${required ? 'required' : 'optional'} ${parameter.in} parameter ${parameter.name}` }, operationId);
        continue;
      }
      // The URL stays the same, but the typed client and the agent tools address path parameters by name.
      if (old.name !== parameter.name) add(c, { kind: 'parameter-renamed', breaking: true, pointer: parameter.pointer, old: `path parameter ${old.name}`, new: `path parameter ${parameter.name}` }, operationId);
      if (old.parameter.required !== true && required) add(c, { kind: 'parameter-now-required', breaking: input === 'request', pointer: parameter.pointer, old: `optional ${parameter.name}`, new: `required ${parameter.name}` }, operationId);
      compareSchema(c, old.parameter.schema, parameter.parameter.schema, `${old.pointer}/schema`, `${parameter.pointer}/schema`, input, operationId, new Set());
    }

    const bodyAtBefore = `${entryBefore.pointer}/requestBody`;
    const bodyAtAfter = `${entryAfter.pointer}/requestBody`;
    const bodyBefore = dereference(before, entryBefore.operation.requestBody);
    const bodyAfter = dereference(after, entryAfter.operation.requestBody);
    if (isJsonObject(bodyBefore) && !isJsonObject(bodyAfter)) add(c, { kind: 'request-body-removed', breaking: true, pointer: bodyAtBefore, old: 'a request body', new: 'none' }, operationId);
    if (!isJsonObject(bodyBefore) && isJsonObject(bodyAfter)) {
      add(c, { kind: 'request-body-added', breaking: bodyAfter.required === true && input === 'request', pointer: bodyAtAfter, old: 'none', new: `${bodyAfter.required === true ? 'required' : 'optional'} request body` }, operationId);
    }
    if (isJsonObject(bodyBefore) && isJsonObject(bodyAfter)) {
      if (bodyBefore.required !== true && bodyAfter.required === true) add(c, { kind: 'request-body-now-required', breaking: input === 'request', pointer: bodyAtAfter, old: 'optional request body', new: 'required request body' }, operationId);
      compareContent(c, bodyBefore.content, bodyAfter.content, `${bodyAtBefore}/content`, `${bodyAtAfter}/content`, input, operationId);
    }

    const responsesBefore = isJsonObject(entryBefore.operation.responses) ? entryBefore.operation.responses : {};
    const responsesAfter = isJsonObject(entryAfter.operation.responses) ? entryAfter.operation.responses : {};
    for (const status of Object.keys(responsesBefore)) {
      if (!(status in responsesAfter)) add(c, { kind: 'response-removed', breaking: true, pointer: `${entryBefore.pointer}/responses/${status}`, old: `${status} response`, new: 'none' }, operationId);
    }
    for (const [status, rawAfter] of Object.entries(responsesAfter)) {
      const at = `${entryAfter.pointer}/responses/${status}`;
      if (!(status in responsesBefore)) {
        add(c, { kind: 'response-added', breaking: false, pointer: at, old: 'none', new: `${status} response` }, operationId);
        continue;
      }
      const responseBefore = dereference(before, responsesBefore[status]);
      const responseAfter = dereference(after, rawAfter);
      if (!isJsonObject(responseBefore) || !isJsonObject(responseAfter)) continue;
      const atBefore = pointerOfTarget(before, responsesBefore[status], `${entryBefore.pointer}/responses/${status}`);
      const atAfter = pointerOfTarget(after, rawAfter, at);
      compareContent(c, responseBefore.content, responseAfter.content, `${atBefore}/content`, `${atAfter}/content`, output, operationId);
      compareHeaders(c, responseBefore.headers, responseAfter.headers, `${atBefore}/headers`, `${atAfter}/headers`, output, operationId);
    }
  }
  return [...c.changes.values()].sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

/** One line for a person: `breaking member-removed at <pointer> (getTask, listTasks): dueOn → none`. */
export function describeChange(change: SpecChange): string {
  return `${change.breaking ? 'breaking ' : ''}${change.kind} at ${change.pointer} (${change.operationIds.join(', ')}): ${change.old} → ${change.new}`;
}

