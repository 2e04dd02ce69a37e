import type { components } from '../../generated/portfolio/types.js';
import type { CredentialRefusedError, RefusalReason } from '../auth/credentialRefused.js';
import type { Failure, PipelineFailure } from '../contract/pipelineFailure.js';
import type { Reply } from '../contract/reply.js';
import { locatedIssues } from '../contract/validationIssues.js';
import type { Logger } from '../logger.js';
import { ServiceError, wordError, type ErrorWording } from '../serviceError.js';

type ErrorBody = components['schemas']['ErrorEnvelope']['error'];

/** The closed set of `ErrorEnvelope` codes, as the contract lists them. */
export type PortfolioErrorCode = ErrorBody['code'];

/** One failing parameter of an `invalid_parameter` error. */
export type ParameterProblem = NonNullable<ErrorBody['details']>[number];

const STATUS_OF: Record<PortfolioErrorCode, number> = {
  invalid_parameter: 400,
  unauthenticated: 401,
  api_key_revoked: 403,
  api_key_expired: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  malformed_request: 400,
  request_timeout: 408,
  headers_too_large: 431,
};

/** An error already in the ErrorEnvelope's words, thrown anywhere in the portfolio pipeline. */
export class PortfolioError extends ServiceError {
  readonly kind = 'error-envelope';
  readonly status: number;

  constructor(
    readonly code: PortfolioErrorCode,
    message: string,
    readonly options: { details?: ParameterProblem[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = STATUS_OF[code];
  }
}

export const NOT_FOUND_MESSAGE = 'Not found.';

/**
 * The portfolio API's one error funnel: every error of the family it words (ENVELOPE_WORDING)
 * becomes its ErrorEnvelope; anything else an `internal_error`, logged with the request id, never shown.
 */
export function toErrorReply(error: unknown, requestId: string, logger: Logger): Reply {
  const worded = wordError(error, ENVELOPE_WORDING);
  if (!worded) logger.error('unhandled error', { requestId, error });
  const known = worded ?? new PortfolioError('internal_error', 'An unexpected error occurred. Quote the request id when reporting it.');
  return {
    status: known.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...known.options.headers },
    body: {
      error: {
        code: known.code,
        status: known.status,
        message: known.message,
        requestId,
        ...(known.options.details ? { details: known.options.details } : {}),
      },
    },
  };
}

const REFUSALS: Record<RefusalReason, () => PortfolioError> = {
  unauthenticated: () => new PortfolioError('unauthenticated', 'A valid API key is required: send Authorization: Bearer <API key>.'),
  'key-revoked': () => new PortfolioError('api_key_revoked', 'This API key has been revoked.'),
  'key-expired': () => new PortfolioError('api_key_expired', 'This API key has expired.'),
  // API keys are not sessions; these cannot come from the apiKey scheme.
  'session-expired': () => REFUSALS.unauthenticated(),
  'session-revoked': () => REFUSALS.unauthenticated(),
};

/** The errors the portfolio API answers in an ErrorEnvelope of their own; any other is its 500. */
export type PortfolioErrors = PortfolioError | PipelineFailure | CredentialRefusedError;

/** Undefined: a failure that is not the API's to word (its 500). */
const ENVELOPE_WORDING: ErrorWording<PortfolioError | undefined, PortfolioErrors> = {
  'error-envelope': (error) => error,
  'credential-refused': (error) => REFUSALS[error.reason](),
  'pipeline-failure': ({ failure }) => {
    switch (failure.kind) {
      case 'not-found':
        return new PortfolioError('not_found', NOT_FOUND_MESSAGE);
      case 'method-not-allowed':
        return new PortfolioError('method_not_allowed', `Method ${failure.method} is not allowed here; use ${failure.allowed.join(', ')}.`, {
          headers: { allow: failure.allowed.join(', ') },
        });
      case 'invalid-request':
        return invalidParameters(failure);
      case 'unavailable': {
        const why = failure.reason === 'busy' ? 'The service is busy' : 'The database cannot be reached now';
        return new PortfolioError('service_unavailable', `${why}; retry after ${failure.retryAfterSeconds} seconds.`, {
          headers: { 'retry-after': String(failure.retryAfterSeconds) },
        });
      }
      case 'malformed-request':
        return new PortfolioError('malformed_request', `The request is malformed: ${failure.reason}.`);
      case 'headers-too-large':
        return new PortfolioError('headers_too_large', `The request's headers exceed ${failure.limitBytes} bytes.`);
      case 'request-timeout':
        return new PortfolioError('request_timeout', `The request did not arrive in time (its head within ${failure.timeoutMs / 1000} seconds, all of it within the server's request timeout).`);
      case 'unsupported-media-type':
      case 'payload-too-large':
        // The portfolio API takes no request bodies; the pipeline reads none.
        return undefined;
    }
  },
};

/** One ErrorEnvelope detail per failing parameter. */
function invalidParameters(failure: Extract<Failure, { kind: 'invalid-request' }>): PortfolioError {
  const details: ParameterProblem[] = [];
  for (const issue of locatedIssues(failure.errors)) {
    if (issue.location !== 'query' && issue.location !== 'path' && issue.location !== 'header') continue;
    details.push({ in: issue.location, name: issue.name, message: issue.message });
  }
  if (details.length === 0) details.push({ in: 'query', name: 'query', message: 'is invalid' });
  const summary = details.map((detail) => `"${detail.name}" ${detail.message}`).join('; ');
  return new PortfolioError('invalid_parameter', `Invalid ${details[0]!.in} parameter ${summary}.`, { details });
}
