// What the reference page gives the renderer: the served openapi.json, with each schema that narrows a shared one
// (`allOf: [{$ref: WebhookEnvelope}, {type: {const: task.created}, data: {object: {$ref: Task}}}]`, every event's body)
// stated as one schema: the envelope with `type` the event's constant and `data.object` the event's resource.
//
// Why: Redoc spreads such an allOf over the envelope's `data.object` oneOf (Task, Project, …, Connector), merges the
// event's resource into every branch, and warns for each property two branches declare as an array of types
// ("Incompatible types in allOf: "string,null" and "string,null"": 73 warnings on /v1/docs), showing merged
// resources no event carries. The contract itself is right, and validators read it as it is: only the page's copy
// is narrowed, in the browser, so openapi.json stays exactly what is served and validated.
//
// Plain JavaScript in a string: the page runs it as it is, and the tests run the same text (narrowForReference).
import vm from 'node:vm';

export const NARROW_FOR_REFERENCE_SOURCE = `function narrowForReference(spec) {
  function resolve(schema) {
    if (!schema || typeof schema.$ref !== 'string' || schema.$ref.indexOf('#/') !== 0) return schema;
    var node = spec;
    var names = schema.$ref.slice(2).split('/');
    for (var i = 0; i < names.length && node; i++) node = node[names[i].replace(/~1/g, '/').replace(/~0/g, '~')];
    return node;
  }
  function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
  function only(schema, keys) {
    return Object.keys(schema).every(function (key) { return keys.indexOf(key) >= 0; });
  }
  // The base schema with the narrowing's properties in place of its own, or null when the narrowing does more than
  // narrow (adds a property, or says something this does not understand): such an allOf is left as it is.
  function narrowed(base, narrowing) {
    base = resolve(base);
    if (!isObject(base) || !isObject(base.properties) || !isObject(narrowing) || !isObject(narrowing.properties)) return null;
    if (!only(narrowing, ['type', 'properties', 'description']) || (narrowing.type !== undefined && narrowing.type !== base.type)) return null;
    var properties = {};
    for (var name in base.properties) properties[name] = base.properties[name];
    for (var key in narrowing.properties) {
      var own = properties[key];
      var narrower = narrowing.properties[key];
      if (own === undefined || !isObject(narrower)) return null;
      if (only(narrower, ['const', 'description']) && 'const' in narrower) {
        var resolved = resolve(own);
        var constant = {};
        for (var member in resolved) if (member !== 'enum' && member !== '$ref') constant[member] = resolved[member];
        if (isObject(own) && own.description !== undefined) constant.description = own.description;
        constant.const = narrower.const;
        properties[key] = constant;
      } else if (only(narrower, ['$ref', 'description']) && typeof narrower.$ref === 'string') {
        properties[key] = isObject(own) && own.description !== undefined && narrower.description === undefined ? { $ref: narrower.$ref, description: own.description } : narrower;
      } else {
        var inner = narrowed(own, narrower);
        if (inner === null) return null;
        properties[key] = inner;
      }
    }
    var result = {};
    for (var field in base) if (field !== 'properties') result[field] = base[field];
    result.properties = properties;
    return result;
  }
  function walk(node) {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    var copy = {};
    for (var key in node) copy[key] = walk(node[key]);
    if (Array.isArray(copy.allOf) && copy.allOf.length === 2 && isObject(copy.allOf[0]) && typeof copy.allOf[0].$ref === 'string' && only(copy.allOf[0], ['$ref'])) {
      var merged = narrowed(copy.allOf[0], copy.allOf[1]);
      if (merged !== null) {
        delete copy.allOf;
        for (var member in merged) if (!(member in copy)) copy[member] = merged[member];
      }
    }
    return copy;
  }
  return walk(spec);
}`;

/** The same narrowing in this process (for tests): the text the page runs. */
export function narrowForReference<T>(document: T): T {
  const narrow = vm.runInNewContext(`(${NARROW_FOR_REFERENCE_SOURCE})`) as (spec: T) => T;
  // Through JSON: the result's objects belong to the other context; the tests compare them with this one's.
  return JSON.parse(JSON.stringify(narrow(JSON.parse(JSON.stringify(document)) as T))) as T;
}
