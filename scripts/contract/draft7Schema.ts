// OpenAPI 3.1 schemas (JSON Schema 2020-12) rewritten for the validator inside Postman's and
// newman's script sandbox: postman-sandbox 4.x runs `pm.response.to.have.jsonSchema(schema)` as
// `new Ajv({ allErrors: true, logger: false }).validate(schema, body)` with Ajv 6.12 (draft-07). That
// Ajv has no `$defs`, `prefixItems`, `dependentRequired`, `unevaluatedProperties`; it throws on a
// format it does not know and on a `$ref` it cannot resolve; it reads `pattern` without the `u` flag.
// The translation is self-contained (every `$ref` inlined, a recursive one into the schema's own
// `definitions`) and keeps only what validates.

import { isJsonObject, resolvePointer, type JsonObject, type JsonValue } from './document.js';

/** The formats Ajv 6 knows (its `fast` set); any other format is dropped rather than failing the compile. */
const AJV6_FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
]);

/** Keywords that only annotate: left out to keep the embedded schemas short. */
const ANNOTATIONS = new Set([
  'description',
  'title',
  'example',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  '$schema',
  '$id',
  '$anchor',
  'discriminator',
  'xml',
  'externalDocs',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
]);

/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions']);
/** Keywords whose value is one schema. */
const SCHEMA_VALUES = new Set(['additionalProperties', 'propertyNames', 'contains', 'not', 'if', 'then', 'else', 'additionalItems']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
/** Keywords draft-07 validates as they are (values copied). */
const PLAIN = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
]);

export class Draft7TranslationError extends Error {}

/**
 * `schema` (found in `document`) as a self-contained draft-07 schema: `$ref`s (internal, `#/…`)
 * inlined, 2020-12 keywords rewritten, annotations and vendor extensions dropped. Throws on an
 * external reference.
 */
export function toDraft7Schema(document: JsonObject, schema: JsonValue, at = '#'): JsonValue {
  const recursive = new Map<string, string>();
  const root = translate(document, schema, [], at, recursive);
  if (recursive.size === 0) return root;
  // A schema that contains itself cannot be inlined: it goes into the embedded schema's own
  // `definitions` once, and refers to itself there (still nothing outside the embedded schema).
  const definitions: JsonObject = {};
  for (let added = true; added; ) {
    added = false;
    for (const [ref, name] of recursive) {
      if (name in definitions) continue;
      definitions[name] = translate(document, resolvePointer(document, ref.slice(1)) ?? {}, [ref], ref, recursive);
      added = true;
    }
  }
  if (!isJsonObject(root)) throw new Draft7TranslationError(`${at}: a recursive schema under a boolean one`);
  return { ...root, definitions: { ...(isJsonObject(root.definitions) ? root.definitions : {}), ...definitions } };
}

