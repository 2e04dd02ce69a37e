/** Why a store call refused to act; the CLI prints the message, callers may branch on `code`. */
export type StoreErrorCode = 'tenant_not_found' | 'api_key_not_found' | 'invalid_argument';

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}
