import { listPublished } from './listPublished.js';

export const getOutcomes = listPublished<'getOutcomes'>('outcome');
