// rules.ts: what the spec states beyond its schemas, as constants and types the code imports
// instead of repeating: which operations exist and which are public (openapi-typescript's output
// carries no security), the scope catalogue of the security schemes, the event types of the
// `webhooks` section, and the plans, rate-limit classes and tiers of `x-rate-limits`.

import { problemTypesOf } from './problemTypes.js';
import { dereference, isJsonObject, listOperations, type JsonObject } from './document.js';
import { generatedNotice } from './openapiFiles.js';
import { REQUIRED_ROLES_KEY, roleScopesOf } from './roles.js';
import { resourcePathsOf } from './resourcePaths.js';

function union(values: readonly string[]): string {
  return values.length === 0 ? 'never' : values.map((value) => `'${value}'`).join(' | ');
}

function constList(name: string, doc: string, values: readonly string[]): string[] {
  return [`/** ${doc} */`, `export const ${name} = [`, ...values.map((value) => `  '${value}',`), '] as const;', ''];
}

/** Every scope any security scheme declares: `x-scopes` of a bearer scheme, or an OAuth 2.0 flow's `scopes`, in order of first mention. */
export function scopeCatalogueOf(document: JsonObject): string[] {
  return Object.keys(scopeDescriptionsOf(document));
}

/** Each scope of the catalogue with its description, as the first scheme that declares it words it. */
export function scopeDescriptionsOf(document: JsonObject): Record<string, string> {
  const scopes: Record<string, string> = {};
  const add = (declared: JsonObject) => {
    for (const [scope, description] of Object.entries(declared)) if (!Object.hasOwn(scopes, scope)) scopes[scope] = String(description);
  };
  const components = isJsonObject(document.components) ? document.components : {};
  const schemes = isJsonObject(components.securitySchemes) ? components.securitySchemes : {};
  for (const raw of Object.values(schemes)) {
    const scheme = dereference(document, raw);
    if (!isJsonObject(scheme)) continue;
    if (isJsonObject(scheme['x-scopes'])) add(scheme['x-scopes']);
    if (isJsonObject(scheme.flows)) {
      for (const flow of Object.values(scheme.flows)) {
        if (isJsonObject(flow) && isJsonObject(flow.scopes)) add(flow.scopes);
      }
    }
  }
  return scopes;
}

/**
 * `maxLength` of the top-level string members of each component schema: the storage limits the
 * stores enforce when they write (the resource schemas declare them; request schemas only describe them).
 */
export function maxLengthsOf(document: JsonObject): Record<string, Record<string, number>> {
  const limits: Record<string, Record<string, number>> = {};
  const components = isJsonObject(document.components) ? document.components : {};
  const schemas = isJsonObject(components.schemas) ? components.schemas : {};
  for (const [name, raw] of Object.entries(schemas)) {
    const schema = dereference(document, raw);
    if (!isJsonObject(schema) || !isJsonObject(schema.properties)) continue;
    for (const [member, rawMember] of Object.entries(schema.properties)) {
      const property = dereference(document, rawMember);
      if (isJsonObject(property) && typeof property.maxLength === 'number') (limits[name] ??= {})[member] = property.maxLength;
    }
  }
  return limits;
}

/**
 * The string `enum`s of the component schemas: a schema that is an enum by its name (`TaskStatus`),
 * an enum member of a schema's top-level properties by `Schema.member` (`Project.status`). What the
 * database's CHECK constraints and the stores allow, so that a value list is written only in the spec.
 */
export function enumValuesOf(document: JsonObject): Record<string, string[]> {
  const values: Record<string, string[]> = {};
  const components = isJsonObject(document.components) ? document.components : {};
  const schemas = isJsonObject(components.schemas) ? components.schemas : {};
  const stringsOf = (schema: unknown) =>
    isJsonObject(schema) && Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string') ? (schema.enum as string[]) : undefined;
  for (const [name, raw] of Object.entries(schemas)) {
    const schema = dereference(document, raw);
    const own = stringsOf(schema);
    if (own) values[name] = own;
    if (!isJsonObject(schema) || !isJsonObject(schema.properties)) continue;
    for (const [member, rawMember] of Object.entries(schema.properties)) {
      // A member that refers to an enum schema is listed under that schema's own name.
      if (isJsonObject(rawMember) && typeof rawMember.$ref === 'string') continue;
      const memberValues = stringsOf(dereference(document, rawMember));
      if (memberValues) values[`${name}.${member}`] = memberValues;
    }
  }
  return values;
}

