import type { ErrorObject } from 'ajv';
import { ServiceError } from '../serviceError.js';

/**
 * What the pipeline itself refuses, before or around a handler. Each API's profile words these in
 * its own error vocabulary (ErrorEnvelope, problem+json) in its one error funnel.
 */
export type Failure =
  | { kind: 'not-found'; path: string }
  | { kind: 'method-not-allowed'; method: string; path: string; allowed: readonly string[] }
  /** Ajv's errors of the request's parameters and body; the API translates them with validationIssues.ts. */
  | { kind: 'invalid-request'; errors: readonly ErrorObject[] }
  | { kind: 'unsupported-media-type'; contentType: string; accepted: readonly string[] }
  | { kind: 'payload-too-large'; limitBytes: number }
  /**
   * The database could not answer: `busy`, it stayed locked by another writer for the whole retry
   * budget; `unreachable`, it is down, restarting or cut off. Nothing was written (but see the
   * 503's description: a connection lost during the commit itself leaves it unknown).
   */
  | { kind: 'unavailable'; reason: 'busy' | 'unreachable'; retryAfterSeconds: number }
  /** Refused by Node's HTTP parser before any API saw the request. */
  /** `code` names a case the API may word apart. */
  | { kind: 'malformed-request'; reason: string; code?: 'duplicate-authorization' | 'invalid-utf8' | 'duplicate-json-key' | 'json-too-deep' }
  | { kind: 'headers-too-large'; limitBytes: number }
  | { kind: 'request-timeout'; timeoutMs: number };

export class PipelineFailure extends ServiceError {
  readonly kind = 'pipeline-failure';
  constructor(readonly failure: Failure) {
    super(failure.kind);
  }
}
