import { referencePageReply } from '../../contract/servedArtifacts.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getReferencePage: WorkPlatformHandler<'getReferencePage'> = (ctx) => referencePageReply(ctx.services.downloads.referencePageHtml);
