import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getOpenapiYaml: WorkPlatformHandler<'getOpenapiYaml'> = (ctx) => ({
  status: 200,
  headers: { 'content-type': 'application/yaml; charset=utf-8', 'cache-control': PUBLIC_DOWNLOAD_CACHE },
  body: ctx.services.downloads.openapiYaml,
});
