// GET /: a small JSON index of what this server serves, on its public base URL: each API (title
// and version as its served document says), its reference page and downloads (the operations its
// contract tags `Downloads`), and the health probes. Outside both APIs' prefixes and contracts,
// like the probes (docs/operations.md, "Health and drain").
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIVENESS_PATH, READINESS_PATH } from './healthEndpoints.js';
import type { MountedHandler } from './httpAdapter.js';

/** What the index says of one API. */
export interface IndexedApi {
  /** The served document (openapi.json as served). */
  document: object;
  /** Where the API's paths begin, e.g. `/v1`. */
  pathPrefix: string;
}

interface OperationObject {
  tags?: string[];
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/** Index lines change only with a deploy; a minute of caching spares nothing worth more. */
const INDEX_CACHE = 'public, max-age=60';

function describeApi({ document, pathPrefix }: IndexedApi, publicBaseUrl: string) {
  const { info, paths } = document as { info?: { title?: string; version?: string }; paths?: Record<string, { get?: OperationObject }> };
  const downloads: Record<string, string> = {};
  let docs: string | undefined;
  for (const [path, item] of Object.entries(paths ?? {})) {
    const get = item.get;
    if (!get?.tags?.includes('Downloads')) continue;
    if (get.responses?.['200']?.content?.['text/html']) docs = `${publicBaseUrl}${path}`;
    else downloads[path.slice(path.lastIndexOf('/') + 1)] = `${publicBaseUrl}${path}`;
  }
  return { title: info?.title ?? '', version: info?.version ?? '', baseUrl: `${publicBaseUrl}${pathPrefix}`, docs: docs ?? null, downloads };
}

export function createRootIndex(apis: IndexedApi[], publicBaseUrl: string): MountedHandler {
  const body = Buffer.from(
    JSON.stringify({
      apis: apis.map((api) => describeApi(api, publicBaseUrl)),
      health: { livez: `${publicBaseUrl}${LIVENESS_PATH}`, readyz: `${publicBaseUrl}${READINESS_PATH}` },
    }),
  );
  return {
    owns: (path) => path === '/',
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { 'x-request-id': requestId, allow: 'GET, HEAD', 'content-length': '0' }).end();
        return;
      }
      res.writeHead(200, {
        'x-request-id': requestId,
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(body.length),
        'cache-control': INDEX_CACHE,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
  };
}
