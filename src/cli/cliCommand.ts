// What every admin CLI command is made of: its definition, the context it runs in, the error it
// reports, and the small parsers the commands share.
import type { ParseArgsConfig } from 'node:util';
import type { StoreSource } from '../store/engine.js';
import type { ImportProblem } from '../portfolio/import/validateImport.js';

/** A failure to report: message on stderr, exit code 1, and with --json an error object on stdout. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly details: ImportProblem[] = [],
  ) {
    super(message);
  }
}

export interface CommandOutput {
  json: unknown;
  text: string;
}

export interface CommandContext {
  /**
   * Opens the database on first use, so that --help and usage errors never create a file: the
   * PostgreSQL engine when DATABASE_URL is set, else the SQLite file at DATABASE_PATH.
   */
  db(): Promise<StoreSource>;
  /** The resolved DATABASE_PATH; generated secrets are kept in its folder. */
  databasePath: string;
  env: NodeJS.ProcessEnv;
  now: () => number;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** Progress lines of a long command (stderr), apart from its one result on stdout. */
  progress?: (text: string) => void;
}

export interface Command {
  path: string[];
  usage: string;
  summary: string;
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  positionals: number;
  run(context: CommandContext): Promise<CommandOutput>;
}

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function required(context: CommandContext, name: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new CliError(`Missing required option --${name}.`);
  return value;
}

const isoDateTime = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

export function parseExpiresAt(value: string | boolean | undefined): number | null {
  if (value === undefined) return null;
  const ms = typeof value === 'string' && isoDateTime.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new CliError(
      `--expires-at must be an ISO 8601 date (2026-01-31, midnight UTC) or date-time with offset (2026-01-31T12:00:00Z); got "${String(value)}".`,
    );
  }
  return ms;
}
