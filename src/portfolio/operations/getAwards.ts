import { listPublished } from './listPublished.js';

export const getAwards = listPublished<'getAwards'>('award');
