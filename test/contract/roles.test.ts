// x-role-scopes and x-required-roles: what the build checks (each refusal names what to change) and
// what it emits into rules.ts. Each case builds a small spec in a temporary repository with the real build.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildContracts } from '../../scripts/contract/build.js';
import { ContractBuildError, formatProblem } from '../../scripts/contract/problems.js';
import { requiredRoles, roleScopes, roles } from '../../generated/work-platform/rules.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_TIMEOUT = 60_000;
const temporaryDirs: string[] = [];
afterAll(() => {
  for (const dir of temporaryDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const root = (roleScopesYaml: string) => `openapi: 3.1.0
info: {title: Tiny API, version: 1.0.0}
servers: [{url: 'http://localhost:3000'}]
security: [{bearer: []}]
tags: [{name: Items}]
${roleScopesYaml}
x-conventions:
  responses:
    - {status: '400', of: every, response: Problem}
    - {status: '401', of: protected, response: Problem}
    - {status: '403', of: requiredRoles, response: ForbiddenByRole}
    - {status: '403', of: protected, response: Problem}
    - {status: '429', of: protected, response: Problem}
    - {status: '500', of: every, response: Problem}
    - {status: '503', of: protected, response: Problem}
paths:
  /items:
    $ref: ./paths/items.yaml
components:
  securitySchemes:
    bearer:
      type: http
      scheme: bearer
      x-scopes:
        items:read: Read items.
        items:manage: Manage items.
  responses:
    Problem: {description: A problem.}
    ForbiddenByRole: {description: A role that may not.}
`;

const ROLES = `x-role-scopes:
  owner: [items:read, items:manage]
  member: [items:read]`;

const items = (postExtras: string) => `get:
  operationId: listItems
  tags: [Items]
  summary: List items
  x-ratelimit-class: read
  x-required-scopes: [items:read]
  responses:
    '200':
      description: The items.
      content:
        application/json:
          schema: {type: array, example: []}
post:
  operationId: createItem
  tags: [Items]
  summary: Create an item
  x-ratelimit-class: write
  x-required-scopes: [items:manage]
  x-idempotent: false
${postExtras}  responses:
    '204':
      description: Created.
`;

function writeRepo(rootYaml: string, itemsYaml: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-roles-'));
  temporaryDirs.push(dir);
  const files: Record<string, string> = {
    'specs/tiny/openapi.yaml': rootYaml,
    'specs/tiny/paths/items.yaml': itemsYaml,
    'specs/tiny/changelog.yaml': 'entries: []\n',
    'specs/changelog.schema.json': fs.readFileSync(path.join(REPO_ROOT, 'specs/changelog.schema.json'), 'utf8'),
  };
  for (const [relative, contents] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    fs.writeFileSync(path.join(dir, relative), contents);
  }
  return dir;
}

async function problemsOf(dir: string): Promise<string[]> {
  return buildContracts(dir).then(
    () => [],
    (error: unknown) => {
      if (!(error instanceof ContractBuildError)) throw error;
      return error.problems.map(formatProblem);
    },
  );
}

describe('x-role-scopes and x-required-roles in the build', () => {
  it('emits the roles, their scopes and each operation\'s required roles into rules.ts', async () => {
    const files = await buildContracts(writeRepo(root(ROLES), items('  x-required-roles: [owner]\n')));
    const rules = files.find((file) => file.path === 'generated/tiny/rules.ts')!.contents;
    expect(rules).toContain("export const roles = [\n  'owner',\n  'member',\n] as const;");
    expect(rules).toMatch(/export const roleScopes: Readonly<Record<Role, readonly Scope\[\]>> = \{\n {2}owner: \[\n {4}"items:read",\n {4}"items:manage"\n {2}\],\n {2}member: \[\n {4}"items:read"\n {2}\]\n\};/);
    expect(rules).toMatch(/export const requiredRoles: [^=]+= \{\n {2}createItem: \[\n {4}"owner"\n {2}\]\n\};/);
    // x-conventions' `of: requiredRoles` answers: the operation with roles gets the role's 403.
    const served = JSON.parse(files.find((file) => file.path === 'generated/tiny/openapi.json')!.contents);
    expect(served.paths['/items'].post.responses['403']).toEqual({ $ref: '#/components/responses/ForbiddenByRole' });
    expect(served.paths['/items'].get.responses['403']).toEqual({ $ref: '#/components/responses/Problem' });
  }, BUILD_TIMEOUT);

  it('refuses a scope that is not in the catalogue, naming the role and the catalogue', async () => {
    const problems = await problemsOf(writeRepo(root(`x-role-scopes:\n  owner: [items:read, items:manage]\n  member: [items:read, items:delete]`), items('  x-required-roles: [owner]\n')));
    expect(problems).toEqual([expect.stringMatching(/x-role-scopes\.member: items:delete is not in the scope catalogue; name scopes of the security schemes \(items:read, items:manage\)/)]);
  }, BUILD_TIMEOUT);

  it('refuses an unknown role in x-required-roles, naming the roles there are', async () => {
    const problems = await problemsOf(writeRepo(root(ROLES), items('  x-required-roles: [owner, auditor]\n')));
    expect(problems).toEqual([expect.stringMatching(/paths\/items\.yaml: POST \/items \(createItem\): x-required-roles names auditor, not a role of x-role-scopes \(owner, member\)/)]);
  }, BUILD_TIMEOUT);

  it('refuses an operation whose scopes a role lacks without x-required-roles, saying what to write', async () => {
    const problems = await problemsOf(writeRepo(root(ROLES), items('')));
    expect(problems).toEqual([expect.stringMatching(/POST \/items \(createItem\): only owner holds items:manage in x-role-scopes; write `x-required-roles: \[owner\]`/)]);
  }, BUILD_TIMEOUT);

  it('refuses x-required-roles that lets in a role lacking the scopes, or one every role could meet', async () => {
    const tooWide = await problemsOf(writeRepo(root(ROLES), items('  x-required-roles: [owner, member]\n')));
    expect(tooWide).toEqual([expect.stringMatching(/only owner holds items:manage in x-role-scopes; write `x-required-roles: \[owner\]`/)]);
    const needless = await problemsOf(writeRepo(root(ROLES), items('  x-required-roles: [owner]\n').replace('  x-required-scopes: [items:read]\n', '  x-required-scopes: [items:read]\n  x-required-roles: [owner]\n')));
    expect(needless).toEqual([expect.stringMatching(/GET \/items \(listItems\): every role holds items:read in x-role-scopes; delete x-required-roles/)]);
  }, BUILD_TIMEOUT);

  it('refuses x-required-roles in an API without x-role-scopes', async () => {
    const problems = await problemsOf(writeRepo(root(''), items('  x-required-roles: [owner]\n')));
    expect(problems).toEqual([expect.stringMatching(/declares no x-role-scopes; add `x-role-scopes:` with each role and its scopes/)]);
  }, BUILD_TIMEOUT);
});

describe("the Work-Platform API's roles", () => {
  it('gives owners and admins every scope, and members neither workspace administration nor webhook and connector management', () => {
    expect(roles).toEqual(['owner', 'admin', 'member']);
    expect(roleScopes.owner).toEqual(roleScopes.admin);
    for (const scope of ['workspace:read', 'webhooks:manage', 'connectors:manage'] as const) expect(roleScopes.member).not.toContain(scope);
    expect(roleScopes.member).toEqual(expect.arrayContaining(['tasks:write', 'crm:write', 'contracts:write', 'connectors:read', 'ai:use']));
    for (const operationId of ['createWebhook', 'updateWebhook', 'deleteWebhook', 'rotateWebhookKey', 'replayWebhookEvents', 'createConnector', 'connectConnector', 'disconnectConnector', 'deleteConnector', 'getWorkspaceLimits'] as const) {
      expect(requiredRoles[operationId], operationId).toEqual(['owner', 'admin']);
    }
  });
});
