import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getAwards: PortfolioHandler<'getAwards'> = listPublished('award');
