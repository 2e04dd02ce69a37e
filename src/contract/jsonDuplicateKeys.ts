import { escapePointerToken } from './jsonPointer.js';

/**
 * The pointer of the first object member that appears twice in the same object of a JSON text,
 * or undefined. JSON.parse keeps the last one silently, so a client and the server could read
 * different values from one body. Expects text that JSON.parse accepts.
 */
export function firstDuplicateKey(text: string): string | undefined {
  // One frame per open object or array: the keys seen so far (objects only) and the path to it.
  const frames: { keys: Set<string> | undefined; path: string; index: number }[] = [];
  let pendingKey: string | undefined;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at]!;
    if (char === '"') {
      const end = endOfString(text, at);
      const frame = frames.at(-1);
      // A string right after `{` or `,` inside an object is a key.
      if (frame?.keys && isKeyPosition(text, at)) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        if (frame.keys.has(key)) return `${frame.path}/${escapePointerToken(key)}`;
        frame.keys.add(key);
        pendingKey = key;
      }
      at = end;
    } else if (char === '{' || char === '[') {
      const parent = frames.at(-1);
      const name = parent?.keys ? (pendingKey ?? '') : String(parent?.index ?? 0);
      const path = parent ? `${parent.path}/${escapePointerToken(name)}` : '';
      frames.push({ keys: char === '{' ? new Set() : undefined, path, index: 0 });
    } else if (char === '}' || char === ']') {
      frames.pop();
    } else if (char === ',') {
      const frame = frames.at(-1);
      if (frame && !frame.keys) frame.index += 1;
    }
  }
  return undefined;
}

function endOfString(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at += 1) {
    if (text[at] === '\\') at += 1;
    else if (text[at] === '"') return at;
  }
  return text.length - 1;
}

function isKeyPosition(text: string, at: number): boolean {
  for (let before = at - 1; before >= 0; before -= 1) {
    const char = text[before]!;
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') continue;
    return char === '{' || char === ',';
  }
  return false;
}

