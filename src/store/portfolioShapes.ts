// The API's response shapes, taken from the contract (generated/portfolio/types.ts), named once
// for the store: rendered_json, summary_json and document_json hold exactly these objects.
import type { components } from '../../generated/portfolio/types.js';
import type { PortfolioItemKind } from '../../db/schema.js';

type Schemas = components['schemas'];

export type Asset = Schemas['Asset'];
export type PortfolioResponse = Schemas['PortfolioResponse'];
export type ProfileItem = Schemas['ProfileItem'];
export type OutcomeItem = Schemas['OutcomeItem'];
export type PostItem = Schemas['PostItem'];
export type PageItem = Schemas['PageItem'];
export type PageSummary = Schemas['PageSummary'];
export type PageBlock = Schemas['PageBlock'];
export type ExperienceEntry = Schemas['ExperienceEntry'];
export type Skill = Schemas['Skill'];
export type Stat = Schemas['Stat'];
export type Award = Schemas['Award'];
export type Credential = Schemas['Credential'];
export type Testimonial = Schemas['Testimonial'];
export type Link = Schemas['Link'];

/** What each kind's list operation returns per item (pages are listed without their blocks). */
export interface ListedItemByKind {
  outcome: OutcomeItem;
  post: PostItem;
  page: PageSummary;
  experience: ExperienceEntry;
  skill: Skill;
  stat: Stat;
  award: Award;
  credential: Credential;
  testimonial: Testimonial;
  link: Link;
}

/** Kinds addressed by slug, and what their single-item operation returns. */
export interface SlugItemByKind {
  outcome: OutcomeItem;
  post: PostItem;
  page: PageItem;
}
export type SlugKind = keyof SlugItemByKind;

export type { PortfolioItemKind };
