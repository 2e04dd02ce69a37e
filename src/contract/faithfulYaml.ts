// YAML that every common loader reads as its JSON: js-yaml 3 and 4, PyYAML (YAML 1.1) and the yaml package (1.2).
// Used by the build (generated/<api>/openapi.yaml) and by the served copy, which re-prints the committed text with
// its own `servers`. The yaml module is passed in: the server loads it only on the first YAML download.

import type * as YamlModule from 'yaml';

type Yaml = Pick<typeof YamlModule, 'parse' | 'visit'>;

const MERGE_TAG = 'tag:yaml.org,2002:merge';

/**
 * A string some common loader would not read back as the same string when it stands unquoted, beyond what the
 * YAML 1.1 schema already quotes (dates, timestamps, yes/no/on/off, `~`, `null`, octal and sexagesimal numbers):
 * what YAML 1.2 readers resolve differently (`0o17`), and PyYAML's `=` (the "value" tag, which its safe loader
 * cannot construct) and `<<` (the merge key).
 */
function retypedElsewhere(YAML: Yaml, value: string): boolean {
  if (value === '=' || value === '<<') return true;
  // Only a plain scalar that starts like a number, null or boolean can resolve to one.
  if (!/^[-+.0-9~nNtTfF]/.test(value) || value.includes('\n')) return false;
  // A contract repeats its words (type, format, true, nullable) thousands of times: each is parsed once.
  let retyped = parsedBefore.get(value);
  if (retyped === undefined) {
    try {
      retyped = YAML.parse(value) !== value;
    } catch {
      retyped = true;
    }
    if (parsedBefore.size >= PARSED_VALUES_KEPT) parsedBefore.clear();
    parsedBefore.set(value, retyped);
  }
  return retyped;
}

// Cleared whole when full: npm run dev prints the contract again after each save, with the edited words new.
const parsedBefore = new Map<string, boolean>();
const PARSED_VALUES_KEPT = 20_000;

/**
 * Prepares `document` to print so that those loaders read every value as the JSON has it, type for type: the
 * YAML 1.1 schema quotes what a 1.1 loader would retype, and the strings `retypedElsewhere` are double-quoted.
 * No `%YAML` directive is written. Strings already quoted stay quoted.
 */
export function faithfulYaml<T extends YamlModule.Document>(YAML: Yaml, document: T): T {
  // Without the merge tag a `<<` string prints as a string (and is quoted below), not as the merge key.
  document.setSchema('1.1', { customTags: (tags) => tags.filter((tag) => typeof tag === 'string' || tag.tag !== MERGE_TAG) });
  YAML.visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && (node.type === undefined || node.type === 'PLAIN') && retypedElsewhere(YAML, node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return document;
}