function translate(document: JsonObject, node: JsonValue, refStack: string[], at: string, recursive: Map<string, string>): JsonValue {
  if (typeof node === 'boolean') return node;
  if (!isJsonObject(node)) throw new Draft7TranslationError(`${at}: not a schema`);

  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (!ref.startsWith('#')) throw new Draft7TranslationError(`${at}: external $ref ${ref} cannot be embedded`);
    const target = resolvePointer(document, ref.slice(1));
    if (target === undefined) throw new Draft7TranslationError(`${at}: $ref ${ref} does not resolve`);
    if (refStack.includes(ref)) {
      if (!recursive.has(ref)) recursive.set(ref, ref.slice(1).split('/').filter(Boolean).join('.'));
      return { $ref: `#/definitions/${recursive.get(ref)!}` };
    }
    const inlined = translate(document, target, [...refStack, ref], ref, recursive);
    // In 2020-12 a $ref's siblings apply too; in draft-07 they are ignored, so they join through allOf.
    const { $ref: _ref, ...siblings } = node;
    const rest = translate(document, siblings, refStack, at, recursive);
    return isJsonObject(rest) && Object.keys(rest).length > 0 ? { allOf: [inlined, rest] } : inlined;
  }

  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(key) || key.startsWith('x-') || key === '$defs') continue;
    const here = `${at}/${key}`;
    if (PLAIN.has(key)) out[key] = value;
    else if (key === 'format') {
      if (typeof value === 'string' && AJV6_FORMATS.has(value)) out.format = value;
    } else if (key === 'pattern') {
      if (typeof value === 'string' && samePatternWithoutUnicodeFlag(value)) out.pattern = value;
    } else if (SCHEMA_MAPS.has(key) && isJsonObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, translate(document, schema, refStack, `${here}/${name}`, recursive)]));
    } else if (SCHEMA_VALUES.has(key)) {
      out[key] = translate(document, value, refStack, here, recursive);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((schema, index) => translate(document, schema, refStack, `${here}/${index}`, recursive));
    } else if (key === 'items') {
      // 2020-12 `items` next to `prefixItems` is draft-07's `additionalItems`.
      if (Array.isArray(node.prefixItems)) out.additionalItems = translate(document, value, refStack, here, recursive);
      else out.items = translate(document, value, refStack, here, recursive);
    } else if (key === 'prefixItems' && Array.isArray(value)) {
      out.items = value.map((schema, index) => translate(document, schema, refStack, `${here}/${index}`, recursive));
    } else if (key === 'dependentRequired' && isJsonObject(value)) {
      out.dependencies = { ...(isJsonObject(out.dependencies) ? out.dependencies : {}), ...value };
    } else if (key === 'dependentSchemas' && isJsonObject(value)) {
      const translated = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, translate(document, schema, refStack, `${here}/${name}`, recursive)]));
      out.dependencies = { ...(isJsonObject(out.dependencies) ? out.dependencies : {}), ...translated };
    } else if (key === 'unevaluatedProperties' || key === 'unevaluatedItems') {
      // Handled below for the one shape that has a draft-07 equivalent; otherwise left out (looser).
    } else if (key !== 'prefixItems' && key !== 'dependentRequired' && key !== 'dependentSchemas') {
      throw new Draft7TranslationError(`${here}: keyword ${key} has no draft-07 translation here`);
    }
  }
  if (node.unevaluatedProperties === false) return closeOverAllOf(out, at);
  return out;
}

/**
 * `{allOf: [A, B…], unevaluatedProperties: false}` over object schemas is one object schema whose
 * properties and required members are those of all parts, with `additionalProperties: false`.
 */
function closeOverAllOf(schema: JsonObject, at: string): JsonObject {
  const parts = [schema, ...(Array.isArray(schema.allOf) ? schema.allOf : [])];
  const merged: JsonObject = {};
  const properties: JsonObject = {};
  const required = new Set<string>();
  for (const part of parts) {
    if (!isJsonObject(part)) throw new Draft7TranslationError(`${at}: unevaluatedProperties over a part that is not an object schema`);
    for (const [key, value] of Object.entries(part)) {
      if (key === 'allOf') continue;
      if (key === 'properties' && isJsonObject(value)) Object.assign(properties, value);
      else if (key === 'required' && Array.isArray(value)) value.forEach((name) => required.add(String(name)));
      else if (key === 'type' || key === 'additionalProperties') merged[key] = value;
      // The schema's own other keywords (dependencies, minProperties…) apply to the merged object as they are.
      else if (part === schema && key !== 'patternProperties') merged[key] = value;
      else throw new Draft7TranslationError(`${at}: unevaluatedProperties next to ${key} has no draft-07 translation`);
    }
  }
  return { ...merged, type: 'object', properties, ...(required.size > 0 ? { required: [...required] } : {}), additionalProperties: false };
}

/**
 * Ajv 6 compiles `pattern` as `new RegExp(pattern)`, Ajv 8 (the server) with the `u` flag. Where the
 * two could read it differently (`\p{…}`, `\u{…}`, astral characters) or Ajv 6 cannot compile it, the
 * pattern is left out of the embedded schema rather than checked wrongly.
 */
function samePatternWithoutUnicodeFlag(pattern: string): boolean {
  if (/\\[pPu]\{|[\u{10000}-\u{10FFFF}]/u.test(pattern)) return false;
  try {
    new RegExp(pattern);
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}
