// The downloads an API serves (its spec as JSON and YAML, its Postman collection, its changelog), made from the committed
// generated/<api>/ files with this server's public base URL in place of the local demo server.
// Made once by the caller at start-up, which reads every file and parses the spec (the pipeline's document); each
// download's text is made on its first download and then served as it is. The YAML text needs the yaml package,
// loaded then (handlers answer synchronously, hence require): parsing and printing it took a fifth of the start-up
// time, and printing the JSON texts about 15 ms more.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { projectFile } from '../projectFiles.js';
import { REFERENCE_PAGE_POLICY, referencePageHtml } from './referencePage.js';
import { faithfulYaml } from './faithfulYaml.js';
import { nameCompiledSchemas } from './compiledSchemas.js';

export interface ServedArtifacts {
  /** openapi.json as served: pretty-printed, `servers` = the public base URL, OAuth 2.0 endpoints on its origin. */
  readonly openapiJson: string;
  /** openapi.yaml as served: the same document, keeping the do-not-edit comment. */
  readonly openapiYaml: string;
  /** postman.json as served: the `baseUrl` collection variable defaults to the public base URL. */
  readonly postmanJson: string;
  /** postman-environment.json as served: `baseUrl` = the public base URL, `bearerToken` empty. */
  readonly postmanEnvironmentJson: string;
  /** changelog.json as served: every change of the contract, as generated from specs/<api>/changelog.yaml. */
  changelogJson: string;
  /** The HTML reference page, rendered in the browser from the served openapi.json. */
  referencePageHtml: string;
  /** The parsed served document (what openapiJson says), for the contract pipeline. */
  document: object;
}


const SERVER_DESCRIPTION = 'This server (its public base URL).';

function readGenerated(api: string, name: string): string {
  try {
    return fs.readFileSync(path.join(projectFile('generated'), api, name), 'utf8');
  } catch (error) {
    throw new Error(`Cannot read generated/${api}/${name} (${(error as Error).message}); run npm run build:contract`);
  }
}

/** Replaces the member's value in place so that the document keeps its key order. */
function withMember(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  if (!Object.hasOwn(object, key)) return { ...object, [key]: value };
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, k === key ? value : v]));
}

/** Where an OAuth 2.0 flow names an endpoint. */
const FLOW_URL_MEMBERS = ['authorizationUrl', 'tokenUrl', 'refreshUrl'] as const;

/**
 * Each OAuth 2.0 flow URL of the document as [path of members, URL on the given origin]: the
 * committed documents name the local demo server; the authorization server answers on the origin
 * of the public base URL (its issuer).
 */
function oauthFlowUrls(document: Record<string, unknown>, origin: string): [string[], string][] {
  const found: [string[], string][] = [];
  const schemes = ((document.components as Record<string, unknown> | undefined)?.securitySchemes ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, scheme] of Object.entries(schemes)) {
    for (const [flowName, flow] of Object.entries((scheme.flows ?? {}) as Record<string, Record<string, unknown>>)) {
      for (const member of FLOW_URL_MEMBERS) {
        const value = flow[member];
        if (typeof value !== 'string') continue;
        const url = new URL(value);
        found.push([['components', 'securitySchemes', name, 'flows', flowName, member], `${origin}${url.pathname}${url.search}`]);
      }
    }
  }
  return found;
}

export interface ServedArtifactOptions {
  /**
   * WEBHOOK_ALLOW_LOOPBACK: this server also accepts loopback webhook addresses, so the documents it serves (and the
   * validator built from them) say so: every schema with `x-loopback-pattern` has it as its `pattern`.
   */
  allowLoopbackWebhooks?: boolean;
}

/** The schema keyword that holds the pattern of a server started with WEBHOOK_ALLOW_LOOPBACK=on. */
export const LOOPBACK_PATTERN_KEYWORD = 'x-loopback-pattern';

/** Every schema (at any depth) that has `x-loopback-pattern` takes it as its `pattern`, in place. */
function useLoopbackPatterns(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) useLoopbackPatterns(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  if (typeof object[LOOPBACK_PATTERN_KEYWORD] === 'string') object.pattern = object[LOOPBACK_PATTERN_KEYWORD];
  for (const value of Object.values(object)) useLoopbackPatterns(value);
}

