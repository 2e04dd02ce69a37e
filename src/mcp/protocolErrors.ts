// JSON-RPC errors that read the same however many MCP hops they cross. The SDK sends a thrown error's `message` as the
// error's message, and its client wraps what it receives in an McpError whose message is `MCP error <code>: <message>`.
// Thrown as an McpError, a message would carry that prefix once per hop (three times over npm run mcp's relay).

/** An error the SDK sends as `{ code, message, data }`, its message as given: the receiving client adds the prefix. */
export function protocolError(code: number, message: string, data?: unknown): Error & { code: number; data?: unknown } {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

/**
 * What an upstream server answered, to pass on unchanged: an McpError received by a client becomes the error it was
 * on the wire (its code, message and data); anything else is thrown as it is.
 */
export function asReceived(error: unknown): never {
  if (error instanceof Error && typeof (error as { code?: unknown }).code === 'number' && error.name === 'McpError') {
    const { code, data } = error as Error & { code: number; data?: unknown };
    const prefix = `MCP error ${code}: `;
    throw protocolError(code, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message, data);
  }
  throw error;
}
