// What the connector operations share: sealing and opening credentials (with the secret box of
// the webhook signing secrets, the connector id as context), the refusal of a connector that has
// no usable credential (409 with `connectorId`, as the seed's error table says), and GitHub's
// failures in the contract's words (the upstream's own words, address and the credential stay in
// the log, never in an answer).
import type { GithubClient } from '../connectors/githubClient.js';
import { GithubFailure } from '../connectors/githubClient.js';
import type { ConnectorStore, ConnectorWithCredential } from '../store/connectors.js';
import type { ImportedIssueStore } from '../store/importedIssues.js';
import type { EventActor } from '../store/outboxEvents.js';
import type { SecretBox } from '../auth/secretBox.js';
import { ApiProblem } from './problems.js';

/** What the connector operations use, built once at start-up. */
export interface ConnectorServices {
  store: ConnectorStore;
  importedIssues: ImportedIssueStore;
  github: GithubClient;
  /** The webhook signing secrets' box: credentials are sealed exactly like them. */
  secretBox: SecretBox;
}

/** What a connector's credential is sealed with as associated data. */
export const credentialContext = (connectorId: string) => `connector:${connectorId}`;

export function sealCredential(box: SecretBox, connectorId: string, credential: string): string {
  return box.seal(credential, credentialContext(connectorId));
}

export function connectorNotFound(connectorId: string): ApiProblem {
  return new ApiProblem('not-found', { detail: `No connector ${connectorId} in this workspace.`, code: 'connector-not-found' });
}

/** The seed's advice on both connector conflicts: the caller cannot fix it, an administrator can. */
const reconnectAdvice = (connectorId: string) =>
  `An administrator of the workspace connects it (PUT /v1/connectors/${connectorId}/connection); your token is fine.`;

export function notConnectedProblem(connectorId: string): ApiProblem {
  return new ApiProblem('conflict', {
    detail: `The connector ${connectorId} is not connected. ${reconnectAdvice(connectorId)}`,
    code: 'connector-not-connected',
    extensions: { connectorId },
  });
}

export function reconnectRequiredProblem(connectorId: string, why: string, cause?: unknown): ApiProblem {
  return new ApiProblem('conflict', {
    detail: `The connector ${connectorId} must be connected again: ${why}. ${reconnectAdvice(connectorId)}`,
    code: 'connector-reconnect-required',
    extensions: { connectorId },
    cause,
  });
}

/**
 * The credential of a connector about to be used, opened; or the 409 that says why there is none.
 * A credential whose expiry has passed, or that no longer opens (the server's key was replaced),
 * is marked expired first.
 */
export async function usableCredential(services: ConnectorServices, workspaceId: string, found: ConnectorWithCredential | undefined, connectorId: string, actor: EventActor): Promise<{ token: string; sealed: string }> {
  if (!found) throw connectorNotFound(connectorId);
  const { connector, sealedCredential } = found;
  if (connector.status === 'not_connected' || connector.status === 'disconnected') throw notConnectedProblem(connector.id);
  if (sealedCredential === null) throw reconnectRequiredProblem(connector.id, 'its credential was refused or has expired');
  if (connector.status === 'expired') {
    await services.store.markExpired(workspaceId, connector.id, sealedCredential, actor);
    throw reconnectRequiredProblem(connector.id, `its credential expired at ${connector.credentialExpiresAt}`);
  }
  try {
    return { token: services.secretBox.open(sealedCredential, credentialContext(connector.id)), sealed: sealedCredential };
  } catch (error) {
    await services.store.markExpired(workspaceId, connector.id, sealedCredential, actor);
    throw reconnectRequiredProblem(connector.id, "its stored credential can no longer be read (the server's encryption key was replaced)", error);
  }
}

/** A GitHub failure other than a refused credential or a missing repository, in the contract's words. */
export function githubProblem(failure: GithubFailure, connectorId: string, nothingWritten: string): ApiProblem {
  const extensions = { connectorId };
  switch (failure.kind) {
    case 'timeout':
      return new ApiProblem('connector-provider-timeout', { detail: `GitHub did not answer in time; ${nothingWritten}. Retry later.`, code: 'provider-timeout', extensions, cause: failure });
    case 'unreachable':
      return new ApiProblem('connector-provider-error', { detail: `GitHub could not be reached; ${nothingWritten}. Retry later.`, code: 'provider-unreachable', extensions, cause: failure });
    case 'malformed-answer':
      return new ApiProblem('connector-provider-error', {
        detail: `GitHub's answer could not be used; ${nothingWritten}. Retry later, quoting the request id if it persists.`,
        code: 'provider-malformed-answer',
        extensions,
        cause: failure,
      });
    default:
      return new ApiProblem('connector-provider-error', {
        detail: `GitHub answered with an error; ${nothingWritten}. Retry later, quoting the request id if it persists.`,
        code: 'provider-status',
        extensions,
        cause: failure,
      });
  }
}

export { GithubFailure };
