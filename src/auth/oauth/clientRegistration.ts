// Registering an OAuth client: its redirect URIs are checked, a confidential client gets a secret
// that is returned once and stored only as a hash.
import type { RandomBytes } from '../../store/ids.js';
import type { OauthClientStore } from '../../store/oauthClients.js';
import { StoreError } from '../../store/errors.js';
import { mintClientSecret } from './oauthCredentials.js';
import { redirectUriProblems } from './redirectUris.js';

export interface OauthClientRegistration {
  workspaceId: string;
  name: string;
  redirectUris: readonly string[];
  scopes: readonly string[];
  /** A confidential client authenticates with a secret at the token endpoint; a public one only proves PKCE. */
  confidential: boolean;
  /** A fixed id (the demo data set uses one). */
  id?: string;
}

/** Stores the client; `secret` (confidential clients only) is the only copy that will ever exist. */
export async function registerOauthClient(
  clients: Pick<OauthClientStore, 'createOauthClient'>,
  registration: OauthClientRegistration,
  randomBytes?: RandomBytes,
): Promise<{ id: string; secret?: string }> {
  const problems = redirectUriProblems(registration.redirectUris);
  if (problems.length > 0) throw new StoreError('invalid_argument', `Redirect URIs refused: ${problems.join('; ')}.`);
  const minted = registration.confidential ? mintClientSecret(randomBytes) : undefined;
  const { id } = await clients.createOauthClient({
    workspaceId: registration.workspaceId,
    name: registration.name,
    redirectUris: registration.redirectUris,
    scopes: registration.scopes,
    secretHash: minted?.secretHash ?? null,
    id: registration.id,
  });
  return minted ? { id, secret: minted.secret } : { id };
}
