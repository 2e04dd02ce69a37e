// `x-enum-source: <name>` on a schema: its `enum` is written in by the build from a maintained list instead of
// being copied into the YAML by hand (and going stale). The bundled document carries the `enum` and no
// `x-enum-source`, so every reader (the served documents, the validator, the types, the release check) sees
// the values. A nullable schema (`type` with `null`) gets `null` as a value too.

import currencyCodes from 'currency-codes';
import { isJsonObject, type JsonObject, type JsonValue } from './document.js';
import type { ContractProblem } from './problems.js';

export const ENUM_SOURCE_KEYWORD = 'x-enum-source';

/** The lists a spec may name, each sorted as its package gives it. */
const ENUM_SOURCES: Record<string, () => readonly string[]> = {
  // ISO 4217 as published (the package's iso-4217-list-one.xml), maintained upstream.
  'currency-codes': () => currencyCodes.codes(),
};

/** The document with every `x-enum-source` replaced by its `enum`; problems name a source that does not exist or a schema that has its own enum. */
export function expandEnumSources(document: JsonObject, rootLabel: string): { document: JsonObject; problems: ContractProblem[] } {
  const problems: ContractProblem[] = [];
  const walk = (node: JsonValue, pointer: string): JsonValue => {
    if (Array.isArray(node)) return node.map((item, index) => walk(item, `${pointer}/${index}`));
    if (!isJsonObject(node)) return node;
    const copy: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key !== ENUM_SOURCE_KEYWORD) copy[key] = walk(value, `${pointer}/${key}`);
    }
    if (!(ENUM_SOURCE_KEYWORD in node)) return copy;
    const source = node[ENUM_SOURCE_KEYWORD];
    const values = typeof source === 'string' ? ENUM_SOURCES[source] : undefined;
    if (!values) {
      problems.push({ file: rootLabel, where: pointer, message: `${ENUM_SOURCE_KEYWORD} must be one of ${Object.keys(ENUM_SOURCES).join(', ')}, not ${JSON.stringify(source)}` });
      return copy;
    }
    if ('enum' in node) {
      problems.push({ file: rootLabel, where: pointer, message: `has both enum and ${ENUM_SOURCE_KEYWORD}; delete the enum (the build writes it)` });
      return copy;
    }
    const nullable = node.type === 'null' || (Array.isArray(node.type) && node.type.includes('null'));
    copy.enum = [...values(), ...(nullable ? [null] : [])];
    return copy;
  };
  const expanded = walk(document, '#') as JsonObject;
  return { document: expanded, problems };
}
