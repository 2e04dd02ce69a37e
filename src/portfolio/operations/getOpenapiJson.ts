import type { PortfolioHandler } from '../operationContext.js';
import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';

export const getOpenapiJson: PortfolioHandler<'getOpenapiJson'> = (ctx) => ({
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': PUBLIC_DOWNLOAD_CACHE },
  body: ctx.services.downloads.openapiJson,
});
