import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getChangelogJson: WorkPlatformHandler<'getChangelogJson'> = (ctx) => ({
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': PUBLIC_DOWNLOAD_CACHE },
  body: ctx.services.downloads.changelogJson,
});
