// How deep a JSON body may nest, checked on the raw bytes before anything parses it. JSON.parse
// itself does not recurse, but what follows it does (JSON.stringify, schema validation, a copy):
// 5,000 levels in 10 KB were enough to exhaust the stack. Parsing 1 MiB of `[` also takes
// seconds; the scan takes about a millisecond.

/** The deepest a JSON request body may nest arrays and objects, on every surface (REST, MCP, OAuth). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the text opens more than `maxDepth` arrays and objects inside one another (brackets
 * inside strings do not count). A loop over the bytes, never recursion: any input is safe, JSON or
 * not. UTF-8 needs no decoding for this, since every byte of a multi-byte character is above 0x7f.
 */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** `application/json` and the `+json` types (`application/merge-patch+json`): the bodies the rule applies to. */
export function isJsonMediaType(contentType: string | string[] | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * The value of a top-level member whose value is a string, number, boolean or null (a JSON-RPC
 * `id`), read without parsing the text, so that a body refused for its depth can still be answered
 * by its id. Undefined when the text is not an object or the member is absent or not a scalar.
 */
export function topLevelScalar(text: string, name: string): string | number | boolean | null | undefined {
  let depth = 0;
  let index = 0;
  const skipSpace = () => {
    while (index < text.length && /\s/.test(text[index]!)) index += 1;
  };
  /** The end (exclusive) of the string starting at `start` (a quote). */
  const stringEnd = (start: number) => {
    let at = start + 1;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    return at + 1;
  };
  skipSpace();
  if (text[index] !== '{') return undefined;
  let expectKey = false;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '"') {
      const end = stringEnd(index);
      if (depth === 1 && expectKey) {
        const key = safeParse(text.slice(index, end));
        index = end;
        skipSpace();
        if (text[index] !== ':') return undefined;
        index += 1;
        skipSpace();
        if (key === name) {
          const valueEnd = text[index] === '"' ? stringEnd(index) : scalarEnd(text, index);
          const value = safeParse(text.slice(index, valueEnd));
          return value === undefined || (typeof value === 'object' && value !== null) ? undefined : (value as string | number | boolean | null);
        }
        expectKey = false;
        continue;
      }
      index = end;
      continue;
    }
    if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') depth -= 1;
    if (depth === 1 && (char === '{' || char === ',')) expectKey = true;
    index += 1;
  }
  return undefined;
}

function scalarEnd(text: string, start: number): number {
  let at = start;
  while (at < text.length && !/[\s,}\]]/.test(text[at]!)) at += 1;
  return at;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
