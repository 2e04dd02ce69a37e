import type { PersonalAccessTokenStore } from '../store/personalAccessTokens.js';
import { roleScopes, scopeCatalogue } from '../../generated/work-platform/rules.js';
import type { EventActor } from '../store/outboxEvents.js';
import { patState } from '../store/personalAccessTokens.js';
import { hashPersonalAccessToken, personalAccessTokenPattern } from './patFormat.js';
import { verifySessionToken } from './sessionTokens.js';
import type { KeyRing } from './keyRings.js';
import type { UserStore, WorkspaceRole } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import { CredentialRefusedError } from './credentialRefused.js';
import type { OauthRecordStore } from '../store/oauthRecords.js';
import { oauthAccessTokenPattern, oauthSecretHash } from './oauth/oauthCredentials.js';

/** Who is calling: resolved from the bearer token, the first thing every request does. */
export interface Caller {
  kind: 'pat' | 'session' | 'oauth';
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
  /**
   * The scopes in force for this request: a session's are its user's role's (`x-role-scopes`); a PAT's
   * or an OAuth token's are its own (granted) scopes that the user's role holds now, so that a change
   * of role counts at the next request.
   */
  scopes: readonly string[];
  /** The OAuth client the token was issued to (OAuth tokens only). */
  clientId?: string;
  /** Read with the token or user, in the same statement. */
  workspace: Workspace;
  /** Who the events of this call's changes name. */
  actor: EventActor;
}

export interface CallerResolver {
  resolve(authorization: string | string[] | undefined): Promise<Caller>;
}

const unauthenticated = () => new CredentialRefusedError('unauthenticated');

/** A token's scopes that its user's role holds, in the catalogue's order. */
export function scopesInForce(tokenScopes: readonly string[], role: WorkspaceRole): readonly string[] {
  const held = roleScopes[role];
  return scopeCatalogue.filter((scope) => tokenScopes.includes(scope) && held.includes(scope));
}

/**
 * A PAT (`svc_pat_…`) and an OAuth access token (43 URL-safe base64 characters) are looked up by
 * their hash; anything else must be a session JWT. Every failure is 401 `unauthenticated`, except
 * a session token that has only expired: `token-expired`.
 */
export function createCallerResolver(deps: {
  pats: Pick<PersonalAccessTokenStore, 'findPatCaller'>;
  users: UserStore;
  /** The session-token keys: the newest and, for `sessionKeyGraceMs` after each rotation, the one it replaced. */
  sessionKeys: KeyRing;
  sessionKeyGraceMs: number;
  oauthTokens: Pick<OauthRecordStore, 'findAccessTokenCaller'>;
  /** The audience OAuth access tokens must name: this API's resource indicator (`<public base URL>/v1`). */
  oauthResource: string;
  now: () => number;
}): CallerResolver {
  /**
   * Not kept in memory (src/store/cachedRows.ts), unlike PATs: revoked tokens and whole revoked families are deleted rows; a deleted client or a user no
   * longer in the client's workspace leaves the join empty: every case is one 401.
   */
  async function oauthCaller(token: string, now: number): Promise<Caller> {
    const found = await deps.oauthTokens.findAccessTokenCaller(oauthSecretHash(token));
    if (!found || found.expiresAt === null || found.expiresAt <= now) throw unauthenticated();
    if (found.role === null || !found.workspace || found.clientId === null || found.accountId === null) throw unauthenticated();
    const payload = JSON.parse(found.payload) as { scope?: unknown; aud?: unknown };
    if (payload.aud !== deps.oauthResource) throw unauthenticated();
    const granted = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    return {
      kind: 'oauth',
      workspaceId: found.workspace.id,
      userId: found.accountId,
      role: found.role,
      scopes: scopesInForce(granted, found.role),
      clientId: found.clientId,
      workspace: found.workspace,
      actor: { id: found.accountId, kind: 'USER' },
    };
  }

  return {
    async resolve(authorization) {
      const header = Array.isArray(authorization) ? undefined : authorization;
      const token = header ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
      if (!token) throw unauthenticated();
      const now = deps.now();

      if (token.startsWith('svc_pat_')) {
        if (!personalAccessTokenPattern.test(token)) throw unauthenticated();
        const pat = await deps.pats.findPatCaller(hashPersonalAccessToken(token));
        if (!pat || patState(pat, now) !== 'active') throw unauthenticated();
        // role is null when the user is gone or no longer in the token's workspace.
        if (pat.role === null || !pat.workspace) throw unauthenticated();
        return {
          kind: 'pat',
          workspaceId: pat.workspaceId,
          userId: pat.userId,
          role: pat.role,
          scopes: scopesInForce(pat.scopes, pat.role),
          workspace: pat.workspace,
          actor: { id: pat.userId, kind: 'USER' },
        };
      }

      if (oauthAccessTokenPattern.test(token)) return oauthCaller(token, now);

      const session = await verifySessionToken(deps.sessionKeys, token, now, deps.sessionKeyGraceMs);
      if (!session.ok) {
        if (session.reason === 'expired') {
          throw new CredentialRefusedError('session-expired');
        }
        throw unauthenticated();
      }
      const member = await deps.users.getUserAndWorkspace(session.userId);
      if (!member || member.user.workspaceId !== session.workspaceId) throw unauthenticated();
      // Issued before the user's sessions were revoked.
      if (session.issuedAt < member.user.sessionsValidAfter) throw new CredentialRefusedError('session-revoked');
      const { user, workspace } = member;
      if (!workspace) throw unauthenticated();
      return {
        kind: 'session',
        workspaceId: user.workspaceId,
        userId: user.id,
        role: user.role,
        scopes: roleScopes[user.role],
        workspace,
        actor: { id: user.id, kind: 'USER' },
      };
    },
  };
}
