import type { components } from '../../generated/portfolio/types.js';
import type { Reply } from '../contract/reply.js';
import type { Logger } from '../logger.js';
import { ServiceError } from '../serviceError.js';

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

/** Thrown anywhere in the portfolio pipeline; `toErrorReply` turns it into an ErrorEnvelope. */
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

/** The one error funnel: anything thrown becomes an ErrorEnvelope; unknown errors are logged, never shown. */
export function toErrorReply(error: unknown, requestId: string, logger: Logger): Reply {
  const known =
    error instanceof PortfolioError
      ? error
      : new PortfolioError('internal_error', 'An unexpected error occurred. Quote the request id when reporting it.');
  if (!(error instanceof PortfolioError)) {
    logger.error('unhandled error', { requestId, error });
  }
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
