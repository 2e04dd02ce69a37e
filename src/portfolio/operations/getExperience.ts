import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getExperience: PortfolioHandler<'getExperience'> = listPublished('experience');
