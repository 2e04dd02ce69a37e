import { listPublished } from './listPublished.js';

export const getSkills = listPublished<'getSkills'>('skill');
