import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getOutcomes: PortfolioHandler<'getOutcomes'> = listPublished('outcome');
