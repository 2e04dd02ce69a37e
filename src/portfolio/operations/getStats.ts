import { listPublished } from './listPublished.js';

export const getStats = listPublished('stat');
