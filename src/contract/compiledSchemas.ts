// Validators compiled from a served contract, shared by every server of the process that serves the same committed
// contract. A process in production serves one; the tests start hundreds of servers in one process, and compiling
// each operation's validators again for each of them was much of their CPU. Sharing is safe because compiling is
// pure: a validator depends only on the schemas, and the served copies of one committed document differ only in
// `servers` and the OAuth 2.0 endpoints (servedArtifacts.ts).

const keys = new WeakMap<object, string>();
const caches = new Map<string, Map<string, unknown>>();

/** Names `document` by what its schemas are made of (servedArtifacts: the committed text and its pattern rule). */
export function nameCompiledSchemas(document: object, key: string): void {
  keys.set(document, key);
}

/**
 * The process's cache `kind` for the schemas of `document`, shared with every document of the same name; a fresh one
 * of its own for a document nobody named (one built by a test).
 */
export function compiledSchemasCache<T>(document: object, kind: string): Map<string, T> {
  const key = keys.get(document);
  if (key === undefined) return new Map<string, T>();
  const cacheKey = `${kind}\u0000${key}`;
  let cache = caches.get(cacheKey);
  if (!cache) {
    cache = new Map<string, unknown>();
    caches.set(cacheKey, cache);
  }
  return cache as Map<string, T>;
}
