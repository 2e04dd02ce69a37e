// Issuing personal access tokens: a new token is minted here and only its hash is stored.
import type { RandomBytes } from '../store/ids.js';
import type { CreatePatInput, PersonalAccessTokenStore } from '../store/personalAccessTokens.js';
import { mintPersonalAccessToken } from './patFormat.js';

/** Mints a token and stores its hash; the returned `token` is the only copy that will ever exist. */
export async function issuePersonalAccessToken(
  pats: Pick<PersonalAccessTokenStore, 'createPat'>,
  input: Omit<CreatePatInput, 'tokenHash' | 'tokenPrefix'>,
  randomBytes?: RandomBytes,
): Promise<{ id: string; token: string }> {
  const { token, tokenHash, tokenPrefix } = mintPersonalAccessToken(randomBytes);
  const { id } = await pats.createPat({ ...input, tokenHash, tokenPrefix });
  return { id, token };
}

/** Replaces an active token with a new one (same user, scopes and expiry); the old one is revoked. */
export async function rotatePersonalAccessToken(
  pats: Pick<PersonalAccessTokenStore, 'rotatePat'>,
  id: string,
  randomBytes?: RandomBytes,
): Promise<{ id: string; token: string }> {
  const { token, tokenHash, tokenPrefix } = mintPersonalAccessToken(randomBytes);
  return { id: (await pats.rotatePat(id, { tokenHash, tokenPrefix })).id, token };
}
