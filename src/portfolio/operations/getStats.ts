import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getStats: PortfolioHandler<'getStats'> = listPublished('stat');
