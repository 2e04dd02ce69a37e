import type { PortfolioHandler } from '../operationContext.js';
import { publishedBySlug } from '../publishedBySlug.js';

export const getPostsBySlug: PortfolioHandler<'getPostsBySlug'> = publishedBySlug('post');
