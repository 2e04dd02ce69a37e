import { publishedBySlug } from './publishedBySlug.js';

export const getOutcomesBySlug = publishedBySlug<'getOutcomesBySlug'>('outcome');
