// The server's one logger: JSON lines written by pino, whose `redact` removes members named like
// secrets or personal data by path, so that a call site cannot forget it; and every string a line
// carries (messages of errors, their stacks, upstream bodies quoted in them) passes through the
// scrubber first, because redaction by path does not see inside free text.
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { isRedactedMemberName, REDACTED, scrubText, scrubValue } from './logScrubber.js';

export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * Member names pino removes at the top of a line and in its `headers`. Explicit paths only: each
 * wildcard path costs pino several microseconds a line, and the members below the top are
 * replaced by the same names in `safeFields` (the scrubber walks every level anyway).
 */
const REDACTED_NAMES = [
  'authorization', 'Authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'token', 'accessToken', 'access_token', 'refreshToken',
  'refresh_token', 'id_token', 'password', 'secret', 'clientSecret', 'client_secret', 'signingSecret', 'apiKey', 'api_key', 'key',
  'credential', 'sealedCredential', 'code_verifier', 'email', 'contactEmail', 'displayName', 'body', 'requestBody', 'description',
  'notes', 'content', 'prompt', 'messages',
];
export const REDACTED_PATHS: readonly string[] = [
  ...REDACTED_NAMES.map(quoted),
  ...['headers', 'req.headers'].flatMap((parent) => ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key'].map((name) => `${parent}${quoted(name).startsWith('[') ? '' : '.'}${quoted(name)}`)),
];

function quoted(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `["${name}"]`;
}

/** Fields made safe to write: errors serialized, every string scrubbed, secret and personal members replaced at any depth. */
function safeFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    out[name] = isRedactedMemberName(name) && value !== undefined && value !== null ? REDACTED : scrubValue(value);
  }
  return out;
}

export interface LogSinks {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * Structured JSON lines, one object per line (`time`, `level`, `msg`, then the fields), on
 * stdout (info) or stderr (warn, error). `write` lets a test capture both.
 */
export function createJsonLogger(write: LogSinks = {
  out: (line) => process.stdout.write(line),
  err: (line) => process.stderr.write(line),
}): Logger {
  const sink = (to: (line: string) => void): DestinationStream => ({ write: (line: string) => to(line) });
  const base: PinoLogger = pino(
    {
      base: null,
      messageKey: 'msg',
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
    },
    pino.multistream(
      [
        { level: 'info', stream: sink(write.out) },
        { level: 'warn', stream: sink(write.err) },
      ],
      { dedupe: true },
    ),
  );
  const emit = (level: 'info' | 'warn' | 'error') => (message: string, fields: LogFields = {}) =>
    base[level](safeFields(fields), scrubText(message));
  return { info: emit('info'), warn: emit('warn'), error: emit('error') };
}
