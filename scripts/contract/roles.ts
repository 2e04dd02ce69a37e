// Roles of an API: `x-role-scopes` in the root document names every role a user may have and the scopes
// each may hold (no token of a user carries, and no call of it is allowed, a scope its role lacks);
// `x-required-roles` of an operation names the roles that may call it. The two must agree: an
// operation that needs a scope some role lacks names exactly the roles that hold all its scopes,
// so that a session (which carries every scope) is refused exactly where that role's tokens are.
//
//   x-role-scopes:
//     owner: [tasks:read, tasks:write, …]
//     member: [tasks:read, …]

import { sourceFileOf, type BundledSpec } from './bundle.js';
import { describeOperation, isJsonObject, listOperations, type JsonObject } from './document.js';
import type { ContractProblem } from './problems.js';
import { scopeCatalogueOf } from './contractRules.js';

export const ROLE_SCOPES_KEY = 'x-role-scopes';
export const REQUIRED_ROLES_KEY = 'x-required-roles';

/** Each role with the scopes it may hold, in the order of the spec; undefined when the API declares no roles. */
export function roleScopesOf(document: JsonObject): Record<string, string[]> | undefined {
  const declared = document[ROLE_SCOPES_KEY];
  if (!isJsonObject(declared)) return undefined;
  const roles: Record<string, string[]> = {};
  for (const [role, scopes] of Object.entries(declared)) {
    roles[role] = Array.isArray(scopes) ? scopes.filter((scope): scope is string => typeof scope === 'string') : [];
  }
  return roles;
}

/** The roles that hold every one of `scopes`, in the order of `x-role-scopes`. */
export function rolesHolding(roleScopes: Record<string, string[]>, scopes: readonly string[]): string[] {
  return Object.keys(roleScopes).filter((role) => scopes.every((scope) => roleScopes[role]!.includes(scope)));
}

/** Checks `x-role-scopes` and every operation's `x-required-roles` against it and its `x-required-scopes`. */
export function checkRoles(bundled: BundledSpec): ContractProblem[] {
  const { document } = bundled;
  const problems: ContractProblem[] = [];
  const catalogue = scopeCatalogueOf(document);
  const declared = document[ROLE_SCOPES_KEY];
  const roleScopes = roleScopesOf(document);
  if (declared !== undefined) {
    const where = ROLE_SCOPES_KEY;
    if (!isJsonObject(declared) || Object.keys(declared).length === 0) {
      problems.push({ file: bundled.rootLabel, where, message: 'write a mapping of each role to the scopes it may hold, e.g. `member: [tasks:read]`' });
    } else {
      for (const [role, scopes] of Object.entries(declared)) {
        if (!/^[a-z][a-z0-9-]*$/.test(role)) problems.push({ file: bundled.rootLabel, where: `${where}.${role}`, message: 'a role is lower-case letters, digits and hyphens, starting with a letter' });
        if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) {
          problems.push({ file: bundled.rootLabel, where: `${where}.${role}`, message: 'write a list of scopes of the catalogue (`[]` for a role that may hold none)' });
          continue;
        }
        const unknown = scopes.filter((scope) => !catalogue.includes(scope as string));
        if (unknown.length > 0) {
          problems.push({
            file: bundled.rootLabel,
            where: `${where}.${role}`,
            message: `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in the scope catalogue; name scopes of the security schemes (${catalogue.join(', ')}) or add the scope there`,
          });
        }
        const repeated = scopes.filter((scope, index) => scopes.indexOf(scope) !== index);
        if (repeated.length > 0) problems.push({ file: bundled.rootLabel, where: `${where}.${role}`, message: `${repeated.join(', ')} listed twice; list each scope once` });
      }
    }
  }

  for (const entry of listOperations(document)) {
    const report = (message: string) => problems.push({ file: sourceFileOf(bundled, entry.pointer), where: describeOperation(entry), message });
    const required = entry.operation[REQUIRED_ROLES_KEY];
    const scopes = entry.requiredScopes ?? [];
    if (required !== undefined) {
      if (!Array.isArray(required) || required.length === 0 || !required.every((role) => typeof role === 'string')) {
        report(`${REQUIRED_ROLES_KEY} must list at least one role (leave it out when every role may call)`);
        continue;
      }
      if (!roleScopes) {
        report(`${REQUIRED_ROLES_KEY} names roles, but the root document declares no ${ROLE_SCOPES_KEY}; add \`${ROLE_SCOPES_KEY}:\` with each role and its scopes`);
        continue;
      }
      const unknown = required.filter((role) => !Object.hasOwn(roleScopes, role as string));
      if (unknown.length > 0) {
        report(`${REQUIRED_ROLES_KEY} names ${unknown.join(', ')}, not a role of ${ROLE_SCOPES_KEY} (${Object.keys(roleScopes).join(', ')}); name one of those or add the role there`);
        continue;
      }
    }
    if (!roleScopes) continue;
    // The roles whose tokens can carry every scope the operation needs are the roles that may call it.
    const holding = rolesHolding(roleScopes, scopes);
    const all = Object.keys(roleScopes);
    const wanted = holding.length === all.length ? undefined : holding;
    const listed = Array.isArray(required) ? (required as string[]) : undefined;
    const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) => (a ?? all).slice().sort().join(' ') === (b ?? all).slice().sort().join(' ');
    if (!same(listed, wanted)) {
      if (wanted === undefined) {
        report(`every role holds ${scopes.join(', ') || 'the scopes it needs'} in ${ROLE_SCOPES_KEY}; delete ${REQUIRED_ROLES_KEY} (or take a scope from a role in ${ROLE_SCOPES_KEY})`);
      } else if (wanted.length === 0) {
        report(`no role of ${ROLE_SCOPES_KEY} holds all of ${scopes.join(', ')}; give a role those scopes in ${ROLE_SCOPES_KEY}`);
      } else {
        report(
          `only ${wanted.join(', ')} hold${wanted.length === 1 ? 's' : ''} ${scopes.join(', ')} in ${ROLE_SCOPES_KEY}; write \`${REQUIRED_ROLES_KEY}: [${wanted.join(', ')}]\` (or change the roles' scopes in ${ROLE_SCOPES_KEY})`,
        );
      }
    }
  }
  return problems;
}
