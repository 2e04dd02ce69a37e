// A deterministic Postman v2.1 collection that newman can run again and again against one server:
// one folder per tag (ordered so that creates come before what uses them; postmanRun.ts), one
// request per operation plus the few setup requests a lifecycle needs, each asserting its success
// status, its content type and its body against the operation's declared schema (embedded as
// draft-07 for the sandbox's Ajv 6; draft7Schema.ts).

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
import { dereference, isJsonObject, lowestSuccessStatus, operationParameters, type JsonObject, type JsonValue } from './document.js';
import { generatedNotice } from './openapiFiles.js';
import { toDraft7Schema } from './draft7Schema.js';
import { CLEAN_UP_FOLDER, etagVariable, idVariable, parameterValue, planRun, type RunStep } from './postmanRun.js';

export const POSTMAN_SCHEMA_URL = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/** A UUID derived from `name` (SHA-256, shaped like a version-5 UUID), so ids never change between builds. */
export function deterministicUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex').slice(0, 32).split('');
  hex[12] = '5';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20, 32)}`;
}

/** OpenAPI descriptions are CommonMark; Postman renders them when told so. */
function markdown(content: string): { content: string; type: string } {
  return { content, type: 'text/markdown' };
}

function descriptionOf(node: JsonObject): { content: string; type: string } | undefined {
  return typeof node.description === 'string' ? markdown(node.description) : undefined;
}

/** The answer a step expects: its status and the first media type and schema of that answer, if any. */
function expectedAnswer(
  document: JsonObject,
  operation: JsonObject,
): { status: number; etag: boolean; mediaType?: string; schema?: JsonValue; schemaName?: string } {
  const status = lowestSuccessStatus(operation) ?? 200;
  const responses = isJsonObject(operation.responses) ? operation.responses : {};
  const response = dereference(document, responses[String(status)] ?? responses['2XX']);
  const headers = isJsonObject(response) && isJsonObject(response.headers) ? Object.keys(response.headers) : [];
  const etag = headers.some((name) => name.toLowerCase() === 'etag');
  const content = isJsonObject(response) && isJsonObject(response.content) ? Object.entries(response.content)[0] : undefined;
  if (!content || !isJsonObject(content[1])) return { status, etag };
  const schema = content[1].schema ?? {};
  const ref = isJsonObject(schema) && typeof schema.$ref === 'string' ? /^#\/components\/schemas\/([^/]+)$/.exec(schema.$ref)?.[1] : undefined;
  return { status, etag, mediaType: content[0], schema, ...(ref ? { schemaName: ref } : {}) };
}

/**
 * The request's tests: status, content type and body against the declared schema (draft-07, as
 * the sandbox's Ajv 6 reads it); then the ids and ETags the later requests need.
 */
function testScript(document: JsonObject, step: RunStep): string[] {
  const answer = expectedAnswer(document, step.entry.operation);
  const lines = [`pm.test("status is ${answer.status}", () => pm.response.to.have.status(${answer.status}));`];
  if (answer.mediaType && answer.schema !== undefined) {
    const mediaType = answer.mediaType.toLowerCase();
    const schema = JSON.stringify(toDraft7Schema(document, answer.schema, `${step.operationId} ${answer.status} ${answer.mediaType}`));
    const what = answer.schemaName ? `the ${answer.schemaName} schema` : 'the declared schema';
    lines.push(
      `pm.test("Content-Type is ${mediaType}", () => pm.expect((pm.response.headers.get("Content-Type") || "").split(";")[0].trim().toLowerCase()).to.equal(${JSON.stringify(mediaType)}));`,
      `const schema = ${schema};`,
      /json/.test(mediaType)
        ? `pm.test("body matches ${what}", () => pm.response.to.have.jsonSchema(schema));`
        : `pm.test("body matches ${what}", () => pm.expect(pm.response.text()).to.have.jsonSchema(schema));`,
    );
  } else {
    lines.push(`pm.test("no body, as the ${answer.status} declares none", () => pm.expect(pm.response.text()).to.equal(""));`);
  }
  if (step.creates) {
    lines.push(`if (pm.response.code === ${answer.status}) pm.collectionVariables.set("${idVariable(step.creates)}", pm.response.json().id);`);
  }
  // The record's ETag follows every answer that declares one; a change whose answer declares none
  // (a key rotation) leaves it unknown, and an optional If-Match is then left out (prerequestScript).
  const record = step.creates ?? step.stem;
  if (record && answer.etag) {
    lines.push(`if (pm.response.headers.has("ETag")) pm.collectionVariables.set("${etagVariable(record)}", pm.response.headers.get("ETag"));`);
  } else if (record && step.entry.method !== 'get') {
    lines.push(`pm.collectionVariables.unset("${etagVariable(record)}");`);
  }
  return lines;
}

function buildRequestItem(api: string, document: JsonObject, step: RunStep): Item {
  const { entry } = step;
  const { operation } = entry;
  const operationId = step.operationId;
  const parameters = operationParameters(document, entry);
  const pathParameters = new Map(parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.parameter]));
  const segments = entry.path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/\{([^}]+)\}/g, ':$1'));
  const variables = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((match) => {
    const name = match[1] ?? '';
    return { key: name, value: step.pathValues.get(name) ?? '', description: descriptionOf(pathParameters.get(name) ?? {}) };
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

  // If-Match carries the ETag of the run's record as the last answer gave it, sent even where optional.
  const header = parameters
    .filter((p) => p.in === 'header')
    .map((p) =>
      p.name.toLowerCase() === 'if-match' && step.stem
        ? { key: p.name, value: `{{${etagVariable(step.stem)}}}`, description: descriptionOf(p.parameter) }
        : {
            key: p.name,
            value: parameterValue(p.parameter),
            ...(p.parameter.required === true ? {} : { disabled: true }),
            description: descriptionOf(p.parameter),
          },
    );
  const body = step.body ? { mediaType: step.body.mediaType, raw: JSON.stringify(step.body.value, null, 2) } : undefined;
  if (body) header.push({ key: 'Content-Type', value: body.mediaType, description: undefined });

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
  const description = step.why
    ? markdown(`${step.why}\n\nA setup request of the run: \`${operationId}\` again.`)
    : descriptionOf(operation);
  if (description) request.description = description;
  if (entry.isPublic) request.auth = { type: 'noauth' };

  // An optional If-Match goes only with an ETag the run knows; a required one always (a 428 would say what is missing).
  const optionalIfMatch = parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'if-match' && p.parameter.required !== true);
  const prerequest =
    optionalIfMatch && step.stem
      ? [`if (!pm.collectionVariables.get("${etagVariable(step.stem)}")) pm.request.headers.remove("If-Match");`]
      : [];

  const itemKey = step.key ? `${api}:step:${operationId}:${step.key}` : `${api}:operation:${operationId}`;
  return new postman.Item({
    id: deterministicUuid(itemKey),
    name: step.name ?? (typeof operation.summary === 'string' ? operation.summary : operationId),
    request,
    event: [
      ...(prerequest.length > 0
        ? [{ listen: 'prerequest', script: { id: deterministicUuid(`${itemKey}:prerequest`), type: 'text/javascript', exec: prerequest } }]
        : []),
      {
        listen: 'test',
        script: { id: deterministicUuid(`${itemKey}:test`), type: 'text/javascript', exec: testScript(document, step) },
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

  const run = planRun(api, document);
  const records = run.folders.flatMap((folder) => folder.steps.filter((step) => step.creates).map((step) => step.creates!));
  const dates = [...new Set(run.prerequest.flatMap((line) => [...line.matchAll(/collectionVariables\.set\('([^']+)'/g)].map((match) => match[1]!)))];
  const collection = new postman.Collection({
    info: {
      id: deterministicUuid(`${api}:collection`),
      name: title,
      description: markdown(
        `${generatedNotice(api)}${summary}\n\nSet \`baseUrl\` to the server and \`bearerToken\` to a credential, then run the whole collection, as often as you like: ` +
          'every request asserts its success status, its content type and its body against the schema the contract declares. ' +
          (records.length > 0
            ? `A request that needs an id takes it from the answer that created it (the collection variables ${records.map((stem) => `\`${idVariable(stem)}\``).join(', ')}; an \`If-Match\` takes the ETag of the last answer), the run changes and deletes only what it created, and the folder "${CLEAN_UP_FOLDER}" deletes what later folders still used. Run the folders in order.`
            : 'It only reads.') +
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
      ...[...new Set(records)].flatMap((stem) => [
        { key: idVariable(stem), value: '', type: 'string' },
        { key: etagVariable(stem), value: '', type: 'string' },
      ]),
      ...dates.map((key) => ({ key, value: '', type: 'string' })),
    ],
    ...(run.prerequest.length > 0
      ? {
          event: [
            {
              listen: 'prerequest',
              script: { id: deterministicUuid(`${api}:collection:prerequest`), type: 'text/javascript', exec: run.prerequest },
            },
          ],
        }
      : {}),
    item: [],
  } as unknown as CollectionDefinition);

  for (const runFolder of run.folders) {
    const folder = new postman.ItemGroup<Item>({
      id: deterministicUuid(`${api}:tag:${runFolder.name}`),
      name: runFolder.name,
      ...(runFolder.tag && typeof runFolder.tag.description === 'string'
        ? { description: markdown(runFolder.tag.description) }
        : runFolder.name === CLEAN_UP_FOLDER
          ? { description: markdown('Deletes what the run created and later folders still used, newest first.') }
          : {}),
    } as ItemGroupDefinition);
    for (const step of runFolder.steps) folder.items.add(buildRequestItem(api, document, step));
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
