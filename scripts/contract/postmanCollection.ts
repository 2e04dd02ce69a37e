// A deterministic Postman v2.1 collection: one folder per tag, one request per operation, each asserting
// its success status so that `newman run` is a smoke test of a running server.

import { createHash } from 'node:crypto';
import postman from 'postman-collection';
import type {
  CollectionDefinition,
  Item,
  ItemDefinition,
  ItemGroupDefinition,
  RequestDefinition,
  UrlDefinition,
} from 'postman-collection';
import {
  dereference,
  isJsonObject,
  isPublicOperation,
  listOperations,
  lowestSuccessStatus,
  operationParameters,
  type JsonObject,
  type JsonValue,
  type OperationEntry,
} from './document.js';
import { generatedNotice } from './openapiFiles.js';

export const POSTMAN_SCHEMA_URL = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/** A UUID derived from `name` (SHA-256, shaped like a version-5 UUID), so ids never change between builds. */
export function deterministicUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex').slice(0, 32).split('');
  hex[12] = '5';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20, 32)}`;
}

function exampleText(value: JsonValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function parameterValue(parameter: JsonObject): string {
  const schema = isJsonObject(parameter.schema) ? parameter.schema : {};
  return exampleText(parameter.example) ?? exampleText(schema.example) ?? exampleText(schema.default) ?? '';
}

/** OpenAPI descriptions are CommonMark; Postman renders them when told so. */
function markdown(content: string): { content: string; type: string } {
  return { content, type: 'text/markdown' };
}

function descriptionOf(node: JsonObject): { content: string; type: string } | undefined {
  return typeof node.description === 'string' ? markdown(node.description) : undefined;
}

/** The JSON request body example the spec gives (example, first of examples, or the schema's example). */
function exampleBody(document: JsonObject, operation: JsonObject): { mediaType: string; raw: string } | undefined {
  const requestBody = dereference(document, operation.requestBody);
  if (!isJsonObject(requestBody) || !isJsonObject(requestBody.content)) return undefined;
  for (const [mediaType, media] of Object.entries(requestBody.content)) {
    if (!/json/i.test(mediaType) || !isJsonObject(media)) continue;
    const examples = isJsonObject(media.examples) ? Object.values(media.examples) : [];
    const firstExample = dereference(document, examples[0]);
    const schema = dereference(document, media.schema);
    const value =
      media.example ??
      (isJsonObject(firstExample) ? firstExample.value : undefined) ??
      (isJsonObject(schema) ? schema.example : undefined);
    if (value !== undefined) return { mediaType, raw: JSON.stringify(value, null, 2) };
  }
  return undefined;
}

function buildRequestItem(api: string, document: JsonObject, entry: OperationEntry): Item {
  const { operation } = entry;
  const operationId = String(operation.operationId);
  const parameters = operationParameters(document, entry);
  const pathValues = new Map(parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.parameter]));
  const segments = entry.path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/\{([^}]+)\}/g, ':$1'));
  const variables = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((match) => {
    const name = match[1] ?? '';
    const parameter = pathValues.get(name) ?? {};
    return { key: name, value: parameterValue(parameter), description: descriptionOf(parameter) };
  });
  // Query and header parameters (an idempotency key, say) go in with their example; only required ones are enabled.
  const query = parameters
    .filter((p) => p.in === 'query')
    .map((p) => ({
      key: p.name,
      value: parameterValue(p.parameter),
      ...(p.parameter.required === true ? {} : { disabled: true }),
      description: descriptionOf(p.parameter),
    }));

  const header = parameters
    .filter((p) => p.in === 'header')
    .map((p) => ({
      key: p.name,
      value: parameterValue(p.parameter),
      ...(p.parameter.required === true ? {} : { disabled: true }),
      description: descriptionOf(p.parameter),
    }));
  const body = exampleBody(document, operation);
  if (body) header.push({ key: 'Content-Type', value: body.mediaType, description: undefined });

  const status = lowestSuccessStatus(operation) ?? 200;
  const request: RequestDefinition = {
    method: entry.method.toUpperCase(),
    url: {
      raw: `{{baseUrl}}/${segments.join('/')}`,
      host: ['{{baseUrl}}'],
      path: segments,
      query,
      variable: variables,
    } as unknown as UrlDefinition,
    ...(header.length > 0 ? { header } : {}),
    ...(body ? { body: { mode: 'raw', raw: body.raw, options: { raw: { language: 'json' } } } } : {}),
  } as RequestDefinition;
  const description = descriptionOf(operation);
  if (description) request.description = description;
  if (isPublicOperation(document, operation)) request.auth = { type: 'noauth' };

  return new postman.Item({
    id: deterministicUuid(`${api}:operation:${operationId}`),
    name: typeof operation.summary === 'string' ? operation.summary : operationId,
    request,
    event: [
      {
        listen: 'test',
        script: {
          id: deterministicUuid(`${api}:operation:${operationId}:test`),
          type: 'text/javascript',
          exec: [`pm.test("status is ${status}", () => pm.response.to.have.status(${status}));`],
        },
      },
    ],
  } as ItemDefinition);
}

/** The document's info, its title (or the API's name) and its first server, the default `baseUrl`. */
function collectionBasics(api: string, document: JsonObject): { info: JsonObject; title: string; baseUrl: string } {
  const info = isJsonObject(document.info) ? document.info : {};
  const servers = Array.isArray(document.servers) ? document.servers : [];
  const firstServer = servers[0];
  return {
    info,
    title: typeof info.title === 'string' ? info.title : api,
    baseUrl: isJsonObject(firstServer) && typeof firstServer.url === 'string' ? firstServer.url : 'http://localhost:3000',
  };
}

/** Where Postman's own browser flow sends the authorization answer; a client registered for Postman names it. */
export const POSTMAN_OAUTH_CALLBACK = 'https://oauth.pstmn.io/v1/callback';

/** The first OAuth 2.0 authorization code flow of the document's security schemes, with every scope the schemes declare. */
function authorizationCodeFlow(document: JsonObject): { authorizationUrl: string; tokenUrl: string; refreshUrl: string; scopes: string[] } | undefined {
  const components = isJsonObject(document.components) ? document.components : {};
  const schemes = isJsonObject(components.securitySchemes) ? components.securitySchemes : {};
  for (const raw of Object.values(schemes)) {
    const scheme = dereference(document, raw);
    const flow = isJsonObject(scheme) && scheme.type === 'oauth2' && isJsonObject(scheme.flows) ? scheme.flows.authorizationCode : undefined;
    if (!isJsonObject(flow) || typeof flow.authorizationUrl !== 'string' || typeof flow.tokenUrl !== 'string') continue;
    return {
      authorizationUrl: flow.authorizationUrl,
      tokenUrl: flow.tokenUrl,
      refreshUrl: typeof flow.refreshUrl === 'string' ? flow.refreshUrl : flow.tokenUrl,
      scopes: isJsonObject(flow.scopes) ? Object.keys(flow.scopes) : [],
    };
  }
  return undefined;
}

/**
 * The collection's credential: `bearerToken` as the bearer token. With an OAuth 2.0 authorization
 * code flow in the contract it is Postman's oauth2 auth instead, which sends the same
 * `bearerToken` (a PAT, a session or an OAuth access token; newman does just that) and lets the
 * Postman app get a new token through the flow (PKCE, S256) for the client in `oauthClientId`.
 */
function collectionAuth(document: JsonObject): JsonObject {
  const flow = authorizationCodeFlow(document);
  if (!flow) return { type: 'bearer', bearer: [{ key: 'token', value: '{{bearerToken}}', type: 'string' }] };
  const entries: [string, string | boolean][] = [
    ['accessToken', '{{bearerToken}}'],
    ['addTokenTo', 'header'],
    ['headerPrefix', 'Bearer'],
    ['tokenName', 'OAuth 2.0 access token'],
    ['grant_type', 'authorization_code_with_pkce'],
    ['challengeAlgorithm', 'S256'],
    ['authUrl', flow.authorizationUrl],
    ['accessTokenUrl', flow.tokenUrl],
    ['refreshTokenUrl', flow.refreshUrl],
    ['clientId', '{{oauthClientId}}'],
    ['client_authentication', 'body'],
    ['scope', flow.scopes.join(' ')],
    ['redirect_uri', POSTMAN_OAUTH_CALLBACK],
    ['useBrowser', true],
  ];
  return { type: 'oauth2', oauth2: entries.map(([key, value]) => ({ key, value, type: typeof value === 'boolean' ? 'boolean' : 'string' })) };
}

/** Renders postman.json for the bundled document (tags and operations assumed to pass the conventions). */
export function renderPostmanCollection(api: string, document: JsonObject): string {
  const { info, title, baseUrl } = collectionBasics(api, document);
  const summary = typeof info.summary === 'string' ? `\n\n${info.summary}` : '';
  const oauth = authorizationCodeFlow(document) !== undefined;

  const collection = new postman.Collection({
    info: {
      id: deterministicUuid(`${api}:collection`),
      name: title,
      description: markdown(
        `${generatedNotice(api)}${summary}\n\nSet \`baseUrl\` to the server and \`bearerToken\` to a credential; every request asserts its success status.` +
          (oauth
            ? ` To get an OAuth 2.0 access token in the Postman app instead, register a client with the redirect URI ${POSTMAN_OAUTH_CALLBACK}, set \`oauthClientId\` to its id and use "Get New Access Token" on the collection's Authorization tab.`
            : ''),
      ),
    },
    auth: collectionAuth(document),
    variable: [
      { key: 'baseUrl', value: baseUrl, type: 'string' },
      { key: 'bearerToken', value: '', type: 'string' },
      ...(oauth ? [{ key: 'oauthClientId', value: '', type: 'string' }] : []),
    ],
    item: [],
  } as unknown as CollectionDefinition);

  const operations = listOperations(document);
  const tags = Array.isArray(document.tags) ? document.tags.filter(isJsonObject) : [];
  for (const tag of tags) {
    if (typeof tag.name !== 'string') continue;
    const tagName = tag.name;
    // DELETEs run last in their folder, so that the requests after them (a sub-resource of the
    // deleted item, say) still find the example item.
    const members = operations
      .filter((entry) => Array.isArray(entry.operation.tags) && entry.operation.tags[0] === tagName)
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    if (members.length === 0) continue;
    const folder = new postman.ItemGroup<Item>({
      id: deterministicUuid(`${api}:tag:${tagName}`),
      name: tagName,
      ...(typeof tag.description === 'string' ? { description: markdown(tag.description) } : {}),
    } as ItemGroupDefinition);
    for (const entry of members) folder.items.add(buildRequestItem(api, document, entry));
    collection.items.add(folder);
  }
  return JSON.stringify(collection.toJSON(), null, 2) + '\n';
}

/**
 * Renders postman-environment.json: a Postman environment template with `baseUrl` (the spec's
 * first server) and an empty secret `bearerToken`, the two variables the collection uses.
 */
export function renderPostmanEnvironment(api: string, document: JsonObject): string {
  const { title, baseUrl } = collectionBasics(api, document);
  const environment = {
    id: deterministicUuid(`${api}:environment`),
    name: title,
    values: [
      { key: 'baseUrl', value: baseUrl, type: 'default', enabled: true },
      { key: 'bearerToken', value: '', type: 'secret', enabled: true },
    ],
    _postman_variable_scope: 'environment',
    // Postman keeps this member for the exporting tool; it is where the format lets a notice live.
    _postman_exported_using: generatedNotice(api).trim(),
  };
  return JSON.stringify(environment, null, 2) + '\n';
}