/** The values of each `sort` query parameter declared as a component, by component name: the fields a list sorts by. */
export function sortFieldsOf(document: JsonObject): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  const components = isJsonObject(document.components) ? document.components : {};
  const parameters = isJsonObject(components.parameters) ? components.parameters : {};
  for (const [name, raw] of Object.entries(parameters)) {
    const parameter = dereference(document, raw);
    if (!isJsonObject(parameter) || parameter.name !== 'sort' || parameter.in !== 'query') continue;
    const schema = dereference(document, parameter.schema);
    if (isJsonObject(schema) && Array.isArray(schema.enum)) fields[name] = schema.enum.filter((value): value is string => typeof value === 'string');
  }
  return fields;
}

/**
 * The names `x-rate-limits` is keyed by: the plans (keys of `tiers`), the rate-limit classes (keys
 * of `requestsPerMinute`) and the tiers (the values of `tiers`, in order of first mention).
 */
export function rateLimitNamesOf(table: JsonObject): { plans: string[]; rateLimitClasses: string[]; rateLimitTiers: string[] } {
  const tiers = isJsonObject(table.tiers) ? table.tiers : {};
  const perMinute = isJsonObject(table.requestsPerMinute) ? table.requestsPerMinute : {};
  return {
    plans: Object.keys(tiers),
    rateLimitClasses: Object.keys(perMinute),
    rateLimitTiers: [...new Set(Object.values(tiers).filter((tier): tier is string => typeof tier === 'string'))],
  };
}

function rateLimitNameLists(table: JsonObject): string[] {
  const { plans, rateLimitClasses, rateLimitTiers } = rateLimitNamesOf(table);
  return [
    ...constList('plans', 'The plans of `x-rate-limits` (the keys of its `tiers`).', plans),
    'export type Plan = (typeof plans)[number];',
    '',
    ...constList('rateLimitClasses', 'The rate-limit classes of `x-rate-limits` (the keys of its `requestsPerMinute`): what `x-ratelimit-class` may name.', rateLimitClasses),
    'export type RateLimitClass = (typeof rateLimitClasses)[number];',
    '',
    ...constList('rateLimitTiers', 'The tiers plans report in `X-RateLimit-Tier` (the values of `x-rate-limits.tiers`).', rateLimitTiers),
    'export type RateLimitTier = (typeof rateLimitTiers)[number];',
    '',
  ];
}

/**
 * For each operation whose 201 declares a `Location` header: the path of one instance of what it
 * creates, the collection's instance template (`POST /v1/tasks` → `/v1/tasks/{taskId}`).
 */
export function createdLocationsOf(document: JsonObject): Record<string, string> {
  const operations = listOperations(document);
  const locations: Record<string, string> = {};
  for (const kind of resourcePathsOf(operations, (entry) => ({ method: entry.method, template: entry.path })).values()) {
    const create = kind.create;
    if (create?.operationId === undefined || locations[create.operationId] !== undefined) continue;
    const created = dereference(document, isJsonObject(create.operation.responses) ? create.operation.responses['201'] : undefined);
    const headers = isJsonObject(created) && isJsonObject(created.headers) ? Object.keys(created.headers).map((name) => name.toLowerCase()) : [];
    if (headers.includes('location')) locations[create.operationId] = kind.template;
  }
  return locations;
}

