// The scripts of the HTML reference pages, served from this origin so the pages work offline and
// under a strict Content-Security-Policy: the Redoc standalone bundle (a dependency, read once, on
// its first request) and the few lines that start it on the page's element.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REFERENCE_INIT_PATH, REFERENCE_RENDERER_PATH } from '../contract/referencePage.js';
import type { MountedHandler } from './httpAdapter.js';
import { NARROW_FOR_REFERENCE_SOURCE } from './referenceNarrowing.js';

/**
 * Renders the spec named by the element's `data-spec`, narrowed for the renderer (referenceNarrowing.ts); its download
 * button offers the served document itself. Marks the body when done, so a browser test knows when to look.
 */
const INIT_SCRIPT = `(function () {
  ${NARROW_FOR_REFERENCE_SOURCE.replace(/\n/g, '\n  ')}
  var element = document.getElementById('reference');
  var specUrl = element.getAttribute('data-spec');
  var options = { hideHostname: false, sortPropsAlphabetically: false, jsonSampleExpandLevel: 2, downloadDefinitionUrl: specUrl };
  var rendered = function (error) {
    document.body.setAttribute('data-rendered', error ? 'failed' : 'true');
  };
  fetch(specUrl, { headers: { accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error(specUrl + ' answered ' + response.status);
      return response.json();
    })
    .then(function (spec) {
      Redoc.init(narrowForReference(spec), options, element, rendered);
    })
    .catch(function (error) {
      console.error(error);
      rendered(error);
    });
})();
`;

/** The bundle changes only with the installed package; a day of caching is safe. */
const ASSET_CACHE = 'public, max-age=86400';

interface Asset {
  body: Buffer;
  etag: string;
}

function asset(body: Buffer): Asset {
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function constant(served: ServedAsset): () => ServedAsset {
  return () => served;
}

/** `If-None-Match` names this tag (a list, weak tags and `*` included: RFC 9110 §13.1.2 compares weakly). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/** The one address outside this server the renderer loads by itself (the logo beside its attribution link), and where it is served here instead. */
const RENDERER_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOCAL_LOGO_PATH = '/assets/redoc-logo.svg';
const LOCAL_LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12" viewBox="0 0 12 12"><circle cx="6" cy="6" r="5" fill="#e5534b"/></svg>\n';

/** The bundle with its logo loaded from this origin: offline, and within the page's img-src 'self'. */
function rendererBundle(source: string): string {
  const parts = source.split(RENDERER_LOGO_URL);
  if (parts.length !== 2) throw new Error(`the reference renderer names ${RENDERER_LOGO_URL} ${parts.length - 1} times, not once: check src/http/referenceAssets.ts against the installed redoc`);
  return parts.join(LOCAL_LOGO_PATH);
}

type ServedAsset = Asset & { contentType: string };

export function createReferenceAssets(): MountedHandler {
  // Found now, so that a missing package fails start-up; read (1 MB) when a browser first asks for it.
  const bundlePath = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  let renderer: ServedAsset | undefined;
  const assets = new Map<string, () => ServedAsset>([
    [REFERENCE_RENDERER_PATH, () => (renderer ??= { ...asset(Buffer.from(rendererBundle(fs.readFileSync(bundlePath, 'utf8')))), contentType: 'text/javascript; charset=utf-8' })],
    [REFERENCE_INIT_PATH, constant({ ...asset(Buffer.from(INIT_SCRIPT)), contentType: 'text/javascript; charset=utf-8' })],
    [LOCAL_LOGO_PATH, constant({ ...asset(Buffer.from(LOCAL_LOGO)), contentType: 'image/svg+xml' })],
  ]);
  return {
    owns: (path) => assets.has(path),
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string) {
      const found = assets.get(req.url!.split('?')[0]!)!();
      const headers = { 'x-request-id': requestId, 'x-content-type-options': 'nosniff' };
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { ...headers, allow: 'GET, HEAD', 'content-length': '0' }).end();
        return;
      }
      if (matches(req.headers['if-none-match'], found.etag)) {
        res.writeHead(304, { ...headers, etag: found.etag, 'cache-control': ASSET_CACHE }).end();
        return;
      }
      res.writeHead(200, {
        ...headers,
        'content-type': found.contentType,
        'content-length': String(found.body.length),
        'cache-control': ASSET_CACHE,
        etag: found.etag,
      });
      res.end(req.method === 'HEAD' ? undefined : found.body);
    },
  };
}