export function loadServedArtifacts(api: string, publicBaseUrl: string, options: ServedArtifactOptions = {}): ServedArtifacts {
  const loopback = options.allowLoopbackWebhooks === true;
  // `{{baseUrl}}/api/v1/...` and `${url}/api/v1/...` must not end up with a double slash.
  const baseUrl = publicBaseUrl.replace(/\/+$/, '');
  const servers = [{ url: baseUrl, description: SERVER_DESCRIPTION }];

  // Every file is read now, so that a missing one still fails start-up.
  const committedJson = readGenerated(api, 'openapi.json');
  const committedYaml = readGenerated(api, 'openapi.yaml');
  const committedCollection = readGenerated(api, 'postman.json');
  const committedEnvironment = readGenerated(api, 'postman-environment.json');
  const changelogJson = readGenerated(api, 'changelog.json');

  /** The committed document with this server's URLs; the JSON text is printed from a copy of its own, which nobody else holds. */
  const documentAsServed = (committed = JSON.parse(committedJson) as Record<string, unknown>) => {
    const document = withMember(committed, 'servers', servers);
    if (loopback) useLoopbackPatterns(document);
    for (const [members, url] of flowUrls) {
      const owner = members.slice(0, -1).reduce<Record<string, unknown>>((node, member) => node[member] as Record<string, unknown>, document);
      owner[members.at(-1)!] = url;
    }
    return document;
  };
  const committedDocument = JSON.parse(committedJson) as Record<string, unknown>;
  const flowUrls = oauthFlowUrls(committedDocument, new URL(baseUrl).origin);
  const document = documentAsServed(committedDocument);
  nameCompiledSchemas(document, createHash('sha256').update(`${api}\u0000${loopback}\u0000`).update(committedJson).digest('base64url'));

  const yamlAsServed = () => {
    const YAML = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    const yamlDocument = YAML.parseDocument(committedYaml);
    yamlDocument.set('servers', yamlDocument.createNode(servers));
    for (const [members, url] of flowUrls) yamlDocument.setIn(members, url);
    if (loopback) {
      YAML.visit(yamlDocument, {
        Map(_, map) {
          const pattern = map.get(LOOPBACK_PATTERN_KEYWORD);
          if (typeof pattern === 'string') map.set('pattern', pattern);
        },
      });
    }
    // The committed text keeps its quotes; the replaced values are quoted by the same rule as the build's.
    return faithfulYaml(YAML, yamlDocument).toString({ lineWidth: 0 });
  };

  // Parsed now, so that a malformed file stops the start; printed on its first download.
  const collection = JSON.parse(committedCollection) as {
    variable?: { key?: string; value?: unknown }[];
    auth?: { type?: string; oauth2?: { key?: string; value?: unknown }[] };
  };
  const collectionOauthUrls = (collection.auth?.oauth2 ?? [])
    .filter((entry) => ['authUrl', 'accessTokenUrl', 'refreshTokenUrl'].includes(String(entry.key)) && typeof entry.value === 'string')
    .map((entry) => ({ entry, url: new URL(entry.value as string) }));
  const environment = JSON.parse(committedEnvironment) as { values?: { key?: string; value?: unknown }[] };

  const collectionAsServed = () => {
    // The collection's OAuth 2.0 endpoints, like the spec's, on this server's origin.
    for (const { entry, url } of collectionOauthUrls) entry.value = `${new URL(baseUrl).origin}${url.pathname}${url.search}`;
    const variables = collection.variable ?? [];
    const baseUrlVariable = variables.find((variable) => variable.key === 'baseUrl');
    if (baseUrlVariable) baseUrlVariable.value = baseUrl;
    else collection.variable = [...variables, { key: 'baseUrl', value: baseUrl }];
    return JSON.stringify(collection, null, 2) + '\n';
  };

  const environmentAsServed = () => {
    for (const value of environment.values ?? []) if (value.key === 'baseUrl') value.value = baseUrl;
    return JSON.stringify(environment, null, 2) + '\n';
  };

  const info = (document.info ?? {}) as { title?: unknown };
  const referencePage = referencePageHtml(String(info.title ?? api), specPathOf(document));
  const texts: { json?: string; yaml?: string; collection?: string; environment?: string } = {};
  return {
    get openapiJson() {
      return (texts.json ??= JSON.stringify(documentAsServed(), null, 2) + '\n');
    },
    get openapiYaml() {
      return (texts.yaml ??= yamlAsServed());
    },
    get postmanJson() {
      return (texts.collection ??= collectionAsServed());
    },
    get postmanEnvironmentJson() {
      return (texts.environment ??= environmentAsServed());
    },
    changelogJson,
    referencePageHtml: referencePage,
    document,
  };
}

/** The path the API serves its openapi.json at (the operation `getOpenapiJson`). */
function specPathOf(document: Record<string, unknown>): string {
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, { get?: { operationId?: string } }>)) {
    if (item.get?.operationId === 'getOpenapiJson') return path;
  }
  throw new Error('the document has no getOpenapiJson operation for its reference page to read');
}

/** The downloads change only with a deployment; five minutes of caching is safe. */
export const PUBLIC_DOWNLOAD_CACHE = 'public, max-age=300';

/** The answer of every API's `getReferencePage`: the page, cacheable like the downloads, under the page's policy. */
export function referencePageReply(html: string): { status: 200; headers: Record<string, string>; body: string } {
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': PUBLIC_DOWNLOAD_CACHE,
      'content-security-policy': REFERENCE_PAGE_POLICY,
      'x-content-type-options': 'nosniff',
    },
    body: html,
  };
}
