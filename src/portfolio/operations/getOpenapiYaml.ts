import type { PortfolioHandler } from '../operationContext.js';
import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';

export const getOpenapiYaml: PortfolioHandler<'getOpenapiYaml'> = (ctx) => ({
  status: 200,
  headers: { 'content-type': 'application/yaml; charset=utf-8', 'cache-control': PUBLIC_DOWNLOAD_CACHE },
  body: ctx.services.downloads.openapiYaml,
});
