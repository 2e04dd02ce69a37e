import { REFERENCE_PAGE_POLICY } from '../../contract/referencePage.js';
import { PUBLIC_DOWNLOAD_CACHE } from '../../contract/servedArtifacts.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getReferencePage: WorkPlatformHandler<'getReferencePage'> = (ctx) => ({
  status: 200,
  headers: {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': PUBLIC_DOWNLOAD_CACHE,
    'content-security-policy': REFERENCE_PAGE_POLICY,
    'x-content-type-options': 'nosniff',
  },
  body: ctx.services.downloads.referencePageHtml,
});
