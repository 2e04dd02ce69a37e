import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/work-platform/types.js';
import { escapePointerToken, unescapePointerToken } from './jsonPointer.js';

// The one translation of Ajv's errors (openapi-backend's request validation, a schema applied to a
// body, the portfolio import format, the response check) into issues a client can act on: one per
// failing field, worded from the keyword.

/** One failing field of a 422: `/title` (body, JSON pointer), `?limit` (query), `{taskId}` (path), `if-match` (header). */
export type ValidationIssue = components['schemas']['ValidationIssue'];
/** The contract's closed list of issue codes. */
export type ValidationIssueCode = ValidationIssue['code'];

/** Where a failing field is: the body, or a parameter by its location and name. */
export type IssueLocation = 'body' | 'query' | 'path' | 'header' | 'cookie';

export interface LocatedIssue extends ValidationIssue {
  location: IssueLocation;
  /** The parameter's name; for the body, the JSON pointer. */
  name: string;
}

/** openapi-backend reports a body that is not JSON as keyword `parse` at the request's root. */
export function isUnparseableBody(ajvErrors: readonly ErrorObject[], source: 'request' | 'body' = 'request'): boolean {
  return ajvErrors.some((error) => error.keyword === 'parse' && (error.instancePath === '' || locate(error.instancePath, source).kind === 'body'));
}

/** Ajv's errors as `errors[]` entries, one per failing field, in the order Ajv first reports each. */
export function validationIssues(ajvErrors: readonly ErrorObject[], source: 'request' | 'body' = 'request'): ValidationIssue[] {
  return locatedIssues(ajvErrors, source).map(({ path, code, message }) => ({ path, code, message }));
}

/** The same issues with the location and name of each field, for APIs that report parameters by name. */
export function locatedIssues(ajvErrors: readonly ErrorObject[], source: 'request' | 'body' = 'request'): LocatedIssue[] {
  const candidates = new Map<string, Candidate[]>();
  for (const error of ajvErrors) {
    const candidate = candidateOf(error, source);
    if (!candidate) continue;
    const list = candidates.get(candidate.path);
    if (list) list.push(candidate);
    else candidates.set(candidate.path, [candidate]);
  }
  const issues: LocatedIssue[] = [];
  for (const [path, list] of candidates) issues.push({ path, location: list[0]!.location, name: list[0]!.name, ...pickOne(list) });
  return issues;
}

interface Candidate {
  path: string;
  location: IssueLocation;
  name: string;
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
      if (named === 'requestBody') return { path: '', location: 'body', name: '', code: 'required', message: 'is required: send a JSON request body' };
      return undefined;
    }
    if (location.kind === 'body') {
      const pointer = `${location.pointer}/${escapePointerToken(named)}`;
      return {
        path: pointer,
        location: 'body',
        name: pointer,
        code: missing ? 'required' : 'unrecognized_keys',
        message: missing ? 'is required' : 'is not a recognized field',
      };
    }
    if (location.name === undefined) {
      return {
        path: parameterPath(location.kind, named),
        location: location.kind,
        name: named,
        code: missing ? 'required' : 'unrecognized_keys',
        message: missing ? 'is required' : `is not a recognized ${PARAMETER_NOUN[location.kind]}`,
      };
    }
    return undefined;
  }

  if (location.kind === 'body') return { path: location.pointer, location: 'body', name: location.pointer, ...describeError(error, params) };
  if (location.kind === 'request' || location.name === undefined) return undefined;
  return { path: parameterPath(location.kind, location.name), location: location.kind, name: location.name, ...describeError(error, params) };
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

function describeError(error: ErrorObject, params: Record<string, unknown>): Omit<Candidate, 'path' | 'location' | 'name'> {
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

const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

function patternMessage(pattern: string): string {
  if (pattern === SLUG_PATTERN) return 'must be lowercase letters and digits in groups joined by single hyphens, like "my-first-post"';
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

/** Longer lists (the 179 ISO 4217 codes) are named by their count: the schema lists them. */
const LISTED_VALUES = 20;

function listValues(values: unknown): string {
  if (!Array.isArray(values)) return 'the allowed values';
  if (values.length > LISTED_VALUES) return `the ${values.length} values the schema lists (${values.slice(0, 3).map(valueText).join(', ')}, …)`;
  return values.map(valueText).join(', ');
}

