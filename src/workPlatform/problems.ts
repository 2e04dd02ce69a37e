import type { ErrorObject } from 'ajv';
import type { Reply } from '../contract/reply.js';
import type { Logger } from '../logger.js';
import type { CursorError } from '../paging/cursor.js';

/**
 * The closed catalogue of problem types: `type` is `<type base>/<slug>`, and `title` is the same
 * for every problem of a type (RFC 9457 §3.1.3), so clients may show it but branch on `type`.
 */
export const PROBLEM_TYPES = Object.freeze({
  'bad-request': { status: 400, title: 'Bad request' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  'token-expired': { status: 401, title: 'Session token expired' },
  'insufficient-scope': { status: 403, title: 'Insufficient scope' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  validation: { status: 422, title: 'Validation failed' },
  'precondition-required': { status: 428, title: 'Precondition required' },
  'rate-limited': { status: 429, title: 'Rate limit exceeded' },
  'quota-exceeded': { status: 429, title: 'Monthly quota exceeded' },
  internal: { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>);

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The default `ERROR_TYPE_BASE`. */
export const DEFAULT_PROBLEM_TYPE_BASE = 'https://errors.work-platform.example/problems';

/** What an unexpected error says: the cause stays in the log, under the request id. */
export const INTERNAL_DETAIL = 'An unexpected error occurred. Quote the request id when reporting it.';

export type ValidationIssueCode =
  | 'required'
  | 'invalid_type'
  | 'invalid_enum_value'
  | 'too_small'
  | 'too_big'
  | 'invalid_format'
  | 'unrecognized_keys'
  | 'invalid_cursor';

/** One failing field of a 422: `/title` (body, JSON pointer), `?limit` (query), `{taskId}` (path), `if-match` (header). */
export interface ValidationIssue {
  path: string;
  message: string;
  code: ValidationIssueCode;
}

export interface RateLimitMember {
  class: 'read' | 'write' | 'ai';
  limit: number;
  windowMs: number;
  retryAfterSec: number;
  tier: 'free' | 'pro' | 'enterprise';
}

export interface QuotaMember {
  period: 'month';
  limit: number;
  used: number;
  /** ISO 8601 UTC timestamp. */
  resetAt: string;
}

/** The extension members the contract's Problem schema declares, and only those. */
export interface ProblemExtensions {
  errors?: ValidationIssue[];
  requiredScopes?: string[];
  grantedScopes?: string[];
  rateLimit?: RateLimitMember;
  quota?: QuotaMember;
}

const EXTENSION_MEMBERS = ['errors', 'requiredScopes', 'grantedScopes', 'rateLimit', 'quota'] as const;

export interface ApiProblemOptions {
  /** Explanation of this occurrence, for a human; never parsed by clients. */
  detail: string;
  /** A specific case, e.g. `task-not-found`, `version-conflict`. */
  code?: string;
  /** Extra response headers, e.g. `Allow`, `Retry-After`, rate-limit headers. */
  headers?: Record<string, string>;
  extensions?: ProblemExtensions;
  /** What caused it, for the log; never sent. */
  cause?: unknown;
}

/** Thrown (or returned) anywhere in the Work-Platform pipeline; `toProblemReply` renders it. */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly code: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly extensions: Readonly<ProblemExtensions>;

  constructor(
    readonly slug: ProblemSlug,
    options: ApiProblemOptions,
  ) {
    super(options.detail, options.cause === undefined ? undefined : { cause: options.cause });
    const type = PROBLEM_TYPES[slug];
    if (!type) throw new TypeError(`unknown problem type "${String(slug)}"`);
    this.status = type.status;
    this.title = type.title;
    this.detail = options.detail;
    this.code = options.code;
    this.headers = { ...options.headers };
    this.extensions = { ...options.extensions };
  }
}

/**
 * The one error funnel: an `ApiProblem` becomes its problem document; anything else becomes a
 * generic 500 `internal`, and the error itself (stack included) goes to the log with the request
 * id, never to the client. 5xx problems are logged too.
 */
export function toProblemReply(error: unknown, requestId: string, typeBase: string, logger: Logger): Reply {
  const problem = error instanceof ApiProblem ? error : new ApiProblem('internal', { detail: INTERNAL_DETAIL });
  if (!(error instanceof ApiProblem)) {
    logger.error('unhandled error', { requestId, error });
  } else if (problem.status >= 500) {
    logger.error('server problem', { requestId, slug: problem.slug, code: problem.code, detail: problem.detail, error: problem.cause });
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(problem.headers)) {
    if (name.toLowerCase() !== 'content-type') headers[name] = value;
  }
  headers['content-type'] = PROBLEM_CONTENT_TYPE;

  const body: Record<string, unknown> = {
    type: `${typeBase.replace(/\/+$/, '')}/${problem.slug}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    requestId,
  };
  if (problem.code !== undefined) body.code = problem.code;
  for (const member of EXTENSION_MEMBERS) {
    if (problem.extensions[member] !== undefined) body[member] = problem.extensions[member];
  }
  return { status: problem.status, headers, body };
}

// ---------------------------------------------------------------------------------------------
// Validation (422): Ajv errors → one `errors[]` entry per failing field
// ---------------------------------------------------------------------------------------------

export interface ValidationProblemOptions {
  /**
   * `request` (default): errors of openapi-backend's request validation, whose instance paths
   * start with `/requestBody`, `/query`, `/path`, `/header` or `/cookie`. `body`: errors of a
   * schema applied to the body itself.
   */
  source?: 'request' | 'body';
  /** Replaces the generated summary. */
  detail?: string;
  headers?: Record<string, string>;
}

/**
 * Maps Ajv (2020-12, allErrors) errors to a problem: 422 `validation` listing every failing field
 * once, or 400 `bad-request` with code `invalid-json` when the body did not parse.
 */
export function validationProblem(ajvErrors: readonly ErrorObject[], options: ValidationProblemOptions = {}): ApiProblem {
  const source = options.source ?? 'request';
  // openapi-backend reports an unparseable JSON body as keyword `parse` at the request's root.
  const bodyUnparseable = ajvErrors.some(
    (error) => error.keyword === 'parse' && (error.instancePath === '' || locate(error.instancePath, source).kind === 'body'),
  );
  if (bodyUnparseable) {
    return new ApiProblem('bad-request', {
      code: 'invalid-json',
      detail: 'The request body is not valid JSON.',
      headers: options.headers,
    });
  }
  const errors = validationIssues(ajvErrors, source);
  return new ApiProblem('validation', {
    detail: options.detail ?? summarize(errors),
    headers: options.headers,
    extensions: { errors },
  });
}

/**
 * A cursor the codec refused: 422 `validation` with code `invalid-cursor` (unreadable, altered,
 * or signed with a retired secret) or `cursor-mismatch` (issued for another listing).
 */
export function cursorProblem(error: CursorError, options: { headers?: Record<string, string> } = {}): ApiProblem {
  const mismatch = error.reason === 'mismatch';
  const message = mismatch
    ? 'belongs to a listing with another sort, order or scope; send the same sort and order as the request that returned it, or restart without a cursor'
    : 'is not a cursor this API issued, or it was altered; restart the listing without a cursor';
  return new ApiProblem('validation', {
    code: mismatch ? 'cursor-mismatch' : 'invalid-cursor',
    detail: `The cursor ${message}.`,
    headers: options.headers,
    extensions: { errors: [{ path: '?cursor', message, code: 'invalid_cursor' }] },
  });
}

/** Ajv's errors as `errors[]` entries, one per failing field, in the order Ajv first reports each. */
export function validationIssues(ajvErrors: readonly ErrorObject[], source: 'request' | 'body' = 'request'): ValidationIssue[] {
  const candidates = new Map<string, Candidate[]>();
  for (const error of ajvErrors) {
    const candidate = candidateOf(error, source);
    if (!candidate) continue;
    const list = candidates.get(candidate.path);
    if (list) list.push(candidate);
    else candidates.set(candidate.path, [candidate]);
  }
  const issues: ValidationIssue[] = [];
  for (const [path, list] of candidates) issues.push({ path, ...pickOne(list) });
  return issues;
}

interface Candidate {
  path: string;
  code: ValidationIssueCode;
  message: string;
  /** The JSON types a `type` error asked for, merged across anyOf branches. */
  types?: string[];
  /** anyOf/oneOf/if: a summary of errors reported beside it. */
  summary?: boolean;
}

/** Which one entry a field gets when Ajv reports several errors for it. */
const CODE_RANK: ValidationIssueCode[] = [
  'required',
  'unrecognized_keys',
  'invalid_enum_value',
  'invalid_format',
  'too_small',
  'too_big',
  'invalid_cursor',
  // Last: beside any other error, a type error comes from a branch the value did not take
  // (the `null` of a nullable enum), or from a type that another keyword says more about.
  'invalid_type',
];

function pickOne(list: Candidate[]): Omit<ValidationIssue, 'path'> {
  const specific = list.filter((candidate) => !candidate.summary);
  if (specific.length === 0) return { code: 'invalid_type', message: 'does not match any of the allowed forms' };
  const best = [...specific].sort((a, b) => CODE_RANK.indexOf(a.code) - CODE_RANK.indexOf(b.code))[0]!;
  const types = [...new Set(specific.flatMap((candidate) => candidate.types ?? []))];
  // A nullable enum written as anyOf [enum, null]: the null branch's type error says null is allowed too.
  if (best.code === 'invalid_enum_value' && types.includes('null')) return { code: best.code, message: `${best.message} or null` };
  if (best.code !== 'invalid_type' || !best.types) return { code: best.code, message: best.message };
  return { code: 'invalid_type', message: typeMessage(types) };
}

type Location =
  | { kind: 'body'; pointer: string }
  | { kind: 'query' | 'path' | 'header' | 'cookie'; name: string | undefined }
  | { kind: 'request' };

const PARAMETER_LOCATIONS = new Set(['query', 'path', 'header', 'cookie']);

/** Where an instance path points: into the body, at a parameter, or at the request as a whole. */
function locate(instancePath: string, source: 'request' | 'body'): Location {
  if (source === 'body') return { kind: 'body', pointer: instancePath };
  if (instancePath === '') return { kind: 'request' };
  const [, first = '', second, ...rest] = instancePath.split('/');
  if (first === 'requestBody') {
    return { kind: 'body', pointer: second === undefined ? '' : `/${[second, ...rest].join('/')}` };
  }
  if (PARAMETER_LOCATIONS.has(first)) {
    return { kind: first as 'query', name: second === undefined ? undefined : unescapePointerToken(second) };
  }
  return { kind: 'body', pointer: instancePath };
}

function parameterPath(kind: 'query' | 'path' | 'header' | 'cookie', name: string): string {
  if (kind === 'query') return `?${name}`;
  if (kind === 'path') return `{${name}}`;
  return name;
}

const PARAMETER_NOUN = { query: 'query parameter', path: 'path parameter', header: 'header', cookie: 'cookie' } as const;

function candidateOf(error: ErrorObject, source: 'request' | 'body'): Candidate | undefined {
  const params = error.params as Record<string, unknown>;
  const location = locate(error.instancePath, source);

  // Keywords that name a property below the reported object: the entry points at that property.
  const named = namedProperty(error);
  if (named !== undefined) {
    const missing = error.keyword !== 'additionalProperties' && error.keyword !== 'unevaluatedProperties';
    if (location.kind === 'request') {
      // openapi-backend's top-level object: `requestBody` (a required body) or a location.
      if (named === 'requestBody') return { path: '', code: 'required', message: 'is required: send a JSON request body' };
      return undefined;
    }
    if (location.kind === 'body') {
      return {
        path: `${location.pointer}/${escapePointerToken(named)}`,
        code: missing ? 'required' : 'unrecognized_keys',
        message: missing ? 'is required' : 'is not a recognized field',
      };
    }
    if (location.name === undefined) {
      return {
        path: parameterPath(location.kind, named),
        code: missing ? 'required' : 'unrecognized_keys',
        message: missing ? 'is required' : `is not a recognized ${PARAMETER_NOUN[location.kind]}`,
      };
    }
    return undefined;
  }

  let path: string;
  if (location.kind === 'body') path = location.pointer;
  else if (location.kind === 'request' || location.name === undefined) return undefined;
  else path = parameterPath(location.kind, location.name);
  return { path, ...describeError(error, params) };
}

function namedProperty(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
    case 'dependencies':
      return typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
    case 'additionalProperties':
      return typeof params.additionalProperty === 'string' ? params.additionalProperty : undefined;
    case 'unevaluatedProperties':
      return typeof params.unevaluatedProperty === 'string' ? params.unevaluatedProperty : undefined;
    default:
      return undefined;
  }
}

function describeError(error: ErrorObject, params: Record<string, unknown>): Omit<Candidate, 'path'> {
  const limit = typeof params.limit === 'number' ? params.limit : undefined;
  switch (error.keyword) {
    case 'type': {
      const types = typeof params.type === 'string' ? params.type.split(',') : Array.isArray(params.type) ? params.type.map(String) : undefined;
      // No declared type: a rule error (e.g. "must be written as a plain integer") with its own message.
      if (!types) return { code: 'invalid_type', message: error.message ?? 'has the wrong type' };
      return { code: 'invalid_type', message: typeMessage(types), types };
    }
    case 'enum':
      return { code: 'invalid_enum_value', message: `must be one of ${listValues(params.allowedValues)}` };
    case 'const':
      return { code: 'invalid_enum_value', message: `must be ${valueText(params.allowedValue)}` };
    case 'minLength':
      return { code: 'too_small', message: `must have at least ${count(limit, 'character')}` };
    case 'maxLength':
      return { code: 'too_big', message: `must have at most ${count(limit, 'character')}` };
    case 'minimum':
      return { code: 'too_small', message: `must be at least ${String(limit)}` };
    case 'exclusiveMinimum':
      return { code: 'too_small', message: `must be greater than ${String(limit)}` };
    case 'maximum':
      return { code: 'too_big', message: `must be at most ${String(limit)}` };
    case 'exclusiveMaximum':
      return { code: 'too_big', message: `must be less than ${String(limit)}` };
    case 'minItems':
      return { code: 'too_small', message: `must have at least ${count(limit, 'item')}` };
    case 'maxItems':
      return { code: 'too_big', message: `must have at most ${count(limit, 'item')}` };
    case 'minProperties':
      return { code: 'too_small', message: `must have at least ${count(limit, 'field')}` };
    case 'maxProperties':
      return { code: 'too_big', message: `must have at most ${count(limit, 'field')}` };
    case 'format':
      return { code: 'invalid_format', message: formatMessage(String(params.format)) };
    case 'pattern':
      return { code: 'invalid_format', message: patternMessage(String(params.pattern)) };
    case 'anyOf':
    case 'oneOf':
    case 'if':
      return { code: 'invalid_type', message: 'does not match any of the allowed forms', summary: true };
    default:
      // Documented fallback: any other keyword (multipleOf, uniqueItems, not, a rule's own
      // keyword...) is `invalid_type` with Ajv's or the rule's message.
      return { code: 'invalid_type', message: error.message ?? 'is invalid' };
  }
}

const TYPE_NOUN: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeMessage(types: string[]): string {
  // `number` already admits integers.
  const shown = types.includes('number') ? types.filter((type) => type !== 'integer') : types;
  const nouns = shown.map((type) => TYPE_NOUN[type] ?? type);
  return `must be ${nouns.length <= 1 ? (nouns[0] ?? 'of another type') : `${nouns.slice(0, -1).join(', ')} or ${nouns.at(-1)!}`}`;
}

const FORMAT_MESSAGE: Record<string, string> = {
  'date-time': 'must be an ISO 8601 date-time with a time zone, such as 2026-11-23T09:41:00.000Z',
  date: 'must be a date such as 2026-11-23',
  time: 'must be a time with a time zone, such as 09:41:00Z',
  email: 'must be an email address',
  uri: 'must be an absolute URI',
  url: 'must be an absolute URL',
  uuid: 'must be a UUID',
};

function formatMessage(format: string): string {
  return FORMAT_MESSAGE[format] ?? `must be a valid ${format}`;
}

function patternMessage(pattern: string): string {
  // The contract's id patterns: `^prj_[A-Za-z0-9]+$`.
  const prefix = /^\^([a-z]+(?:_[a-z]+)*_)\[A-Za-z0-9\]\+\$$/.exec(pattern)?.[1];
  if (prefix) return `must be "${prefix}" followed by letters and digits`;
  return `must match the pattern ${pattern}`;
}

function count(limit: number | undefined, noun: string): string {
  return `${String(limit)} ${limit === 1 ? noun : `${noun}s`}`;
}

function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function listValues(values: unknown): string {
  return Array.isArray(values) ? values.map(valueText).join(', ') : 'the allowed values';
}

const SUMMARY_ENTRIES = 3;

function summarize(errors: ValidationIssue[]): string {
  if (errors.length === 0) return 'The request failed validation.';
  const shown = errors.slice(0, SUMMARY_ENTRIES).map((issue) => `${issue.path || 'the body'} ${issue.message}`);
  const more = errors.length - shown.length;
  const noun = errors.length === 1 ? 'field is' : 'fields are';
  return `${errors.length} ${noun} invalid: ${shown.join('; ')}${more > 0 ? `; and ${more} more (see errors)` : ''}.`;
}

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
