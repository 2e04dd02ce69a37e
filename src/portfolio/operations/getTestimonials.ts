import { listPublished } from './listPublished.js';

export const getTestimonials = listPublished<'getTestimonials'>('testimonial');
