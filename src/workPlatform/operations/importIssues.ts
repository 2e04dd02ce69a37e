import { githubProblem, GithubFailure, reconnectRequiredProblem, usableCredential } from '../connectorCalls.js';
import { twoPhaseHandler, type WorkPlatformTwoPhaseHandler } from '../operationContext.js';
import { ApiProblem } from '../problems.js';

/** The most issues and pull requests one import reads (5 pages of 100). */
export const MAX_IMPORTED_ISSUES = 500;

export const importIssues: WorkPlatformTwoPhaseHandler<'importIssues'> = twoPhaseHandler(async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const { connectorId } = ctx.params;
  const { repository, projectId } = ctx.body;
  const state = ctx.body.state ?? 'open';
  const services = ctx.services.connectors;
  // Checked before GitHub is asked, so a wrong project costs no outside call.
  if (!(await ctx.services.projects.getProject(workspace.id, projectId))) {
    throw new ApiProblem('not-found', { detail: `No project ${projectId} in this workspace.`, code: 'project-not-found' });
  }
  const credential = await usableCredential(services, workspace.id, await services.store.getConnectorWithCredential(workspace.id, connectorId), connectorId, actor);
  let listed;
  try {
    listed = await services.github.issues(credential.token, repository, state, MAX_IMPORTED_ISSUES);
  } catch (error) {
    if (!(error instanceof GithubFailure)) throw error;
    if (error.kind === 'unauthorized') {
      await services.store.markExpired(workspace.id, connectorId, credential.sealed, actor);
      throw reconnectRequiredProblem(connectorId, 'GitHub refused its credential (401)', error);
    }
    if (error.kind === 'not-found') {
      throw new ApiProblem('not-found', {
        detail: `GitHub shows no repository ${repository} to this connector's credential (it does not exist, or the credential cannot read it).`,
        code: 'repository-not-found',
        cause: error,
      });
    }
    throw githubProblem(error, connectorId, 'nothing was imported');
  }
  return async () => {
    const counts = await services.importedIssues.importIssues(workspace.id, projectId, repository, listed.issues, actor);
    return {
      status: 200,
      body: {
        connectorId,
        repository,
        projectId,
        state,
        issuesRead: listed.issues.length,
        ...counts,
        pullRequestsSkipped: listed.pullRequestsSkipped,
        truncated: listed.truncated,
        maxIssues: MAX_IMPORTED_ISSUES,
      },
    };
  };
});