export function renderContractRules(api: string, document: JsonObject): string {
  const all: string[] = [];
  const publicIds: string[] = [];
  const costs: Record<string, number> = {};
  const requiredRoles: Record<string, string[]> = {};
  for (const { operationId, isPublic, rateLimitCost, requiredRoles: roles } of listOperations(document)) {
    if (operationId === undefined) continue;
    all.push(operationId);
    if (isPublic) publicIds.push(operationId);
    if (rateLimitCost !== undefined && rateLimitCost > 1) costs[operationId] = rateLimitCost;
    if (roles.length > 0) requiredRoles[operationId] = [...roles];
  }
  const locations = createdLocationsOf(document);
  const roleScopes = roleScopesOf(document);
  const eventTypes = isJsonObject(document.webhooks) ? Object.keys(document.webhooks) : [];
  return [
    `// ${generatedNotice(api)}`,
    '',
    '/** Every operation of the API, by operationId. */',
    `export type OperationId = ${union(all)};`,
    '',
    '/** Operations declared with `security: []`: their handlers get no caller. */',
    `export type PublicOperationId = ${union(publicIds)};`,
    '',
    ...constList('operationIds', 'Every operationId, in the order of the spec.', all),
    '/** `x-ratelimit-cost` of the operations that declare one (every other call counts 1 unit): expensive calls, run apart with a concurrency cap per workspace. */',
    `export const rateLimitCosts: Readonly<Partial<Record<OperationId, number>>> = ${JSON.stringify(costs, null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')};`,
    '',
    '/** The instance path of what each create operation makes (it declares `Location` on its 201): the handler fills in the id. */',
    `export const createdLocations: Readonly<Partial<Record<OperationId, string>>> = ${JSON.stringify(locations, null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')};`,
    '',
    ...constList('scopeCatalogue', "Every scope the security schemes declare (`x-scopes`, OAuth 2.0 flows' `scopes`).", scopeCatalogueOf(document)),
    'export type Scope = (typeof scopeCatalogue)[number];',
    '',
    '/** What each scope allows, as the security schemes word it (the OAuth consent page shows it). */',
    `export const scopeDescriptions: Readonly<Record<Scope, string>> = ${JSON.stringify(scopeDescriptionsOf(document), null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')};`,
    '',
    ...(roleScopes === undefined
      ? []
      : [
          ...constList('roles', 'The roles a user of a workspace may have (the keys of `x-role-scopes`).', Object.keys(roleScopes)),
          'export type Role = (typeof roles)[number];',
          '',
          '/** `x-role-scopes`: the scopes each role may hold. A token carries, and a call of it may use, only the scopes its user\'s role has. */',
          `export const roleScopes: Readonly<Record<Role, readonly Scope[]>> = ${JSON.stringify(roleScopes, null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')};`,
          '',
          '/** `x-required-roles` of the operations that declare one: only these roles may call them (every other operation is open to every role). */',
          `export const requiredRoles: Readonly<Partial<Record<OperationId, readonly Role[]>>> = ${JSON.stringify(requiredRoles, null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')};`,
          '',
        ]),
    ...constList('eventTypes', 'The event types of the `webhooks` section.', eventTypes),
    'export type EventType = (typeof eventTypes)[number];',
    '',
    '/** The fields each `sort` parameter component allows, in the order the spec lists them. */',
    `export const sortFields = ${JSON.stringify(sortFieldsOf(document), null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')} as const;`,
    '',
    ...(document['x-rate-limits'] === undefined
      ? []
      : [
          '/** The plan table (`x-rate-limits`): allowances per class and plan, quotas, tiers, the webhook retry schedule. */',
          `export const planLimitTable = ${JSON.stringify(document['x-rate-limits'], null, 2)} as const;`,
          '',
          ...(isJsonObject(document['x-rate-limits']) ? rateLimitNameLists(document['x-rate-limits']) : []),
        ]),
    '/** The string enums of the component schemas: `Schema` for an enum schema, `Schema.member` for an enum member. */',
    `export const enumValues = ${JSON.stringify(enumValuesOf(document), null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')} as const;`,
    '',
    ...(Object.keys(problemTypesOf(document)).length === 0
      ? []
      : [
          '/** The problem types (`x-problem-types` of the Problem schema): status, fixed title and when each is answered, by slug. */',
          `export const problemTypes = ${JSON.stringify(problemTypesOf(document), null, 2)} as const;`,
          'export type ProblemSlug = keyof typeof problemTypes;',
          '',
        ]),
    '/** `maxLength` of the string members of the component schemas, by schema and member. */',
    `export const maxLengths = ${JSON.stringify(maxLengthsOf(document), null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')} as const;`,
    '',
  ].join('\n');
}
