import { listPublished } from './listPublished.js';

export const getExperience = listPublished<'getExperience'>('experience');
