import { apiKeyState, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyInput } from '../store/apiKeys.js';
import type { RandomBytes } from '../store/ids.js';
import { apiKeyPattern, hashApiKey, mintApiKey } from './apiKeyFormat.js';
import { CredentialRefusedError } from './credentialRefused.js';

export interface AuthenticatedKey {
  keyId: string;
  tenantId: string;
  /** The key's own allowance per window, when it has one. */
  rateLimit: number | null;
}

export type ApiKeyLookup = (keyHash: string) => Promise<ApiKeyRecord | undefined>;

/**
 * Resolves the `Authorization` header to a key and its tenant. Missing header, another scheme,
 * a malformed or unknown key: 401. A revoked or expired key: 403.
 */
export async function authenticateApiKey(
  authorization: string | string[] | undefined,
  findKeyByHash: ApiKeyLookup,
  now: number,
): Promise<AuthenticatedKey> {
  const header = Array.isArray(authorization) ? undefined : authorization;
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  const key = match?.[1];
  if (!key || !apiKeyPattern.test(key)) throw new CredentialRefusedError('unauthenticated');
  const stored = await findKeyByHash(hashApiKey(key));
  if (!stored) throw new CredentialRefusedError('unauthenticated');
  const state = apiKeyState(stored, now);
  if (state === 'revoked') throw new CredentialRefusedError('key-revoked');
  if (state === 'expired') throw new CredentialRefusedError('key-expired');
  return { keyId: stored.id, tenantId: stored.tenantId, rateLimit: stored.rateLimit };
}

/** Mints a key and stores its hash; the returned `key` is the only copy that will ever exist. */
export async function issueApiKey(
  keys: Pick<ApiKeyStore, 'createApiKey'>,
  input: Omit<CreateApiKeyInput, 'keyHash' | 'keyPrefix'>,
  randomBytes?: RandomBytes,
): Promise<{ id: string; key: string }> {
  const { key, keyHash, keyPrefix } = mintApiKey(randomBytes);
  const { id } = await keys.createApiKey({ ...input, keyHash, keyPrefix });
  return { id, key };
}
