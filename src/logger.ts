export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

function serializable(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}

/** Structured JSON lines: one object per line, on stdout (info) or stderr (warn, error). */
export function createJsonLogger(write: { out: (line: string) => void; err: (line: string) => void } = {
  out: (line) => process.stdout.write(line),
  err: (line) => process.stderr.write(line),
}): Logger {
  const emit = (level: string, sink: (line: string) => void) => (message: string, fields: LogFields = {}) =>
    sink(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...serializable(fields) })}\n`);
  return { info: emit('info', write.out), warn: emit('warn', write.err), error: emit('error', write.err) };
}

