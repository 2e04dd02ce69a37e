import type { LogFields, Logger } from '../../src/logger.js';

export interface RecordedLine {
  level: string;
  message: string;
  fields?: LogFields;
}

/** A logger that keeps every call as it was made (level, message, fields), for tests that assert what an error funnel logs. */
export function recordingLogger(): Logger & { lines: RecordedLine[] } {
  const lines: RecordedLine[] = [];
  return {
    lines,
    info: (message, fields) => lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => lines.push({ level: 'error', message, fields }),
  };
}
