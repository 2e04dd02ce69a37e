import type { components } from '../../generated/work-platform/types.js';

export type ConnectorKindEntry = components['schemas']['ConnectorKind'];

/** The connector catalogue: only kinds that work end to end. */
export const connectorCatalogue: readonly ConnectorKindEntry[] = Object.freeze([
  {
    id: 'github',
    name: 'GitHub',
    description: "Imports a repository's issues as tasks through GitHub's REST API (GitHub.com, or GitHub Enterprise Server when the deployment points GITHUB_API_BASE_URL at it).",
    available: true,
    capabilities: ['issue-import'],
    credential: {
      type: 'token',
      description: 'A personal access token (fine-grained with read access to Issues, or classic with `repo` for private repositories) or an OAuth token; checked with GET /user when connecting.',
    },
  },
]);
