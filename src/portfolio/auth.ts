import { apiKeyPattern, apiKeyState, hashApiKey, type ApiKeyRecord } from '../store/apiKeys.js';
import { PortfolioError } from './errors.js';

export interface AuthenticatedKey {
  keyId: string;
  tenantId: string;
  /** The key's own allowance per window, when it has one. */
  rateLimit: number | null;
}

export type ApiKeyLookup = (keyHash: string) => ApiKeyRecord | undefined;

const UNAUTHENTICATED_MESSAGE = 'A valid API key is required: send Authorization: Bearer <API key>.';

/**
 * Resolves the `Authorization` header to a key and its tenant. Missing header, another scheme,
 * a malformed or unknown key: 401. A revoked or expired key: 403.
 */
export function authenticateApiKey(
  authorization: string | string[] | undefined,
  findKeyByHash: ApiKeyLookup,
  now: number,
): AuthenticatedKey {
  const header = Array.isArray(authorization) ? undefined : authorization;
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  const key = match?.[1];
  if (!key || !apiKeyPattern.test(key)) throw new PortfolioError('unauthenticated', UNAUTHENTICATED_MESSAGE);
  const stored = findKeyByHash(hashApiKey(key));
  if (!stored) throw new PortfolioError('unauthenticated', UNAUTHENTICATED_MESSAGE);
  const state = apiKeyState(stored, now);
  if (state === 'revoked') throw new PortfolioError('api_key_revoked', 'This API key has been revoked.');
  if (state === 'expired') throw new PortfolioError('api_key_expired', 'This API key has expired.');
  return { keyId: stored.id, tenantId: stored.tenantId, rateLimit: stored.rateLimit };
}
