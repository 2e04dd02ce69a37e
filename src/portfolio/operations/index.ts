import type { PortfolioHandlers } from '../operationContext.js';
import { getAwards } from './getAwards.js';
import { getEducation } from './getEducation.js';
import { getExperience } from './getExperience.js';
import { getLinks } from './getLinks.js';
import { getOpenapiJson } from './getOpenapiJson.js';
import { getOpenapiYaml } from './getOpenapiYaml.js';
import { getOutcomes } from './getOutcomes.js';
import { getOutcomesBySlug } from './getOutcomesBySlug.js';
import { getPages } from './getPages.js';
import { getPagesBySlug } from './getPagesBySlug.js';
import { getPortfolio } from './getPortfolio.js';
import { getPostmanJson } from './getPostmanJson.js';
import { getPosts } from './getPosts.js';
import { getPostsBySlug } from './getPostsBySlug.js';
import { getProfile } from './getProfile.js';
import { getSkills } from './getSkills.js';
import { getStats } from './getStats.js';
import { getTestimonials } from './getTestimonials.js';

/** Handlers by operationId; start-up refuses a contract operation that has none. */
export const portfolioOperations: PortfolioHandlers = {
  getPortfolio,
  getProfile,
  getOutcomes,
  getOutcomesBySlug,
  getPosts,
  getPostsBySlug,
  getPages,
  getPagesBySlug,
  getExperience,
  getSkills,
  getStats,
  getAwards,
  getEducation,
  getTestimonials,
  getLinks,
  getOpenapiJson,
  getOpenapiYaml,
  getPostmanJson,
};
