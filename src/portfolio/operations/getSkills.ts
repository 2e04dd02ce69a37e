import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getSkills: PortfolioHandler<'getSkills'> = listPublished('skill');
