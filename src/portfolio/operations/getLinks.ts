import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getLinks: PortfolioHandler<'getLinks'> = listPublished('link');
