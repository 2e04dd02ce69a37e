import { connectorNotFound, GithubFailure, githubProblem, sealCredential } from '../connectorCalls.js';
import { twoPhaseHandler, type WorkPlatformTwoPhaseHandler } from '../operationContext.js';
import { ApiProblem } from '../problems.js';
import { etagOf } from '../versions.js';

/** Characters of the credential that a connector shows. */
const HINT_LENGTH = 4;

export const connectConnector: WorkPlatformTwoPhaseHandler<'connectConnector'> = twoPhaseHandler(async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const { connectorId } = ctx.params;
  const { token, expiresAt } = ctx.body;
  const services = ctx.services.connectors;
  if (!(await services.store.getConnector(workspace.id, connectorId))) throw connectorNotFound(connectorId);
  const givenExpiry = expiresAt === undefined || expiresAt === null ? null : Date.parse(expiresAt);
  if (givenExpiry !== null && givenExpiry <= ctx.now()) {
    throw new ApiProblem('validation', {
      detail: 'expiresAt lies in the past: connect with a credential that still works.',
      extensions: { errors: [{ path: '/expiresAt', code: 'too_small', message: 'must lie in the future' }] },
    });
  }
  let account;
  try {
    account = await services.github.account(token);
  } catch (error) {
    if (!(error instanceof GithubFailure)) throw error;
    if (error.kind === 'unauthorized') {
      throw new ApiProblem('validation', {
        detail: 'GitHub refused this token (401): it is wrong, expired or revoked. Nothing was stored.',
        code: 'credential-refused',
        extensions: { errors: [{ path: '/token', code: 'invalid_format', message: 'GitHub refused this token' }] },
        cause: error,
      });
    }
    throw githubProblem(error, connectorId, 'nothing was stored');
  }
  const credential = {
    sealed: sealCredential(services.secretBox, connectorId, token),
    hint: token.slice(-HINT_LENGTH),
    expiresAt: givenExpiry ?? account.tokenExpiresAt,
    accountLogin: account.login,
  };
  return async () => {
    const connector = await services.store.connect(workspace.id, connectorId, credential, actor);
    return { status: 200, headers: { etag: etagOf(connector.version) }, body: connector };
  };
});
