import { referencePageReply } from '../../contract/servedArtifacts.js';
import type { PortfolioHandler } from '../operationContext.js';

export const getReferencePage: PortfolioHandler<'getReferencePage'> = (ctx) => referencePageReply(ctx.services.downloads.referencePageHtml);
