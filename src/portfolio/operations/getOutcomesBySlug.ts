import type { PortfolioHandler } from '../operationContext.js';
import { publishedBySlug } from '../publishedBySlug.js';

export const getOutcomesBySlug: PortfolioHandler<'getOutcomesBySlug'> = publishedBySlug('outcome');
