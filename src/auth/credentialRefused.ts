import { ServiceError } from '../serviceError.js';

/**
 * Why a presented credential proves no caller. Each API words it in its own vocabulary: the
 * portfolio API as an ErrorEnvelope (401, or 403 for a revoked or expired key), the Work-Platform
 * API as a problem (401 `unauthenticated`, or `token-expired` for a session that only expired).
 */
export type RefusalReason =
  /** No `Authorization: Bearer …`, a malformed or unknown credential, or one whose owner is gone. */
  | 'unauthenticated'
  | 'key-revoked'
  | 'key-expired'
  /** A genuine session token past its `exp`. */
  | 'session-expired'
  /** A session token issued before its user's sessions were revoked. */
  | 'session-revoked';

export class CredentialRefusedError extends ServiceError {
  readonly kind = 'credential-refused';
  constructor(readonly reason: RefusalReason) {
    super(`credential refused: ${reason}`);
  }
}
