import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/work-platform/types.js';
import { problemTypes } from '../../generated/work-platform/rules.js';
import { isUnparseableBody, validationIssues, type ValidationIssue } from '../contract/validationIssues.js';
import type { CursorError } from '../paging/cursor.js';
import { ServiceError } from '../serviceError.js';

/**
 * The closed catalogue of problem types, from the contract (`x-problem-types` of the Problem
 * schema): `type` is `<type base>/<slug>`, and `title` is the same for every problem of a type
 * (RFC 9457 §3.1.3), so clients may show it but branch on `type`.
 */
export const PROBLEM_TYPES = Object.freeze(problemTypes);

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The default `ERROR_TYPE_BASE`. */
export const DEFAULT_PROBLEM_TYPE_BASE = 'https://errors.work-platform.example/problems';

/** What an unexpected error says: the cause stays in the log, under the request id. */
export const INTERNAL_DETAIL = 'An unexpected error occurred. Quote the request id when reporting it.';

export const EXTENSION_MEMBERS = ['errors', 'requiredScopes', 'grantedScopes', 'requiredRoles', 'heldRoles', 'rateLimit', 'quota', 'aiSpend', 'connectorId'] as const;

/** The extension members the contract's Problem schema declares, and only those. */
export type ProblemExtensions = Pick<components['schemas']['Problem'], (typeof EXTENSION_MEMBERS)[number]>;

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
export class ApiProblem extends ServiceError {
  override readonly name = 'ApiProblem';
  readonly kind = 'problem';
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

export interface ValidationProblemOptions {
  /**
   * `request` (default): errors of openapi-backend's request validation, whose instance paths
   * start with `/requestBody`, `/query`, `/path`, `/header` or `/cookie`. `body`: errors of a
   * schema applied to the body itself.
   */
  source?: 'request' | 'body';
  /** Replaces the generated summary. */
  detail?: string;
  /** The specific case of a 422 (e.g. `invalid-cursor`). */
  code?: string;
  headers?: Record<string, string>;
}

/** 403 `origin-not-allowed`: a browser `Origin` outside the allowlist (the API and its agent tool endpoint alike). */
export function originNotAllowed(origin: string, headers: Record<string, string>): ApiProblem {
  return new ApiProblem('forbidden', { detail: `Browser calls from ${origin} are not allowed.`, code: 'origin-not-allowed', headers });
}

/**
 * Maps Ajv (2020-12, allErrors) errors to a problem: 422 `validation` listing every failing field
 * once; 400 `bad-request` with code `invalid-json` when the body did not parse; 400 `bad-request`
 * with code `value-too-long` (and the same `errors`) when every failure is a body value over its
 * `maxLength`, the storage limit, as the seed answers a value storage cannot hold.
 */
export function validationProblem(ajvErrors: readonly ErrorObject[], options: ValidationProblemOptions = {}): ApiProblem {
  const source = options.source ?? 'request';
  if (isUnparseableBody(ajvErrors, source)) {
    return new ApiProblem('bad-request', {
      code: 'invalid-json',
      detail: 'The request body is not valid JSON.',
      headers: options.headers,
    });
  }
  const errors = validationIssues(ajvErrors, source);
  if (onlyTooLongBodyValues(ajvErrors, source)) {
    return new ApiProblem('bad-request', {
      code: 'value-too-long',
      detail: `${errors.length === 1 ? 'A value is' : `${errors.length} values are`} longer than ${errors.length === 1 ? 'its storage limit' : 'their storage limits'}: ${errors.map((issue) => `${issue.path} ${issue.message}`).join('; ')}.`,
      headers: options.headers,
      extensions: { errors },
    });
  }
  return new ApiProblem('validation', {
    detail: options.detail ?? summarize(errors),
    code: options.code,
    headers: options.headers,
    extensions: { errors },
  });
}

/**
 * A cursor the codec refused: 422 `validation` with code `invalid-cursor` (unreadable, altered,
 * or signed with a retired secret) or `cursor-mismatch` (issued for another listing).
 */
export function cursorProblem(error: CursorError): ApiProblem {
  const mismatch = error.reason === 'mismatch';
  const message = mismatch
    ? 'belongs to a listing with another sort, order or scope; send the same sort and order as the request that returned it, or restart without a cursor'
    : 'is not a cursor this API issued, or it was altered; restart the listing without a cursor';
  return new ApiProblem('validation', {
    code: mismatch ? 'cursor-mismatch' : 'invalid-cursor',
    detail: `The cursor ${message}.`,
    extensions: { errors: [{ path: '?cursor', message, code: 'invalid_cursor' }] },
  });
}

/** Every error is a `maxLength` of a body member (not of a parameter): the storage limits' 400. */
function onlyTooLongBodyValues(ajvErrors: readonly ErrorObject[], source: 'request' | 'body'): boolean {
  return ajvErrors.length > 0 && ajvErrors.every((error) => error.keyword === 'maxLength' && (source === 'body' || error.instancePath.startsWith('/requestBody/')));
}

/** A value of the store that is longer than its storage limit, as an `errors` entry of the 400. */
export function tooLongIssue(field: string, limit: number): ValidationIssue {
  return { path: `/${field}`, code: 'too_big', message: `must have at most ${limit} ${limit === 1 ? 'character' : 'characters'}` };
}

const SUMMARY_ENTRIES = 3;

function summarize(errors: ValidationIssue[]): string {
  if (errors.length === 0) return 'The request failed validation.';
  const shown = errors.slice(0, SUMMARY_ENTRIES).map((issue) => `${issue.path || 'the body'} ${issue.message}`);
  const more = errors.length - shown.length;
  const noun = errors.length === 1 ? 'field is' : 'fields are';
  return `${errors.length} ${noun} invalid: ${shown.join('; ')}${more > 0 ? `; and ${more} more (see errors)` : ''}.`;
}

