import type { PortfolioHandler } from '../operationContext.js';
import { publishedBySlug } from '../publishedBySlug.js';

export const getPagesBySlug: PortfolioHandler<'getPagesBySlug'> = publishedBySlug('page');
