// Reading the answer of an outbound fetch (the AI provider, the GitHub connector) without letting
// a large or endless body into memory.

/**
 * The body, or undefined as soon as it grows past `limit` bytes: the rest is not read and the
 * stream is cancelled. A connection that breaks or a fetch aborted while reading rejects, for the
 * caller to word.
 */
export async function readBodyAtMost(response: Response, limit: number): Promise<Buffer | undefined> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(Buffer.from(read.value));
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks);
}
