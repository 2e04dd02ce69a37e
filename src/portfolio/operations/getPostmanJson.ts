import type { PortfolioHandler } from '../operationContext.js';
import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';

export const getPostmanJson: PortfolioHandler<'getPostmanJson'> = (ctx) => ({
  status: 200,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': PUBLIC_DOWNLOAD_CACHE,
    'content-disposition': 'inline; filename="portfolio.postman_collection.json"',
  },
  body: ctx.services.downloads.postmanJson,
});
